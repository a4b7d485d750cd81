;; Regression guest for the review of host buffers (each export is one finding):
;;   copy_before_gc(n, len) -> bad|-code
;;       n times: fill 0x10000.. with `len` bytes of 'A', buffer_from them, and check the
;;       buffer's last byte. The guest's collector (`wrt_gc`) frees every buffer it holds and
;;       reuses the source bytes (fills them with 'Z'), so a host that copied after running the
;;       collector would hand out 'Z's. Returns how many buffers were wrong.
;;   classes(lo, hi) -> buffers
;;       for k = lo..=hi: fill the memory limit with buffers of 2^(k-1)+1 bytes (each in a 2^k
;;       block), then release them all. Host memory for freed blocks must not pile up class by
;;       class past the limit (`--stats`' peak_buffer_memory).
;;   table_grow(n) -> old size|-1
;;       grows an externref table by n elements: tables count against the memory limit.
(module
  (import "wrt_v1" "buffer_from" (func $from (param i32 i32) (result i32)))
  (import "wrt_v1" "buffer_alloc" (func $alloc (param i32) (result i32)))
  (import "wrt_v1" "buffer_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "buffer_release" (func $release (param i32) (result i32)))
  ;; 0..0x8000: handles held (4 bytes each); 0x8000: a byte read back; 0x10000..: the source.
  (memory (export "memory") 8)
  (table $t 0 externref)
  (global $count (mut i32) (i32.const 0))
  (global $len (mut i32) (i32.const 0))
  ;; Whether the collector frees anything (only for copy_before_gc).
  (global $frees (mut i32) (i32.const 0))

  (func $release_all
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (global.get $count)))
        (drop (call $release (i32.load (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (global.set $count (i32.const 0)))

  (func (export "wrt_gc") (param $kind i32)
    (if (i32.eqz (global.get $frees)) (then (return)))
    (call $release_all)
    ;; The freed memory is reused for something else.
    (memory.fill (i32.const 0x10000) (i32.const 0x5a) (global.get $len)))

  (func (export "copy_before_gc") (param $n i32) (param $len i32) (result i32)
    (local $i i32) (local $h i32) (local $bad i32)
    (global.set $len (local.get $len))
    (global.set $frees (i32.const 1))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (memory.fill (i32.const 0x10000) (i32.const 0x41) (local.get $len))
        (local.set $h (call $from (i32.const 0x10000) (local.get $len)))
        (if (i32.lt_s (local.get $h) (i32.const 0)) (then (return (local.get $h))))
        (i32.store (i32.shl (global.get $count) (i32.const 2)) (local.get $h))
        (global.set $count (i32.add (global.get $count) (i32.const 1)))
        (drop (call $read (local.get $h) (i32.sub (local.get $len) (i32.const 1)) (i32.const 0x8000) (i32.const 1)))
        (if (i32.ne (i32.load8_u (i32.const 0x8000)) (i32.const 0x41))
          (then (local.set $bad (i32.add (local.get $bad) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $bad))

  (func (export "classes") (param $lo i32) (param $hi i32) (result i32)
    (local $k i32) (local $len i32) (local $h i32) (local $total i32)
    (local.set $k (local.get $lo))
    (loop $class
      (local.set $len (i32.add (i32.shl (i32.const 1) (i32.sub (local.get $k) (i32.const 1))) (i32.const 1)))
      (block $full
        (loop $fill
          (br_if $full (i32.ge_u (global.get $count) (i32.const 8192)))
          (local.set $h (call $alloc (local.get $len)))
          (br_if $full (i32.lt_s (local.get $h) (i32.const 0)))
          (i32.store (i32.shl (global.get $count) (i32.const 2)) (local.get $h))
          (global.set $count (i32.add (global.get $count) (i32.const 1)))
          (local.set $total (i32.add (local.get $total) (i32.const 1)))
          (br $fill)))
      (call $release_all)
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $class (i32.le_u (local.get $k) (local.get $hi))))
    (local.get $total))

  (func (export "table_grow") (param $n i32) (result i32)
    (table.grow $t (ref.null extern) (local.get $n))))
