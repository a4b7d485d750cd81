;; A guest with its own "collector": it keeps only its newest host buffer reachable, and its
;; `wrt_gc` hook (docs/abi.md, "Collections") releases every older one, which is what a GC
;; language's finalisers do. The hook also allocates and releases a buffer of its own, which
;; must not start another collection.
;;
;; `run(n)` allocates n buffers of 128 KiB and returns how often the host called `wrt_gc`, or
;; the error code of the first failed allocation. `run_slow(n, spin)` does the same with a
;; collector that also counts to `spin` each time, as one with a large heap to mark would take.
(module
  (import "wrt_v1" "buffer_alloc" (func $alloc (param i32) (result i32)))
  (import "wrt_v1" "buffer_release" (func $release (param i32) (result i32)))
  (memory (export "memory") 1)
  ;; The newest buffer, and the oldest one not yet released.
  (global $newest (mut i32) (i32.const 0))
  (global $oldest (mut i32) (i32.const 0))
  (global $calls (mut i32) (i32.const 0))
  (global $in_hook (mut i32) (i32.const 0))
  ;; How far the collector counts each time, and what it counted.
  (global $spin (mut i32) (i32.const 0))
  (global $counted (mut i32) (i32.const 0))

  (func (export "wrt_gc") (param $kind i32)
    (local $h i32)
    ;; A collection inside a collection would be a host bug.
    (if (global.get $in_hook) (then unreachable))
    (global.set $in_hook (i32.const 1))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    ;; Handles are handed out in increasing order: release oldest..newest-1.
    (local.set $h (global.get $oldest))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $h) (global.get $newest)))
        ;; 0, or BAD_HANDLE for a handle the hook itself allocated and released earlier.
        (block $ok
          (br_if $ok (i32.eqz (call $release (local.get $h))))
          (br_if $ok (i32.eq (call $release (local.get $h)) (i32.const -8)))
          unreachable)
        (local.set $h (i32.add (local.get $h) (i32.const 1)))
        (br $next)))
    (global.set $oldest (global.get $newest))
    (local.set $h (i32.const 0))
    (block $spun
      (loop $count
        (br_if $spun (i32.ge_u (local.get $h) (global.get $spin)))
        (global.set $counted (i32.add (global.get $counted) (i32.const 1)))
        (local.set $h (i32.add (local.get $h) (i32.const 1)))
        (br $count)))
    ;; Allocating from the hook works and collects nothing.
    ;; (At the memory limit, with everything live, it may get NO_MEMORY instead.)
    (local.set $h (call $alloc (i32.const 4096)))
    (if (i32.ge_s (local.get $h) (i32.const 0))
      (then (drop (call $release (local.get $h))))
      (else (if (i32.ne (local.get $h) (i32.const -10)) (then unreachable))))
    (global.set $in_hook (i32.const 0)))

  (func $run (export "run") (param $n i32) (result i32)
    (local $i i32)
    (local $h i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $h (call $alloc (i32.const 131072)))
        (if (i32.lt_s (local.get $h) (i32.const 0)) (then (return (local.get $h))))
        ;; Handles allocated inside the hook are released there; the next one is the newest.
        (if (i32.eqz (global.get $oldest)) (then (global.set $oldest (local.get $h))))
        (global.set $newest (local.get $h))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (global.get $calls))

  (func (export "run_slow") (param $n i32) (param $spin i32) (result i32)
    (global.set $spin (local.get $spin))
    (call $run (local.get $n)))

  ;; Keeps every buffer: returns the error code once the limit is reached.
  (func (export "hold") (param $n i32) (result i32)
    (local $i i32)
    (local $h i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $h (call $alloc (i32.const 1048576)))
        (if (i32.lt_s (local.get $h) (i32.const 0)) (then (return (local.get $h))))
        (global.set $newest (i32.const 0))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))
)
