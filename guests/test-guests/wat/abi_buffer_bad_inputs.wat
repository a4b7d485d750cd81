;; Throws every kind of bad input at every host-buffer function of `wrt_v1` (docs/abi.md, "Host
;; buffers") and checks each gets its documented error code, with a few positive checks between
;; them. Run with `--allow-run cat`. Exits 0 when every check passes, or with the number of the
;; first failing check (and "check N: got G, want W" on stderr):
;; Checks that pass one handle to every function taking one get, as `got`, the number of the
;; first function that did not return BAD_HANDLE (see $buffer_fns and $child_fns).
;;     1: buffer_from: range starts at the end of memory
;;     2: buffer_from: ptr+len overflows 32 bits
;;     3: buffer_from: range crosses the end of memory
;;     4: buffer_alloc: 1 GiB + 1 bytes
;;     5: buffer_alloc: 4 GiB - 1 bytes
;;     6: buffer_alloc: 2 GiB bytes
;;     7: last_error: a buffer error leaves a message
;;     8: buffer_from: 16 bytes give a handle >= 0x4000_0000
;;     9: buffer_len: 16
;;    10: buffer_read: all 16 bytes
;;    11: buffer_read: round trip gives the bytes of buffer_from
;;    12: buffer_from: a copy, not a view of linear memory
;;    13: buffer_from: an empty range gives a buffer
;;    14: buffer_len: 0 for it
;;    15: buffer_alloc: 32 bytes
;;    16: buffer_alloc: the bytes are zero
;;    17: spawn: `cat` gets a child handle below 0x4000_0000
;;    18: buffer handle 0: BAD_HANDLE from every buffer function
;;    19: buffer handle -1: BAD_HANDLE from every buffer function
;;    20: buffer handle i32::MIN: BAD_HANDLE from every buffer function
;;    21: buffer handle 9999 (never issued): BAD_HANDLE from every buffer function
;;    22: buffer handle 0x7fff_ffff (never issued): BAD_HANDLE from every buffer function
;;    23: a child handle as a buffer: BAD_HANDLE from every buffer function
;;    24: buffer_release
;;    25: buffer_release: twice
;;    26: a released buffer: BAD_HANDLE from every buffer function
;;    27: a buffer handle as a child: BAD_HANDLE from every child function
;;    28: the buffer survives being passed as a child (release, kill)
;;    29: buffer_read: destination at the end of memory
;;    30: buffer_read: destination wraps around
;;    31: buffer_read: destination crosses the end of memory, though only 4 bytes would be copied
;;    32: buffer_write: source at the end of memory
;;    33: buffer_write: source wraps around
;;    34: buffer_read: offset past the end
;;    35: buffer_read: offset 4 GiB - 1
;;    36: buffer_read: offset at the end reads 0 bytes
;;    37: buffer_read: a length past the end reads the rest
;;    38: buffer_read: the rest is `abcdef`
;;    39: buffer_write: range past the end
;;    40: buffer_write: a range past the end writes nothing
;;    41: buffer_write: empty range past the end
;;    42: buffer_write: offset+len wraps 32 bits
;;    43: buffer_write: empty range at the end
;;    44: buffer_write: 4 bytes at offset 4
;;    45: buffer_write: the bytes arrived (`0123WXYZ89abcdef`)
;;    46: buffer_slice: end past the length
;;    47: buffer_slice: start after end
;;    48: buffer_slice: start past the length
;;    49: buffer_slice: end 4 GiB - 1
;;    50: buffer_slice: an empty slice at the end
;;    51: buffer_slice: of length 0
;;    52: buffer_slice: 4..12
;;    53: buffer_len: 8 for it
;;    54: buffer_slice: its bytes are the parent's 4..12 (`WXYZ...`)
;;    55: buffer_slice: its bytes are the parent's 4..12 (`...89ab`)
;;    56: buffer_write: through the slice
;;    57: the parent sees a write through the slice
;;    58: buffer_write: through the parent
;;    59: the slice sees a write through the parent
;;    60: buffer_read: offset past the slice, inside the parent
;;    61: buffer_write: range past the slice, inside the parent
;;    62: buffer_slice: of a slice, past it but inside the parent
;;    63: buffer_slice: of a slice
;;    64: buffer_slice: of a slice, the parent's bytes 6..8 (`YZ`)
;;    65: buffer_release: a parent with a live slice
;;    66: the released parent is gone
;;    67: its slice still reads
;;    68: its slice keeps the bytes (`2345`)
;;    69: buffer_concat: 1025 parts
;;    70: buffer_concat: count 4 GiB - 1
;;    71: buffer_concat: part array crosses the end of memory
;;    72: buffer_concat: part array wraps around
;;    73: buffer_concat: part array at the end of memory
;;    74: buffer_concat: a part with an unknown handle
;;    75: buffer_concat: a part with a released handle
;;    76: buffer_concat: a part with a child handle
;;    77: buffer_concat: a part with handle -1
;;    78: buffer_concat: reserved field at offset 4 not zero
;;    79: buffer_concat: reserved field at offset 8 not zero
;;    80: buffer_concat: memory part at the end of memory
;;    81: buffer_concat: memory part wraps around
;;    82: buffer_concat: memory part crosses the end of memory
;;    83: buffer_concat: a bad handle after a good part
;;    84: buffer_concat: no parts
;;    85: buffer_concat: no parts give an empty buffer
;;    86: buffer_concat: 1024 empty memory parts
;;    87: buffer_concat: 1024 empty memory parts give an empty buffer
;;    88: buffer_alloc: 1 MiB + 1
;;    89: buffer_concat: a total over 1 GiB (1024 x (1 MiB + 1))
;;    90: buffer_release: the 1 MiB buffer
;;    91: buffer_concat: a buffer, memory, a slice and an empty buffer
;;    92: buffer_concat: 16 + 3 + 8 + 0 bytes
;;    93: buffer_concat: the parts one after another
;;    94: buffer_concat: a copy (a later write to a part does not show)
;;    95: read_buffer: max_len 0
;;    96: read_buffer: max_len 16 MiB + 1
;;    97: read_buffer: max_len 4 GiB - 1
;;    98: read_buffer: stream 0
;;    99: read_buffer: stream 3
;;   100: read_buffer: unknown flag
;;   101: read_buffer: unknown handle
;;   102: read_buffer: handle 0
;;   103: read_buffer: non-blocking, nothing to read, max_len 16 MiB
;;   104: write_buffer: offset past the end
;;   105: write_buffer: offset 4 GiB - 1
;;   106: write_buffer: unknown flag
;;   107: write_buffer: unknown child
;;   108: write_buffer: offset at the end writes 0 bytes
;;   109: write_buffer: a buffer
;;   110: write_buffer: a slice from offset 2
;;   111: close_stdin: `cat`
;;   112: write_buffer: stdin closed
;;   113: read_buffer: `cat` echoes 22 bytes, then end of file
;;   114: read_buffer: the bytes written with write_buffer came back
;;   115: read_buffer: still end of file
;;   116: read_buffer: stderr at end of file
;;   117: wait: `cat` ended
;;   118: wait: `cat` exited 0
;;   119: an ended child's handle as a buffer: BAD_HANDLE from every buffer function
;;   120: release: `cat`
;;   121: read_buffer: released child
;;   122: write_buffer: released child
;;   123: buffer_read: OUT_OF_RANGE once more, for last_error
;;   124: last_error: OUT_OF_RANGE leaves a message
;;   125: buffer_release: the parent of a slice
;;   126: the slice outlives its parent
;;   127: buffer_alloc: past 65,536 live buffer handles
;;   128: buffer_release: one of them
;;   129: buffer_alloc: room for one more
(module
  (import "wrt_v1" "spawn" (func $spawn (param i32 i32) (result i32)))
  (import "wrt_v1" "write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "close_stdin" (func $close_stdin (param i32) (result i32)))
  (import "wrt_v1" "read" (func $read (param i32 i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "poll" (func $poll (param i32 i32 i64) (result i32)))
  (import "wrt_v1" "wait" (func $wait (param i32 i64 i32) (result i32)))
  (import "wrt_v1" "wait_any" (func $wait_any (param i32 i32 i64 i32) (result i32)))
  (import "wrt_v1" "kill" (func $kill (param i32 i32) (result i32)))
  (import "wrt_v1" "release" (func $release (param i32) (result i32)))
  (import "wrt_v1" "last_error" (func $last_error (param i32 i32) (result i32)))
  (import "wrt_v1" "buffer_from" (func $buffer_from (param i32 i32) (result i32)))
  (import "wrt_v1" "buffer_alloc" (func $buffer_alloc (param i32) (result i32)))
  (import "wrt_v1" "buffer_len" (func $buffer_len (param i32) (result i32)))
  (import "wrt_v1" "buffer_read" (func $buffer_read (param i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "buffer_write" (func $buffer_write (param i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "buffer_slice" (func $buffer_slice (param i32 i32 i32) (result i32)))
  (import "wrt_v1" "buffer_concat" (func $buffer_concat (param i32 i32) (result i32)))
  (import "wrt_v1" "buffer_release" (func $buffer_release (param i32) (result i32)))
  (import "wrt_v1" "read_buffer" (func $read_buffer (param i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "write_buffer" (func $write_buffer (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  ;; Layout: 1024 status record; 2048 SRC (16 bytes) and small strings; 3072 a parts array of
  ;; up to 16 parts; 4096 the read area; 8192 the `cat` request; 16384 an array of 1024 parts;
  ;; 32768 what came back from `cat`; 60400 diagnostics.
  (memory (export "memory") 1)
  (data (i32.const 2048) "0123456789abcdef")
  (data (i32.const 2064) "WXYZ")
  (data (i32.const 2080) "!?#")
  (data (i32.const 2096) "XYZ")
  (data (i32.const 5000) "every bad buffer input got its documented error code\0a")
  ;; `cat`, no arguments, stdin, stdout and stderr piped: 43 bytes.
  (data (i32.const 8192) "\01\00\00\00\03\00\00\00cat\00\00\00\00\00\00\00\00\00\00\00\00\01\01\01\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  (global $cat (mut i32) (i32.const 0))
  (global $b (mut i32) (i32.const 0))
  (global $s (mut i32) (i32.const 0))
  (global $h (mut i32) (i32.const 0))
  (global $p (mut i32) (i32.const 0))
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
  ;; Writes the part {handle, x, y} at `at`.
  (func $part (param $at i32) (param $handle i32) (param $x i32) (param $y i32)
    (i32.store (local.get $at) (local.get $handle))
    (i32.store offset=4 (local.get $at) (local.get $x))
    (i32.store offset=8 (local.get $at) (local.get $y)))
  ;; buffer_concat of the one part {handle, x, y}.
  (func $concat1 (param $handle i32) (param $x i32) (param $y i32) (result i32)
    (call $part (i32.const 3072) (local.get $handle) (local.get $x) (local.get $y))
    (call $buffer_concat (i32.const 3072) (i32.const 1)))
  ;; Passes `h` as the buffer to every function taking one. Returns 0 when each returned
  ;; BAD_HANDLE, else which did not: 1 buffer_len, 2 buffer_read, 3 buffer_write, 4 buffer_slice,
  ;; 5 buffer_concat (as a part, unless 0), 6 write_buffer (as the buffer), 7 buffer_release.
  (func $buffer_fns (param $h i32) (result i32)
    (if (i32.ne (call $buffer_len (local.get $h)) (i32.const -8)) (then (return (i32.const 1))))
    (if (i32.ne (call $buffer_read (local.get $h) (i32.const 0) (i32.const 4096) (i32.const 1)) (i32.const -8))
      (then (return (i32.const 2))))
    (if (i32.ne (call $buffer_write (local.get $h) (i32.const 0) (i32.const 2048) (i32.const 1)) (i32.const -8))
      (then (return (i32.const 3))))
    (if (i32.ne (call $buffer_slice (local.get $h) (i32.const 0) (i32.const 0)) (i32.const -8))
      (then (return (i32.const 4))))
    ;; (A part with handle 0 is a range of linear memory, not a bad handle.)
    (if (local.get $h)
      (then
        (if (i32.ne (call $concat1 (local.get $h) (i32.const 0) (i32.const 0)) (i32.const -8))
          (then (return (i32.const 5))))))
    (if (i32.ne (call $write_buffer (global.get $cat) (local.get $h) (i32.const 0) (i32.const 1)) (i32.const -8))
      (then (return (i32.const 6))))
    (if (i32.ne (call $buffer_release (local.get $h)) (i32.const -8)) (then (return (i32.const 7))))
    (i32.const 0))
  ;; Passes the buffer handle `h` as the child to every function taking one. Returns 0 when each
  ;; returned BAD_HANDLE, else which did not: 1 write, 2 close_stdin, 3 read, 4 poll, 5 wait,
  ;; 6 wait_any, 7 kill, 8 read_buffer, 9 write_buffer (as the child), 10 release.
  (func $child_fns (param $h i32) (result i32)
    (if (i32.ne (call $write (local.get $h) (i32.const 2048) (i32.const 1) (i32.const 1)) (i32.const -8))
      (then (return (i32.const 1))))
    (if (i32.ne (call $close_stdin (local.get $h)) (i32.const -8)) (then (return (i32.const 2))))
    (if (i32.ne (call $read (local.get $h) (i32.const 1) (i32.const 4096) (i32.const 1) (i32.const 1)) (i32.const -8))
      (then (return (i32.const 3))))
    (if (i32.ne (call $poll (local.get $h) (i32.const 8) (i64.const 0)) (i32.const -8)) (then (return (i32.const 4))))
    (if (i32.ne (call $wait (local.get $h) (i64.const 0) (i32.const 1024)) (i32.const -8)) (then (return (i32.const 5))))
    (i32.store (i32.const 3072) (local.get $h))
    (if (i32.ne (call $wait_any (i32.const 3072) (i32.const 1) (i64.const 0) (i32.const 1024)) (i32.const -8))
      (then (return (i32.const 6))))
    (if (i32.ne (call $kill (local.get $h) (i32.const 9)) (i32.const -8)) (then (return (i32.const 7))))
    (if (i32.ne (call $read_buffer (local.get $h) (i32.const 1) (i32.const 16) (i32.const 1)) (i32.const -8))
      (then (return (i32.const 8))))
    (if (i32.ne (call $write_buffer (local.get $h) (global.get $b) (i32.const 0) (i32.const 1)) (i32.const -8))
      (then (return (i32.const 9))))
    (if (i32.ne (call $release (local.get $h)) (i32.const -8)) (then (return (i32.const 10))))
    (i32.const 0))
  ;; A buffer handle: positive and at least 0x4000_0000.
  (func $is_buffer (param $h i32) (result i32) (i32.ge_s (local.get $h) (i32.const 0x40000000)))
  ;; Reads `cat`'s stdout with read_buffer until end of file into 32768; returns the byte count,
  ;; or a negative value: an error code, -1000 a handle that is no buffer handle, -1001 more than
  ;; 1024 bytes, -1002 a short buffer_read, -1003 a failed buffer_release.
  (func $drain (result i32)
    (local $r i32) (local $n i32) (local $total i32)
    (loop $chunks
      (local.set $r (call $read_buffer (global.get $cat) (i32.const 1) (i32.const 64) (i32.const 0)))
      (if (i32.eqz (local.get $r)) (then (return (local.get $total))))
      (if (i32.lt_s (local.get $r) (i32.const 0)) (then (return (local.get $r))))
      (if (i32.eqz (call $is_buffer (local.get $r))) (then (return (i32.const -1000))))
      (local.set $n (call $buffer_len (local.get $r)))
      (if (i32.gt_u (i32.add (local.get $total) (local.get $n)) (i32.const 1024)) (then (return (i32.const -1001))))
      (if (i32.ne (call $buffer_read (local.get $r) (i32.const 0) (i32.add (i32.const 32768) (local.get $total)) (local.get $n))
                  (local.get $n))
        (then (return (i32.const -1002))))
      (if (i32.ne (call $buffer_release (local.get $r)) (i32.const 0)) (then (return (i32.const -1003))))
      (local.set $total (i32.add (local.get $total) (local.get $n)))
      (br $chunks))
    (unreachable))
  ;; Allocates empty buffers until the host refuses; returns its answer (or the 70,000th handle)
  ;; and leaves the last handle it got in $h.
  (func $exhaust (result i32)
    (local $r i32) (local $i i32)
    (loop $more
      (local.set $r (call $buffer_alloc (i32.const 0)))
      (if (i32.lt_s (local.get $r) (i32.const 0)) (then (return (local.get $r))))
      (global.set $h (local.get $r))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $more (i32.lt_u (local.get $i) (i32.const 70000))))
    (local.get $r))
  (func (export "_start")
    (local $e i32) (local $z i32) (local $c i32) (local $s2 i32) (local $i i32)
    ;; Creating buffers
    (call $check (call $buffer_from (i32.const 65536) (i32.const 1)) (i32.const -12) (i32.const 1)) ;; buffer_from: range starts at the end of memory
    (call $check (call $buffer_from (i32.const -16) (i32.const 32)) (i32.const -12) (i32.const 2)) ;; buffer_from: ptr+len overflows 32 bits
    (call $check (call $buffer_from (i32.const 65530) (i32.const 16)) (i32.const -12) (i32.const 3)) ;; buffer_from: range crosses the end of memory
    (call $check (call $buffer_alloc (i32.const 0x40000001)) (i32.const -9) (i32.const 4)) ;; buffer_alloc: 1 GiB + 1 bytes
    (call $check (call $buffer_alloc (i32.const -1)) (i32.const -9) (i32.const 5)) ;; buffer_alloc: 4 GiB - 1 bytes
    (call $check (call $buffer_alloc (i32.const 0x80000000)) (i32.const -9) (i32.const 6)) ;; buffer_alloc: 2 GiB bytes
    (call $check (i32.gt_s (call $last_error (i32.const 0) (i32.const 0)) (i32.const 0)) (i32.const 1) (i32.const 7)) ;; last_error: a buffer error leaves a message
    (global.set $b (call $buffer_from (i32.const 2048) (i32.const 16)))
    (call $check (call $is_buffer (global.get $b)) (i32.const 1) (i32.const 8)) ;; buffer_from: 16 bytes give a handle >= 0x4000_0000
    (call $check (call $buffer_len (global.get $b)) (i32.const 16) (i32.const 9)) ;; buffer_len: 16
    (call $scrub)
    (call $check (call $buffer_read (global.get $b) (i32.const 0) (i32.const 4096) (i32.const 16)) (i32.const 16) (i32.const 10)) ;; buffer_read: all 16 bytes
    (call $check (call $eq (i32.const 4096) (i32.const 2048) (i32.const 16)) (i32.const 1) (i32.const 11)) ;; buffer_read: round trip gives the bytes of buffer_from
    (memory.copy (i32.const 2560) (i32.const 2048) (i32.const 16))
    (local.set $c (call $buffer_from (i32.const 2560) (i32.const 16)))
    (memory.fill (i32.const 2560) (i32.const 0) (i32.const 16))
    (call $scrub)
    (drop (call $buffer_read (local.get $c) (i32.const 0) (i32.const 4096) (i32.const 16)))
    (call $check (call $eq (i32.const 4096) (i32.const 2048) (i32.const 16)) (i32.const 1) (i32.const 12)) ;; buffer_from: a copy, not a view of linear memory
    (local.set $e (call $buffer_from (i32.const 0) (i32.const 0)))
    (call $check (call $is_buffer (local.get $e)) (i32.const 1) (i32.const 13)) ;; buffer_from: an empty range gives a buffer
    (call $check (call $buffer_len (local.get $e)) (i32.const 0) (i32.const 14)) ;; buffer_len: 0 for it
    (local.set $z (call $buffer_alloc (i32.const 32)))
    (call $check (call $is_buffer (local.get $z)) (i32.const 1) (i32.const 15)) ;; buffer_alloc: 32 bytes
    (call $scrub)
    (drop (call $buffer_read (local.get $z) (i32.const 0) (i32.const 4096) (i32.const 32)))
    (call $check (call $all (i32.const 4096) (i32.const 32) (i32.const 0)) (i32.const 1) (i32.const 16)) ;; buffer_alloc: the bytes are zero
    (global.set $cat (call $spawn (i32.const 8192) (i32.const 43)))
    (call $check (i32.and (i32.gt_s (global.get $cat) (i32.const 0)) (i32.lt_s (global.get $cat) (i32.const 0x40000000)))
      (i32.const 1) (i32.const 17)) ;; spawn: `cat` gets a child handle below 0x4000_0000
    ;; Bad buffer handles, everywhere a buffer goes
    (call $check (call $buffer_fns (i32.const 0)) (i32.const 0) (i32.const 18)) ;; buffer handle 0: BAD_HANDLE from every buffer function
    (call $check (call $buffer_fns (i32.const -1)) (i32.const 0) (i32.const 19)) ;; buffer handle -1: BAD_HANDLE from every buffer function
    (call $check (call $buffer_fns (i32.const 0x80000000)) (i32.const 0) (i32.const 20)) ;; buffer handle i32::MIN: BAD_HANDLE from every buffer function
    (call $check (call $buffer_fns (i32.const 9999)) (i32.const 0) (i32.const 21)) ;; buffer handle 9999 (never issued): BAD_HANDLE from every buffer function
    (call $check (call $buffer_fns (i32.const 0x7fffffff)) (i32.const 0) (i32.const 22)) ;; buffer handle 0x7fff_ffff (never issued): BAD_HANDLE from every buffer function
    (call $check (call $buffer_fns (global.get $cat)) (i32.const 0) (i32.const 23)) ;; a child handle as a buffer: BAD_HANDLE from every buffer function
    (global.set $h (call $buffer_from (i32.const 2048) (i32.const 4)))
    (call $check (call $buffer_release (global.get $h)) (i32.const 0) (i32.const 24)) ;; buffer_release
    (call $check (call $buffer_release (global.get $h)) (i32.const -8) (i32.const 25)) ;; buffer_release: twice
    (call $check (call $buffer_fns (global.get $h)) (i32.const 0) (i32.const 26)) ;; a released buffer: BAD_HANDLE from every buffer function
    (call $check (call $child_fns (global.get $b)) (i32.const 0) (i32.const 27)) ;; a buffer handle as a child: BAD_HANDLE from every child function
    (call $check (call $buffer_len (global.get $b)) (i32.const 16) (i32.const 28)) ;; the buffer survives being passed as a child (release, kill)
    ;; Linear memory out of bounds
    (call $check (call $buffer_read (global.get $b) (i32.const 0) (i32.const 65536) (i32.const 1)) (i32.const -12) (i32.const 29)) ;; buffer_read: destination at the end of memory
    (call $check (call $buffer_read (global.get $b) (i32.const 0) (i32.const -8) (i32.const 16)) (i32.const -12) (i32.const 30)) ;; buffer_read: destination wraps around
    (call $check (call $buffer_read (global.get $b) (i32.const 12) (i32.const 65530) (i32.const 16)) (i32.const -12) (i32.const 31)) ;; buffer_read: destination crosses the end of memory, though only 4 bytes would be copied
    (call $check (call $buffer_write (global.get $b) (i32.const 0) (i32.const 65536) (i32.const 1)) (i32.const -12) (i32.const 32)) ;; buffer_write: source at the end of memory
    (call $check (call $buffer_write (global.get $b) (i32.const 0) (i32.const -8) (i32.const 16)) (i32.const -12) (i32.const 33)) ;; buffer_write: source wraps around
    ;; Offsets and ranges outside the buffer
    (call $check (call $buffer_read (global.get $b) (i32.const 17) (i32.const 4096) (i32.const 1)) (i32.const -17) (i32.const 34)) ;; buffer_read: offset past the end
    (call $check (call $buffer_read (global.get $b) (i32.const -1) (i32.const 4096) (i32.const 1)) (i32.const -17) (i32.const 35)) ;; buffer_read: offset 4 GiB - 1
    (call $check (call $buffer_read (global.get $b) (i32.const 16) (i32.const 4096) (i32.const 8)) (i32.const 0) (i32.const 36)) ;; buffer_read: offset at the end reads 0 bytes
    (call $scrub)
    (call $check (call $buffer_read (global.get $b) (i32.const 10) (i32.const 4096) (i32.const 100)) (i32.const 6) (i32.const 37)) ;; buffer_read: a length past the end reads the rest
    (call $check (call $eq (i32.const 4096) (i32.const 2058) (i32.const 6)) (i32.const 1) (i32.const 38)) ;; buffer_read: the rest is `abcdef`
    (call $check (call $buffer_write (global.get $b) (i32.const 10) (i32.const 2064) (i32.const 8)) (i32.const -17) (i32.const 39)) ;; buffer_write: range past the end
    (call $scrub)
    (drop (call $buffer_read (global.get $b) (i32.const 0) (i32.const 4096) (i32.const 16)))
    (call $check (call $eq (i32.const 4096) (i32.const 2048) (i32.const 16)) (i32.const 1) (i32.const 40)) ;; buffer_write: a range past the end writes nothing
    (call $check (call $buffer_write (global.get $b) (i32.const 17) (i32.const 2064) (i32.const 0)) (i32.const -17) (i32.const 41)) ;; buffer_write: empty range past the end
    (call $check (call $buffer_write (global.get $b) (i32.const -1) (i32.const 2064) (i32.const 2)) (i32.const -17) (i32.const 42)) ;; buffer_write: offset+len wraps 32 bits
    (call $check (call $buffer_write (global.get $b) (i32.const 16) (i32.const 2064) (i32.const 0)) (i32.const 0) (i32.const 43)) ;; buffer_write: empty range at the end
    (call $check (call $buffer_write (global.get $b) (i32.const 4) (i32.const 2064) (i32.const 4)) (i32.const 4) (i32.const 44)) ;; buffer_write: 4 bytes at offset 4
    (call $scrub)
    (drop (call $buffer_read (global.get $b) (i32.const 0) (i32.const 4096) (i32.const 16)))
    (call $check (call $eq (i32.const 4100) (i32.const 2064) (i32.const 4)) (i32.const 1) (i32.const 45)) ;; buffer_write: the bytes arrived (`0123WXYZ89abcdef`)
    (call $check (call $buffer_slice (global.get $b) (i32.const 4) (i32.const 17)) (i32.const -17) (i32.const 46)) ;; buffer_slice: end past the length
    (call $check (call $buffer_slice (global.get $b) (i32.const 8) (i32.const 4)) (i32.const -17) (i32.const 47)) ;; buffer_slice: start after end
    (call $check (call $buffer_slice (global.get $b) (i32.const 17) (i32.const 17)) (i32.const -17) (i32.const 48)) ;; buffer_slice: start past the length
    (call $check (call $buffer_slice (global.get $b) (i32.const 0) (i32.const -1)) (i32.const -17) (i32.const 49)) ;; buffer_slice: end 4 GiB - 1
    (global.set $h (call $buffer_slice (global.get $b) (i32.const 16) (i32.const 16)))
    (call $check (call $is_buffer (global.get $h)) (i32.const 1) (i32.const 50)) ;; buffer_slice: an empty slice at the end
    (call $check (call $buffer_len (global.get $h)) (i32.const 0) (i32.const 51)) ;; buffer_slice: of length 0
    ;; Slices share their parent's bytes
    (global.set $s (call $buffer_slice (global.get $b) (i32.const 4) (i32.const 12)))
    (call $check (call $is_buffer (global.get $s)) (i32.const 1) (i32.const 52)) ;; buffer_slice: 4..12
    (call $check (call $buffer_len (global.get $s)) (i32.const 8) (i32.const 53)) ;; buffer_len: 8 for it
    (call $scrub)
    (drop (call $buffer_read (global.get $s) (i32.const 0) (i32.const 4096) (i32.const 8)))
    (call $check (call $eq (i32.const 4096) (i32.const 2064) (i32.const 4)) (i32.const 1) (i32.const 54)) ;; buffer_slice: its bytes are the parent's 4..12 (`WXYZ...`)
    (call $check (call $eq (i32.const 4100) (i32.const 2056) (i32.const 4)) (i32.const 1) (i32.const 55)) ;; buffer_slice: its bytes are the parent's 4..12 (`...89ab`)
    (call $check (call $buffer_write (global.get $s) (i32.const 0) (i32.const 2080) (i32.const 2)) (i32.const 2) (i32.const 56)) ;; buffer_write: through the slice
    (call $scrub)
    (drop (call $buffer_read (global.get $b) (i32.const 4) (i32.const 4096) (i32.const 2)))
    (call $check (call $eq (i32.const 4096) (i32.const 2080) (i32.const 2)) (i32.const 1) (i32.const 57)) ;; the parent sees a write through the slice
    (call $check (call $buffer_write (global.get $b) (i32.const 11) (i32.const 2082) (i32.const 1)) (i32.const 1) (i32.const 58)) ;; buffer_write: through the parent
    (call $scrub)
    (drop (call $buffer_read (global.get $s) (i32.const 7) (i32.const 4096) (i32.const 1)))
    (call $check (i32.load8_u (i32.const 4096)) (i32.const 35) (i32.const 59)) ;; the slice sees a write through the parent
    (call $check (call $buffer_read (global.get $s) (i32.const 9) (i32.const 4096) (i32.const 1)) (i32.const -17) (i32.const 60)) ;; buffer_read: offset past the slice, inside the parent
    (call $check (call $buffer_write (global.get $s) (i32.const 6) (i32.const 2064) (i32.const 4)) (i32.const -17) (i32.const 61)) ;; buffer_write: range past the slice, inside the parent
    (call $check (call $buffer_slice (global.get $s) (i32.const 0) (i32.const 9)) (i32.const -17) (i32.const 62)) ;; buffer_slice: of a slice, past it but inside the parent
    (global.set $h (call $buffer_slice (global.get $s) (i32.const 2) (i32.const 4)))
    (call $check (call $buffer_len (global.get $h)) (i32.const 2) (i32.const 63)) ;; buffer_slice: of a slice
    (call $scrub)
    (drop (call $buffer_read (global.get $h) (i32.const 0) (i32.const 4096) (i32.const 2)))
    (call $check (call $eq (i32.const 4096) (i32.const 2066) (i32.const 2)) (i32.const 1) (i32.const 64)) ;; buffer_slice: of a slice, the parent's bytes 6..8 (`YZ`)
    (global.set $p (call $buffer_from (i32.const 2048) (i32.const 16)))
    (local.set $s2 (call $buffer_slice (global.get $p) (i32.const 2) (i32.const 6)))
    (call $check (call $buffer_release (global.get $p)) (i32.const 0) (i32.const 65)) ;; buffer_release: a parent with a live slice
    (call $check (call $buffer_len (global.get $p)) (i32.const -8) (i32.const 66)) ;; the released parent is gone
    (call $scrub)
    (call $check (call $buffer_read (local.get $s2) (i32.const 0) (i32.const 4096) (i32.const 4)) (i32.const 4) (i32.const 67)) ;; its slice still reads
    (call $check (call $eq (i32.const 4096) (i32.const 2050) (i32.const 4)) (i32.const 1) (i32.const 68)) ;; its slice keeps the bytes (`2345`)
    ;; buffer_concat
    (call $check (call $buffer_concat (i32.const 16384) (i32.const 1025)) (i32.const -9) (i32.const 69)) ;; buffer_concat: 1025 parts
    (call $check (call $buffer_concat (i32.const 16384) (i32.const -1)) (i32.const -9) (i32.const 70)) ;; buffer_concat: count 4 GiB - 1
    (call $check (call $buffer_concat (i32.const 65532) (i32.const 1)) (i32.const -12) (i32.const 71)) ;; buffer_concat: part array crosses the end of memory
    (call $check (call $buffer_concat (i32.const -4) (i32.const 1)) (i32.const -12) (i32.const 72)) ;; buffer_concat: part array wraps around
    (call $check (call $buffer_concat (i32.const 65536) (i32.const 1)) (i32.const -12) (i32.const 73)) ;; buffer_concat: part array at the end of memory
    (call $check (call $concat1 (i32.const 9999) (i32.const 0) (i32.const 0)) (i32.const -8) (i32.const 74)) ;; buffer_concat: a part with an unknown handle
    (call $check (call $concat1 (global.get $p) (i32.const 0) (i32.const 0)) (i32.const -8) (i32.const 75)) ;; buffer_concat: a part with a released handle
    (call $check (call $concat1 (global.get $cat) (i32.const 0) (i32.const 0)) (i32.const -8) (i32.const 76)) ;; buffer_concat: a part with a child handle
    (call $check (call $concat1 (i32.const -1) (i32.const 0) (i32.const 0)) (i32.const -8) (i32.const 77)) ;; buffer_concat: a part with handle -1
    (call $check (call $concat1 (global.get $b) (i32.const 1) (i32.const 0)) (i32.const -9) (i32.const 78)) ;; buffer_concat: reserved field at offset 4 not zero
    (call $check (call $concat1 (global.get $b) (i32.const 0) (i32.const 1)) (i32.const -9) (i32.const 79)) ;; buffer_concat: reserved field at offset 8 not zero
    (call $check (call $concat1 (i32.const 0) (i32.const 65536) (i32.const 1)) (i32.const -12) (i32.const 80)) ;; buffer_concat: memory part at the end of memory
    (call $check (call $concat1 (i32.const 0) (i32.const -16) (i32.const 32)) (i32.const -12) (i32.const 81)) ;; buffer_concat: memory part wraps around
    (call $check (call $concat1 (i32.const 0) (i32.const 65530) (i32.const 16)) (i32.const -12) (i32.const 82)) ;; buffer_concat: memory part crosses the end of memory
    (call $part (i32.const 3072) (global.get $b) (i32.const 0) (i32.const 0))
    (call $part (i32.const 3084) (i32.const 9999) (i32.const 0) (i32.const 0))
    (call $check (call $buffer_concat (i32.const 3072) (i32.const 2)) (i32.const -8) (i32.const 83)) ;; buffer_concat: a bad handle after a good part
    (local.set $c (call $buffer_concat (i32.const 16384) (i32.const 0)))
    (call $check (call $is_buffer (local.get $c)) (i32.const 1) (i32.const 84)) ;; buffer_concat: no parts
    (call $check (call $buffer_len (local.get $c)) (i32.const 0) (i32.const 85)) ;; buffer_concat: no parts give an empty buffer
    (local.set $c (call $buffer_concat (i32.const 16384) (i32.const 1024)))
    (call $check (call $is_buffer (local.get $c)) (i32.const 1) (i32.const 86)) ;; buffer_concat: 1024 empty memory parts
    (call $check (call $buffer_len (local.get $c)) (i32.const 0) (i32.const 87)) ;; buffer_concat: 1024 empty memory parts give an empty buffer
    (global.set $h (call $buffer_alloc (i32.const 0x100001)))
    (call $check (call $is_buffer (global.get $h)) (i32.const 1) (i32.const 88)) ;; buffer_alloc: 1 MiB + 1
    (local.set $i (i32.const 0))
    (loop $parts
      (call $part (i32.add (i32.const 16384) (i32.mul (local.get $i) (i32.const 12))) (global.get $h) (i32.const 0) (i32.const 0))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $parts (i32.lt_u (local.get $i) (i32.const 1024))))
    (call $check (call $buffer_concat (i32.const 16384) (i32.const 1024)) (i32.const -9) (i32.const 89)) ;; buffer_concat: a total over 1 GiB (1024 x (1 MiB + 1))
    (call $check (call $buffer_release (global.get $h)) (i32.const 0) (i32.const 90)) ;; buffer_release: the 1 MiB buffer
    (call $part (i32.const 3072) (global.get $b) (i32.const 0) (i32.const 0))
    (call $part (i32.const 3084) (i32.const 0) (i32.const 2096) (i32.const 3))
    (call $part (i32.const 3096) (global.get $s) (i32.const 0) (i32.const 0))
    (call $part (i32.const 3108) (local.get $e) (i32.const 0) (i32.const 0))
    (local.set $c (call $buffer_concat (i32.const 3072) (i32.const 4)))
    (call $check (call $is_buffer (local.get $c)) (i32.const 1) (i32.const 91)) ;; buffer_concat: a buffer, memory, a slice and an empty buffer
    (call $check (call $buffer_len (local.get $c)) (i32.const 27) (i32.const 92)) ;; buffer_concat: 16 + 3 + 8 + 0 bytes
    (drop (call $buffer_read (global.get $b) (i32.const 0) (i32.const 4352) (i32.const 16)))
    (memory.copy (i32.const 4368) (i32.const 2096) (i32.const 3))
    (drop (call $buffer_read (global.get $s) (i32.const 0) (i32.const 4371) (i32.const 8)))
    (call $scrub)
    (drop (call $buffer_read (local.get $c) (i32.const 0) (i32.const 4096) (i32.const 27)))
    (call $check (call $eq (i32.const 4096) (i32.const 4352) (i32.const 27)) (i32.const 1) (i32.const 93)) ;; buffer_concat: the parts one after another
    (drop (call $buffer_write (global.get $b) (i32.const 0) (i32.const 2096) (i32.const 3)))
    (call $scrub)
    (drop (call $buffer_read (local.get $c) (i32.const 0) (i32.const 4096) (i32.const 27)))
    (call $check (call $eq (i32.const 4096) (i32.const 4352) (i32.const 27)) (i32.const 1) (i32.const 94)) ;; buffer_concat: a copy (a later write to a part does not show)
    (drop (call $buffer_write (global.get $b) (i32.const 0) (i32.const 4352) (i32.const 3)))
    ;; read_buffer, with `cat` running and nothing written to it yet
    (call $check (call $read_buffer (global.get $cat) (i32.const 1) (i32.const 0) (i32.const 0)) (i32.const -9) (i32.const 95)) ;; read_buffer: max_len 0
    (call $check (call $read_buffer (global.get $cat) (i32.const 1) (i32.const 0x1000001) (i32.const 0)) (i32.const -9) (i32.const 96)) ;; read_buffer: max_len 16 MiB + 1
    (call $check (call $read_buffer (global.get $cat) (i32.const 1) (i32.const -1) (i32.const 0)) (i32.const -9) (i32.const 97)) ;; read_buffer: max_len 4 GiB - 1
    (call $check (call $read_buffer (global.get $cat) (i32.const 0) (i32.const 16) (i32.const 1)) (i32.const -9) (i32.const 98)) ;; read_buffer: stream 0
    (call $check (call $read_buffer (global.get $cat) (i32.const 3) (i32.const 16) (i32.const 1)) (i32.const -9) (i32.const 99)) ;; read_buffer: stream 3
    (call $check (call $read_buffer (global.get $cat) (i32.const 1) (i32.const 16) (i32.const 2)) (i32.const -9) (i32.const 100)) ;; read_buffer: unknown flag
    (call $check (call $read_buffer (i32.const 9999) (i32.const 1) (i32.const 16) (i32.const 1)) (i32.const -8) (i32.const 101)) ;; read_buffer: unknown handle
    (call $check (call $read_buffer (i32.const 0) (i32.const 1) (i32.const 16) (i32.const 1)) (i32.const -8) (i32.const 102)) ;; read_buffer: handle 0
    (call $check (call $read_buffer (global.get $cat) (i32.const 1) (i32.const 0x1000000) (i32.const 1)) (i32.const -11) (i32.const 103)) ;; read_buffer: non-blocking, nothing to read, max_len 16 MiB
    ;; write_buffer to `cat`
    (call $check (call $write_buffer (global.get $cat) (global.get $b) (i32.const 17) (i32.const 0)) (i32.const -17) (i32.const 104)) ;; write_buffer: offset past the end
    (call $check (call $write_buffer (global.get $cat) (global.get $b) (i32.const -1) (i32.const 0)) (i32.const -17) (i32.const 105)) ;; write_buffer: offset 4 GiB - 1
    (call $check (call $write_buffer (global.get $cat) (global.get $b) (i32.const 0) (i32.const 2)) (i32.const -9) (i32.const 106)) ;; write_buffer: unknown flag
    (call $check (call $write_buffer (i32.const 9999) (global.get $b) (i32.const 0) (i32.const 0)) (i32.const -8) (i32.const 107)) ;; write_buffer: unknown child
    (call $check (call $write_buffer (global.get $cat) (global.get $b) (i32.const 16) (i32.const 0)) (i32.const 0) (i32.const 108)) ;; write_buffer: offset at the end writes 0 bytes
    (call $check (call $write_buffer (global.get $cat) (global.get $b) (i32.const 0) (i32.const 0)) (i32.const 16) (i32.const 109)) ;; write_buffer: a buffer
    (call $check (call $write_buffer (global.get $cat) (global.get $s) (i32.const 2) (i32.const 0)) (i32.const 6) (i32.const 110)) ;; write_buffer: a slice from offset 2
    (call $check (call $close_stdin (global.get $cat)) (i32.const 0) (i32.const 111)) ;; close_stdin: `cat`
    (call $check (call $write_buffer (global.get $cat) (global.get $b) (i32.const 0) (i32.const 0)) (i32.const -14) (i32.const 112)) ;; write_buffer: stdin closed
    (call $check (call $drain) (i32.const 22) (i32.const 113)) ;; read_buffer: `cat` echoes 22 bytes, then end of file
    (drop (call $buffer_read (global.get $b) (i32.const 0) (i32.const 4096) (i32.const 16)))
    (drop (call $buffer_read (global.get $s) (i32.const 2) (i32.const 4112) (i32.const 6)))
    (call $check (call $eq (i32.const 32768) (i32.const 4096) (i32.const 22)) (i32.const 1) (i32.const 114)) ;; read_buffer: the bytes written with write_buffer came back
    (call $check (call $read_buffer (global.get $cat) (i32.const 1) (i32.const 16) (i32.const 0)) (i32.const 0) (i32.const 115)) ;; read_buffer: still end of file
    (call $check (call $read_buffer (global.get $cat) (i32.const 2) (i32.const 16) (i32.const 0)) (i32.const 0) (i32.const 116)) ;; read_buffer: stderr at end of file
    (call $check (call $wait (global.get $cat) (i64.const -1) (i32.const 1024)) (i32.const 0) (i32.const 117)) ;; wait: `cat` ended
    (call $check (i32.load (i32.const 1028)) (i32.const 0) (i32.const 118)) ;; wait: `cat` exited 0
    (call $check (call $buffer_fns (global.get $cat)) (i32.const 0) (i32.const 119)) ;; an ended child's handle as a buffer: BAD_HANDLE from every buffer function
    (call $check (call $release (global.get $cat)) (i32.const 0) (i32.const 120)) ;; release: `cat`
    (call $check (call $read_buffer (global.get $cat) (i32.const 1) (i32.const 16) (i32.const 0)) (i32.const -8) (i32.const 121)) ;; read_buffer: released child
    (call $check (call $write_buffer (global.get $cat) (global.get $b) (i32.const 0) (i32.const 0)) (i32.const -8) (i32.const 122)) ;; write_buffer: released child
    (call $check (call $buffer_read (global.get $b) (i32.const 17) (i32.const 4096) (i32.const 1)) (i32.const -17) (i32.const 123)) ;; buffer_read: OUT_OF_RANGE once more, for last_error
    (call $check (i32.gt_s (call $last_error (i32.const 6144) (i32.const 256)) (i32.const 0)) (i32.const 1) (i32.const 124)) ;; last_error: OUT_OF_RANGE leaves a message
    (call $check (call $buffer_release (global.get $b)) (i32.const 0) (i32.const 125)) ;; buffer_release: the parent of a slice
    (call $check (call $buffer_len (global.get $s)) (i32.const 8) (i32.const 126)) ;; the slice outlives its parent
    ;; The handle limit
    (call $check (call $exhaust) (i32.const -10) (i32.const 127)) ;; buffer_alloc: past 65,536 live buffer handles
    (call $check (call $buffer_release (global.get $h)) (i32.const 0) (i32.const 128)) ;; buffer_release: one of them
    (call $check (call $is_buffer (call $buffer_alloc (i32.const 0))) (i32.const 1) (i32.const 129)) ;; buffer_alloc: room for one more
    (i32.store (i32.const 0) (i32.const 5000))
    (i32.store (i32.const 4) (i32.const 53))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
