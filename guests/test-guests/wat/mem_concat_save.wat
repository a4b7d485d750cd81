;; Regression guest for the host's peak RSS: `buffer_concat` of many parts that all name the
;; same 1 MiB of linear memory, in a guest with its own collector (`wrt_gc`).
;;   concat(n, garbage_mib) -> 0 | 1 | -code
;;       holds `garbage_mib` buffers of 1 MiB that only its collector releases, fills
;;       0x10000..0x110000 with 'A', and concatenates `n` parts naming those bytes. The
;;       collector releases the garbage and then reuses the source bytes (fills them with 'Z'),
;;       so a host that copied after running it would hand out 'Z's. Returns 0 for a buffer of
;;       'A's, 1 for a wrong one, or the error code (`-NO_MEMORY` when it does not fit).
;;       With `garbage_mib` -1 it holds 1 MiB buffers until the limit refuses one, so that the
;;       concatenation finds no room left and must save its sources before the collection.
(module
  (import "wrt_v1" "buffer_alloc" (func $alloc (param i32) (result i32)))
  (import "wrt_v1" "buffer_concat" (func $concat (param i32 i32) (result i32)))
  (import "wrt_v1" "buffer_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "buffer_release" (func $release (param i32) (result i32)))
  ;; 0..0x3000: the parts (12 bytes each); 0x3000: a byte read back; 0x4000..0xc000: garbage
  ;; handles; 0x10000..0x110000: the source.
  (memory (export "memory") 18)
  (global $garbage (mut i32) (i32.const 0))
  (global $frees (mut i32) (i32.const 0))

  (func (export "wrt_gc") (param $kind i32)
    (local $i i32)
    (if (i32.eqz (global.get $frees)) (then (return)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (global.get $garbage)))
        (drop (call $release (i32.load (i32.add (i32.const 0x4000) (i32.shl (local.get $i) (i32.const 2))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (global.set $garbage (i32.const 0))
    ;; The freed memory is reused for something else.
    (memory.fill (i32.const 0x10000) (i32.const 0x5a) (i32.const 0x100000)))

  ;; The byte at `offset` of buffer `h`.
  (func $byte (param $h i32) (param $offset i32) (result i32)
    (drop (call $read (local.get $h) (local.get $offset) (i32.const 0x3000) (i32.const 1)))
    (i32.load8_u (i32.const 0x3000)))

  (func (export "concat") (param $n i32) (param $garbage_mib i32) (result i32)
    (local $i i32) (local $h i32) (local $last i32)
    (block $held
      (loop $next
        (br_if $held (i32.ge_u (global.get $garbage) (local.get $garbage_mib)))
        (local.set $h (call $alloc (i32.const 0x100000)))
        (if (i32.lt_s (local.get $h) (i32.const 0))
          (then
            (br_if $held (i32.eq (local.get $garbage_mib) (i32.const -1)))
            (return (local.get $h))))
        (i32.store (i32.add (i32.const 0x4000) (i32.shl (global.get $garbage) (i32.const 2))) (local.get $h))
        (global.set $garbage (i32.add (global.get $garbage) (i32.const 1)))
        (br $next)))
    (global.set $frees (i32.const 1))
    (memory.fill (i32.const 0x10000) (i32.const 0x41) (i32.const 0x100000))
    (block $built
      (loop $next
        (br_if $built (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store (i32.mul (local.get $i) (i32.const 12)) (i32.const 0))
        (i32.store (i32.add (i32.mul (local.get $i) (i32.const 12)) (i32.const 4)) (i32.const 0x10000))
        (i32.store (i32.add (i32.mul (local.get $i) (i32.const 12)) (i32.const 8)) (i32.const 0x100000))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.set $h (call $concat (i32.const 0) (local.get $n)))
    (if (i32.lt_s (local.get $h) (i32.const 0)) (then (return (local.get $h))))
    (local.set $last (i32.sub (i32.shl (local.get $n) (i32.const 20)) (i32.const 1)))
    (if (i32.or
          (i32.ne (call $byte (local.get $h) (i32.const 0)) (i32.const 0x41))
          (i32.ne (call $byte (local.get $h) (local.get $last)) (i32.const 0x41)))
      (then (return (i32.const 1))))
    (i32.const 0))
)
