;; Functional checks of the `externref` buffer functions of `wrt_v1` (docs/abi.md, "Buffers as
;; `externref`"). Exits 0 when every check passes, or with the number of the first failing check
;; (and "check N: got G, want W" on stderr):
;;     1: ref_from: 16 bytes give a buffer
;;     2: ref_len: 16
;;     3: ref_read: all 16 bytes
;;     4: ref_read: round trip gives the bytes of ref_from
;;     5: ref_read: a length past the end reads the rest
;;     6: ref_read: the rest is `abcdef`
;;     7: ref_read: offset at the end reads 0 bytes
;;     8: ref_read: offset past the end
;;     9: ref_read: offset 4 GiB - 1
;;    10: ref_read: destination at the end of memory
;;    11: ref_read: destination wraps around
;;    12: ref_read: destination crosses the end of memory, though only 4 bytes would be copied
;;    13: ref_write: 4 bytes at offset 4
;;    14: ref_write: the bytes arrived (`0123WXYZ89abcdef`)
;;    15: ref_write: the bytes after them are untouched
;;    16: ref_write: range past the end
;;    17: ref_write: a range past the end writes nothing
;;    18: ref_write: offset+len wraps 32 bits
;;    19: ref_write: empty range past the end
;;    20: ref_write: empty range at the end
;;    21: ref_write: source at the end of memory
;;    22: ref_write: source wraps around
;;    23: ref_from: a copy, not a view of linear memory
;;    24: ref_alloc: 32 bytes
;;    25: ref_len: 32
;;    26: ref_read: all 32 bytes of it
;;    27: ref_alloc: the bytes are zero
;;    28: ref_alloc: 0 bytes
;;    29: ref_len: 0 for it
;;    30: ref_alloc: 1 GiB + 1 bytes gives null
;;    31: last_error: the null has a message
;;    32: ref_alloc: 4 GiB - 1 bytes gives null
;;    33: ref_from: range at the end of memory gives null
;;    34: ref_from: ptr+len wrapping gives null
;;    35: ref_from: range longer than memory gives null
;;    36: ref_from: length 4 GiB - 1 gives null
;;    37: ref_from: an empty range gives an empty buffer
;;    38: ref_len: null
;;    39: ref_read: null
;;    40: ref_write: null
;;    41: ref_copy: null destination
;;    42: ref_copy: null source
;;    43: ref_copy: both null
;;    44: ref_read: null, with a bad range too
;;    45: ref_copy: 16 bytes into 32 at offset 8
;;    46: ref_copy: bytes before the offset untouched
;;    47: ref_copy: the source's bytes at the offset
;;    48: ref_copy: bytes after them untouched
;;    49: ref_copy: does not fit (17 + 16 > 32)
;;    50: ref_copy: one that does not fit writes nothing
;;    51: ref_copy: offset past the end
;;    52: ref_copy: offset 4 GiB - 1
;;    53: ref_copy: a source longer than the destination
;;    54: ref_copy: an empty source at the end
;;    55: ref_copy: a buffer onto itself
;;    56: ref_copy: onto itself leaves the bytes as they were
;;    57: ref_copy: onto itself at offset 1 does not fit
;;    58: ref_copy: an empty buffer at the end of another
;;    59: ref_read: OUT_OF_RANGE once more, for last_error
;;    60: last_error: OUT_OF_RANGE leaves a message
;;    61: ref_alloc: 100 MiB of garbage, 1 MiB at a time, never null
;;    62: a buffer in a local survives the collections
;;    63: a buffer in a global survives them
;;    64: a buffer in a table survives them
;;    65: ref_len: still 32 after them
(module
  (import "wrt_v1" "ref_from" (func $ref_from (param i32 i32) (result externref)))
  (import "wrt_v1" "ref_alloc" (func $ref_alloc (param i32) (result externref)))
  (import "wrt_v1" "ref_len" (func $ref_len (param externref) (result i32)))
  (import "wrt_v1" "ref_read" (func $ref_read (param externref i32 i32 i32) (result i32)))
  (import "wrt_v1" "ref_write" (func $ref_write (param externref i32 i32 i32) (result i32)))
  (import "wrt_v1" "ref_copy" (func $ref_copy (param externref i32 externref) (result i32)))
  (import "wrt_v1" "last_error" (func $last_error (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  ;; Layout: 2048 SRC (16 bytes) and small strings; 4096 the read area; 60400 diagnostics.
  (memory (export "memory") 1)
  (data (i32.const 2048) "0123456789abcdef")
  (data (i32.const 2064) "WXYZ")
  (data (i32.const 5000) "externref buffers ok\0a")
  (global $kept (mut externref) (ref.null extern))
  (table $table 1 externref)
  ;; Diagnostics: a failed check writes "check N: got G, want W" to stderr and exits with N.
  (data (i32.const 60416) "check ")
  (data (i32.const 60424) ": got ")
  (data (i32.const 60432) ", want ")
  (func $put (param $p i32) (param $src i32) (param $len i32) (result i32)
    (memory.copy (local.get $p) (local.get $src) (local.get $len))
    (i32.add (local.get $p) (local.get $len)))
  (func $put_int (param $p i32) (param $v i32) (result i32)
    (local $u i32) (local $lo i32) (local $hi i32) (local $t i32)
    (local.set $u (local.get $v))
    (if (i32.lt_s (local.get $v) (i32.const 0))
      (then
        (i32.store8 (local.get $p) (i32.const 45))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $u (i32.sub (i32.const 0) (local.get $v)))))
    (local.set $lo (local.get $p))
    (loop $digits
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $u) (i32.const 10))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (local.set $u (i32.div_u (local.get $u) (i32.const 10)))
      (br_if $digits (local.get $u)))
    (local.set $hi (i32.sub (local.get $p) (i32.const 1)))
    (block $done
      (loop $reverse
        (br_if $done (i32.ge_u (local.get $lo) (local.get $hi)))
        (local.set $t (i32.load8_u (local.get $lo)))
        (i32.store8 (local.get $lo) (i32.load8_u (local.get $hi)))
        (i32.store8 (local.get $hi) (local.get $t))
        (local.set $lo (i32.add (local.get $lo) (i32.const 1)))
        (local.set $hi (i32.sub (local.get $hi) (i32.const 1)))
        (br $reverse)))
    (local.get $p))
  (func $fail (param $case i32) (param $got i32) (param $want i32)
    (local $p i32)
    (local.set $p (call $put (i32.const 60480) (i32.const 60416) (i32.const 6)))
    (local.set $p (call $put_int (local.get $p) (local.get $case)))
    (local.set $p (call $put (local.get $p) (i32.const 60424) (i32.const 6)))
    (local.set $p (call $put_int (local.get $p) (local.get $got)))
    (local.set $p (call $put (local.get $p) (i32.const 60432) (i32.const 7)))
    (local.set $p (call $put_int (local.get $p) (local.get $want)))
    (i32.store8 (local.get $p) (i32.const 10))
    (i32.store (i32.const 60400) (i32.const 60480))
    (i32.store (i32.const 60404) (i32.sub (i32.add (local.get $p) (i32.const 1)) (i32.const 60480)))
    (drop (call $fd_write (i32.const 2) (i32.const 60400) (i32.const 1) (i32.const 60408)))
    (call $exit (local.get $case)))
  (func $check (param $got i32) (param $want i32) (param $case i32)
    (if (i32.ne (local.get $got) (local.get $want))
      (then (call $fail (local.get $case) (local.get $got) (local.get $want)))))
  ;; 1 when `len` bytes at `a` and `b` are equal.
  (func $eq (param $a i32) (param $b i32) (param $len i32) (result i32)
    (block $differ
      (loop $bytes
        (if (i32.eqz (local.get $len)) (then (return (i32.const 1))))
        (br_if $differ (i32.ne (i32.load8_u (local.get $a)) (i32.load8_u (local.get $b))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $bytes)))
    (i32.const 0))
  ;; 1 when the `len` bytes at `p` all equal `byte`.
  (func $all (param $p i32) (param $len i32) (param $byte i32) (result i32)
    (block $differ
      (loop $bytes
        (if (i32.eqz (local.get $len)) (then (return (i32.const 1))))
        (br_if $differ (i32.ne (i32.load8_u (local.get $p)) (local.get $byte)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $bytes)))
    (i32.const 0))
  ;; Fills the read area (4096, 256 bytes) with 0xee, so a read that copied nothing shows.
  (func $scrub (memory.fill (i32.const 4096) (i32.const 0xee) (i32.const 256)))
  ;; Allocates `n` buffers of 1 MiB and drops them at once: the host's collections run meanwhile.
  ;; Returns 0, or the iteration whose ref_alloc returned null, plus 1.
  (func $churn (param $n i32) (result i32)
    (local $i i32) (local $r externref)
    (loop $more
      (local.set $r (call $ref_alloc (i32.const 0x100000)))
      (if (ref.is_null (local.get $r)) (then (return (i32.add (local.get $i) (i32.const 1)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $more (i32.lt_u (local.get $i) (local.get $n))))
    (i32.const 0))
  ;; 1 when `r` holds the 16 bytes of SRC.
  (func $holds_src (param $r externref) (result i32)
    (call $scrub)
    (if (i32.ne (call $ref_read (local.get $r) (i32.const 0) (i32.const 4096) (i32.const 16)) (i32.const 16))
      (then (return (i32.const 0))))
    (call $eq (i32.const 4096) (i32.const 2048) (i32.const 16)))
  ;; Puts a buffer with the bytes of SRC in the global and in the table; no local keeps it.
  (func $keep
    (global.set $kept (call $ref_from (i32.const 2048) (i32.const 16)))
    (table.set $table (i32.const 0) (call $ref_from (i32.const 2048) (i32.const 16))))
  (func (export "_start")
    (local $a externref) (local $z externref) (local $e externref) (local $n externref)
    (local.set $a (call $ref_from (i32.const 2048) (i32.const 16)))
    (call $check (ref.is_null (local.get $a)) (i32.const 0) (i32.const 1)) ;; ref_from: 16 bytes give a buffer
    (call $check (call $ref_len (local.get $a)) (i32.const 16) (i32.const 2)) ;; ref_len: 16
    (call $scrub)
    (call $check (call $ref_read (local.get $a) (i32.const 0) (i32.const 4096) (i32.const 16)) (i32.const 16) (i32.const 3)) ;; ref_read: all 16 bytes
    (call $check (call $eq (i32.const 4096) (i32.const 2048) (i32.const 16)) (i32.const 1) (i32.const 4)) ;; ref_read: round trip gives the bytes of ref_from
    (call $scrub)
    (call $check (call $ref_read (local.get $a) (i32.const 10) (i32.const 4096) (i32.const 100)) (i32.const 6) (i32.const 5)) ;; ref_read: a length past the end reads the rest
    (call $check (call $eq (i32.const 4096) (i32.const 2058) (i32.const 6)) (i32.const 1) (i32.const 6)) ;; ref_read: the rest is `abcdef`
    (call $check (call $ref_read (local.get $a) (i32.const 16) (i32.const 4096) (i32.const 8)) (i32.const 0) (i32.const 7)) ;; ref_read: offset at the end reads 0 bytes
    (call $check (call $ref_read (local.get $a) (i32.const 17) (i32.const 4096) (i32.const 1)) (i32.const -17) (i32.const 8)) ;; ref_read: offset past the end
    (call $check (call $ref_read (local.get $a) (i32.const -1) (i32.const 4096) (i32.const 1)) (i32.const -17) (i32.const 9)) ;; ref_read: offset 4 GiB - 1
    (call $check (call $ref_read (local.get $a) (i32.const 0) (i32.const 65536) (i32.const 1)) (i32.const -12) (i32.const 10)) ;; ref_read: destination at the end of memory
    (call $check (call $ref_read (local.get $a) (i32.const 0) (i32.const -8) (i32.const 16)) (i32.const -12) (i32.const 11)) ;; ref_read: destination wraps around
    (call $check (call $ref_read (local.get $a) (i32.const 12) (i32.const 65530) (i32.const 16)) (i32.const -12) (i32.const 12)) ;; ref_read: destination crosses the end of memory, though only 4 bytes would be copied
    (call $check (call $ref_write (local.get $a) (i32.const 4) (i32.const 2064) (i32.const 4)) (i32.const 4) (i32.const 13)) ;; ref_write: 4 bytes at offset 4
    (call $scrub)
    (drop (call $ref_read (local.get $a) (i32.const 0) (i32.const 4096) (i32.const 16)))
    (call $check (call $eq (i32.const 4100) (i32.const 2064) (i32.const 4)) (i32.const 1) (i32.const 14)) ;; ref_write: the bytes arrived (`0123WXYZ89abcdef`)
    (call $check (call $eq (i32.const 4104) (i32.const 2056) (i32.const 8)) (i32.const 1) (i32.const 15)) ;; ref_write: the bytes after them are untouched
    (call $check (call $ref_write (local.get $a) (i32.const 14) (i32.const 2048) (i32.const 4)) (i32.const -17) (i32.const 16)) ;; ref_write: range past the end
    (call $scrub)
    (drop (call $ref_read (local.get $a) (i32.const 12) (i32.const 4096) (i32.const 4)))
    (call $check (call $eq (i32.const 4096) (i32.const 2060) (i32.const 4)) (i32.const 1) (i32.const 17)) ;; ref_write: a range past the end writes nothing
    (call $check (call $ref_write (local.get $a) (i32.const -1) (i32.const 2048) (i32.const 2)) (i32.const -17) (i32.const 18)) ;; ref_write: offset+len wraps 32 bits
    (call $check (call $ref_write (local.get $a) (i32.const 17) (i32.const 2048) (i32.const 0)) (i32.const -17) (i32.const 19)) ;; ref_write: empty range past the end
    (call $check (call $ref_write (local.get $a) (i32.const 16) (i32.const 2048) (i32.const 0)) (i32.const 0) (i32.const 20)) ;; ref_write: empty range at the end
    (call $check (call $ref_write (local.get $a) (i32.const 0) (i32.const 65536) (i32.const 1)) (i32.const -12) (i32.const 21)) ;; ref_write: source at the end of memory
    (call $check (call $ref_write (local.get $a) (i32.const 0) (i32.const -8) (i32.const 16)) (i32.const -12) (i32.const 22)) ;; ref_write: source wraps around
    (drop (call $ref_write (local.get $a) (i32.const 0) (i32.const 2048) (i32.const 16)))
    (memory.fill (i32.const 2560) (i32.const 0x55) (i32.const 16))
    (local.set $n (call $ref_from (i32.const 2560) (i32.const 16)))
    (memory.fill (i32.const 2560) (i32.const 0) (i32.const 16))
    (call $scrub)
    (drop (call $ref_read (local.get $n) (i32.const 0) (i32.const 4096) (i32.const 16)))
    (call $check (call $all (i32.const 4096) (i32.const 16) (i32.const 0x55)) (i32.const 1) (i32.const 23)) ;; ref_from: a copy, not a view of linear memory
    ;; ref_alloc
    (local.set $z (call $ref_alloc (i32.const 32)))
    (call $check (ref.is_null (local.get $z)) (i32.const 0) (i32.const 24)) ;; ref_alloc: 32 bytes
    (call $check (call $ref_len (local.get $z)) (i32.const 32) (i32.const 25)) ;; ref_len: 32
    (call $scrub)
    (call $check (call $ref_read (local.get $z) (i32.const 0) (i32.const 4096) (i32.const 32)) (i32.const 32) (i32.const 26)) ;; ref_read: all 32 bytes of it
    (call $check (call $all (i32.const 4096) (i32.const 32) (i32.const 0)) (i32.const 1) (i32.const 27)) ;; ref_alloc: the bytes are zero
    (local.set $e (call $ref_alloc (i32.const 0)))
    (call $check (ref.is_null (local.get $e)) (i32.const 0) (i32.const 28)) ;; ref_alloc: 0 bytes
    (call $check (call $ref_len (local.get $e)) (i32.const 0) (i32.const 29)) ;; ref_len: 0 for it
    (call $check (ref.is_null (call $ref_alloc (i32.const 0x40000001))) (i32.const 1) (i32.const 30)) ;; ref_alloc: 1 GiB + 1 bytes gives null
    (call $check (i32.gt_s (call $last_error (i32.const 0) (i32.const 0)) (i32.const 0)) (i32.const 1) (i32.const 31)) ;; last_error: the null has a message
    (call $check (ref.is_null (call $ref_alloc (i32.const -1))) (i32.const 1) (i32.const 32)) ;; ref_alloc: 4 GiB - 1 bytes gives null
    (call $check (ref.is_null (call $ref_from (i32.const 65536) (i32.const 1))) (i32.const 1) (i32.const 33)) ;; ref_from: range at the end of memory gives null
    (call $check (ref.is_null (call $ref_from (i32.const -16) (i32.const 32))) (i32.const 1) (i32.const 34)) ;; ref_from: ptr+len wrapping gives null
    (call $check (ref.is_null (call $ref_from (i32.const 0) (i32.const 65537))) (i32.const 1) (i32.const 35)) ;; ref_from: range longer than memory gives null
    (call $check (ref.is_null (call $ref_from (i32.const 0) (i32.const -1))) (i32.const 1) (i32.const 36)) ;; ref_from: length 4 GiB - 1 gives null
    (call $check (call $ref_len (call $ref_from (i32.const 0) (i32.const 0))) (i32.const 0) (i32.const 37)) ;; ref_from: an empty range gives an empty buffer
    ;; Null references
    (call $check (call $ref_len (ref.null extern)) (i32.const -8) (i32.const 38)) ;; ref_len: null
    (call $check (call $ref_read (ref.null extern) (i32.const 0) (i32.const 4096) (i32.const 1)) (i32.const -8) (i32.const 39)) ;; ref_read: null
    (call $check (call $ref_write (ref.null extern) (i32.const 0) (i32.const 2048) (i32.const 1)) (i32.const -8) (i32.const 40)) ;; ref_write: null
    (call $check (call $ref_copy (ref.null extern) (i32.const 0) (local.get $a)) (i32.const -8) (i32.const 41)) ;; ref_copy: null destination
    (call $check (call $ref_copy (local.get $z) (i32.const 0) (ref.null extern)) (i32.const -8) (i32.const 42)) ;; ref_copy: null source
    (call $check (call $ref_copy (ref.null extern) (i32.const 0) (ref.null extern)) (i32.const -8) (i32.const 43)) ;; ref_copy: both null
    (call $check (call $ref_read (ref.null extern) (i32.const 0) (i32.const 65536) (i32.const 1)) (i32.const -8) (i32.const 44)) ;; ref_read: null, with a bad range too
    ;; ref_copy
    (call $check (call $ref_copy (local.get $z) (i32.const 8) (local.get $a)) (i32.const 16) (i32.const 45)) ;; ref_copy: 16 bytes into 32 at offset 8
    (call $scrub)
    (drop (call $ref_read (local.get $z) (i32.const 0) (i32.const 4096) (i32.const 32)))
    (call $check (call $all (i32.const 4096) (i32.const 8) (i32.const 0)) (i32.const 1) (i32.const 46)) ;; ref_copy: bytes before the offset untouched
    (call $check (call $eq (i32.const 4104) (i32.const 2048) (i32.const 16)) (i32.const 1) (i32.const 47)) ;; ref_copy: the source's bytes at the offset
    (call $check (call $all (i32.const 4120) (i32.const 8) (i32.const 0)) (i32.const 1) (i32.const 48)) ;; ref_copy: bytes after them untouched
    (call $check (call $ref_copy (local.get $z) (i32.const 17) (local.get $a)) (i32.const -17) (i32.const 49)) ;; ref_copy: does not fit (17 + 16 > 32)
    (call $scrub)
    (drop (call $ref_read (local.get $z) (i32.const 0) (i32.const 4096) (i32.const 32)))
    (call $check (call $all (i32.const 4120) (i32.const 8) (i32.const 0)) (i32.const 1) (i32.const 50)) ;; ref_copy: one that does not fit writes nothing
    (call $check (call $ref_copy (local.get $z) (i32.const 33) (local.get $e)) (i32.const -17) (i32.const 51)) ;; ref_copy: offset past the end
    (call $check (call $ref_copy (local.get $z) (i32.const -1) (local.get $a)) (i32.const -17) (i32.const 52)) ;; ref_copy: offset 4 GiB - 1
    (call $check (call $ref_copy (local.get $a) (i32.const 0) (local.get $z)) (i32.const -17) (i32.const 53)) ;; ref_copy: a source longer than the destination
    (call $check (call $ref_copy (local.get $z) (i32.const 32) (local.get $e)) (i32.const 0) (i32.const 54)) ;; ref_copy: an empty source at the end
    (call $check (call $ref_copy (local.get $z) (i32.const 0) (local.get $z)) (i32.const 32) (i32.const 55)) ;; ref_copy: a buffer onto itself
    (call $scrub)
    (drop (call $ref_read (local.get $z) (i32.const 0) (i32.const 4096) (i32.const 32)))
    (call $check (call $eq (i32.const 4104) (i32.const 2048) (i32.const 16)) (i32.const 1) (i32.const 56)) ;; ref_copy: onto itself leaves the bytes as they were
    (call $check (call $ref_copy (local.get $z) (i32.const 1) (local.get $z)) (i32.const -17) (i32.const 57)) ;; ref_copy: onto itself at offset 1 does not fit
    (call $check (call $ref_copy (local.get $a) (i32.const 16) (local.get $e)) (i32.const 0) (i32.const 58)) ;; ref_copy: an empty buffer at the end of another
    (call $check (call $ref_read (local.get $a) (i32.const 99) (i32.const 4096) (i32.const 1)) (i32.const -17) (i32.const 59)) ;; ref_read: OUT_OF_RANGE once more, for last_error
    (call $check (i32.gt_s (call $last_error (i32.const 6144) (i32.const 256)) (i32.const 0)) (i32.const 1) (i32.const 60)) ;; last_error: OUT_OF_RANGE leaves a message
    ;; Collections: buffers reachable from a local, a global and a table survive them
    (call $keep)
    (call $check (call $churn (i32.const 100)) (i32.const 0) (i32.const 61)) ;; ref_alloc: 100 MiB of garbage, 1 MiB at a time, never null
    (call $check (call $holds_src (local.get $a)) (i32.const 1) (i32.const 62)) ;; a buffer in a local survives the collections
    (call $check (call $holds_src (global.get $kept)) (i32.const 1) (i32.const 63)) ;; a buffer in a global survives them
    (call $check (call $holds_src (table.get $table (i32.const 0))) (i32.const 1) (i32.const 64)) ;; a buffer in a table survives them
    (call $check (call $ref_len (local.get $z)) (i32.const 32) (i32.const 65)) ;; ref_len: still 32 after them
    (i32.store (i32.const 0) (i32.const 5000))
    (i32.store (i32.const 4) (i32.const 21))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
