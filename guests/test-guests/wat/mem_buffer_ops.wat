;; Random sequences of buffer calls, for a property test (the host's peak RSS stays within the
;; memory limit plus a fixed overhead, whatever the guest calls).
;;   run(seed, steps, max_len) -> NO_MEMORY results | -code
;;       `steps` calls drawn from a xorshift generator seeded with `seed` (not 0): buffer_from,
;;       buffer_alloc, buffer_concat (up to 1024 parts, of held buffers and of linear memory,
;;       often overlapping), buffer_slice, ref_from into a table of 64 externrefs, and releases,
;;       now or by the guest's collector. Lengths are up to `max_len` bytes (at most 2 MiB for
;;       linear memory). `wrt_gc` releases the collector's buffers and then reuses the source
;;       bytes. Returns how many calls got `-NO_MEMORY`, or the first other error code
;;       (`-INVALID_ARGUMENT` for parts over 1 GiB is expected and counted as neither).
(module
  (import "wrt_v1" "buffer_from" (func $from (param i32 i32) (result i32)))
  (import "wrt_v1" "buffer_alloc" (func $alloc (param i32) (result i32)))
  (import "wrt_v1" "buffer_len" (func $len (param i32) (result i32)))
  (import "wrt_v1" "buffer_slice" (func $slice (param i32 i32 i32) (result i32)))
  (import "wrt_v1" "buffer_concat" (func $concat (param i32 i32) (result i32)))
  (import "wrt_v1" "buffer_release" (func $release (param i32) (result i32)))
  (import "wrt_v1" "ref_from" (func $ref_from (param i32 i32) (result externref)))
  ;; 0..0x8000: held handles; 0x8000..0x10000: handles the collector releases; 0x10000..0x13000:
  ;; concat parts; 0x20000..0x220000: the source bytes.
  (memory (export "memory") 35)
  (table $refs 64 externref)
  (global $rng (mut i32) (i32.const 1))
  (global $held (mut i32) (i32.const 0))
  (global $garbage (mut i32) (i32.const 0))
  (global $no_memory (mut i32) (i32.const 0))
  (global $failed (mut i32) (i32.const 0))

  (func (export "wrt_gc") (param $kind i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (global.get $garbage)))
        (drop (call $release (i32.load (i32.add (i32.const 0x8000) (i32.shl (local.get $i) (i32.const 2))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (global.set $garbage (i32.const 0))
    (memory.fill (i32.const 0x20000) (i32.const 0x5a) (i32.const 0x200000)))

  ;; A number in 0..n (n > 0), xorshift32.
  (func $rand (param $n i32) (result i32)
    (local $x i32)
    (local.set $x (global.get $rng))
    (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 13))))
    (local.set $x (i32.xor (local.get $x) (i32.shr_u (local.get $x) (i32.const 17))))
    (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 5))))
    (global.set $rng (local.get $x))
    (i32.rem_u (local.get $x) (local.get $n)))

  ;; A length in 1..=max, most of them small (log-uniform-ish).
  (func $length (param $max i32) (result i32)
    (i32.add
      (i32.shr_u (call $rand (local.get $max)) (call $rand (i32.const 20)))
      (i32.const 1)))

  ;; Checks a result: NO_MEMORY is counted, INVALID_ARGUMENT allowed, any other error recorded.
  (func $check (param $ret i32) (result i32)
    (if (i32.ge_s (local.get $ret) (i32.const 0)) (then (return (i32.const 1))))
    (if (i32.eq (local.get $ret) (i32.const -10))
      (then (global.set $no_memory (i32.add (global.get $no_memory) (i32.const 1))) (return (i32.const 0))))
    (if (i32.and (i32.ne (local.get $ret) (i32.const -9)) (i32.eqz (global.get $failed)))
      (then (global.set $failed (local.get $ret))))
    (i32.const 0))

  ;; Keeps a new buffer handle (or checks the error).
  (func $keep (param $h i32)
    (if (i32.eqz (call $check (local.get $h))) (then (return)))
    (if (i32.ge_u (global.get $held) (i32.const 8192))
      (then (drop (call $release (local.get $h))) (return)))
    (i32.store (i32.shl (global.get $held) (i32.const 2)) (local.get $h))
    (global.set $held (i32.add (global.get $held) (i32.const 1))))

  ;; Removes a random held handle and returns it (0 when none is held).
  (func $take (result i32)
    (local $i i32) (local $h i32)
    (if (i32.eqz (global.get $held)) (then (return (i32.const 0))))
    (local.set $i (i32.shl (call $rand (global.get $held)) (i32.const 2)))
    (local.set $h (i32.load (local.get $i)))
    (global.set $held (i32.sub (global.get $held) (i32.const 1)))
    (i32.store (local.get $i) (i32.load (i32.shl (global.get $held) (i32.const 2))))
    (local.get $h))

  ;; A random held handle, left held (0 when none is held).
  (func $any (result i32)
    (if (i32.eqz (global.get $held)) (then (return (i32.const 0))))
    (i32.load (i32.shl (call $rand (global.get $held)) (i32.const 2))))

  ;; The start of `len` random source bytes.
  (func $source (param $len i32) (result i32)
    (i32.add (i32.const 0x20000) (call $rand (i32.sub (i32.const 0x200001) (local.get $len)))))

  (func $concat_op (param $max i32)
    (local $n i32) (local $i i32) (local $at i32) (local $h i32) (local $ptr i32) (local $len i32)
    (local.set $n (i32.add (call $rand (i32.const 1024)) (i32.const 1)))
    (local.set $len (call $length (local.get $max)))
    (local.set $ptr (call $source (local.get $len)))
    (block $built
      (loop $next
        (br_if $built (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $at (i32.add (i32.const 0x10000) (i32.mul (local.get $i) (i32.const 12))))
        (local.set $h (if (result i32) (i32.eqz (call $rand (i32.const 4))) (then (call $any)) (else (i32.const 0))))
        (if (local.get $h)
          (then
            (i32.store (local.get $at) (local.get $h))
            (i64.store (i32.add (local.get $at) (i32.const 4)) (i64.const 0)))
          (else
            ;; Half the memory parts name the previous range again.
            (if (call $rand (i32.const 2))
              (then
                (local.set $len (call $length (local.get $max)))
                (local.set $ptr (call $source (local.get $len)))))
            (i32.store (local.get $at) (i32.const 0))
            (i32.store (i32.add (local.get $at) (i32.const 4)) (local.get $ptr))
            (i32.store (i32.add (local.get $at) (i32.const 8)) (local.get $len))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $keep (call $concat (i32.const 0x10000) (local.get $n))))

  (func (export "run") (param $seed i32) (param $steps i32) (param $max_len i32) (result i32)
    (local $step i32) (local $len i32) (local $h i32) (local $src_max i32)
    (global.set $rng (select (local.get $seed) (i32.const 1) (local.get $seed)))
    (local.set $max_len (select (local.get $max_len) (i32.const 1) (i32.gt_s (local.get $max_len) (i32.const 0))))
    (local.set $src_max
      (select (local.get $max_len) (i32.const 0x200000) (i32.lt_u (local.get $max_len) (i32.const 0x200000))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $step) (local.get $steps)))
        (block $op
          (block $ref (block $release (block $collect (block $slice (block $cat (block $alloc (block $from
            (br_table $from $alloc $cat $slice $collect $release $ref $from (call $rand (i32.const 8))))
            ;; buffer_from
            (local.set $len (call $length (local.get $src_max)))
            (call $keep (call $from (call $source (local.get $len)) (local.get $len)))
            (br $op))
            ;; buffer_alloc
            (call $keep (call $alloc (call $length (local.get $max_len))))
            (br $op))
            ;; buffer_concat
            (call $concat_op (local.get $src_max))
            (br $op))
          ;; buffer_slice of a held buffer
          (local.set $h (call $any))
          (if (local.get $h)
            (then
              (local.set $len (call $len (local.get $h)))
              (call $keep (call $slice (local.get $h) (i32.const 0) (call $rand (i32.add (local.get $len) (i32.const 1)))))))
          (br $op))
          ;; left for the collector
          (local.set $h (call $take))
          (if (local.get $h)
            (then
              (if (i32.lt_u (global.get $garbage) (i32.const 8192))
                (then
                  (i32.store (i32.add (i32.const 0x8000) (i32.shl (global.get $garbage) (i32.const 2))) (local.get $h))
                  (global.set $garbage (i32.add (global.get $garbage) (i32.const 1))))
                (else (drop (call $release (local.get $h)))))))
          (br $op))
          ;; released now
          (local.set $h (call $take))
          (if (local.get $h) (then (drop (call $release (local.get $h)))))
          (br $op))
          ;; ref_from, replacing a random slot: the old reference is garbage for wasmtime's collector
          (local.set $len (call $length (local.get $src_max)))
          (table.set $refs (call $rand (i32.const 64)) (call $ref_from (call $source (local.get $len)) (local.get $len))))
        (local.set $step (i32.add (local.get $step) (i32.const 1)))
        (br $next)))
    (if (global.get $failed) (then (return (global.get $failed))))
    (global.get $no_memory))
)
