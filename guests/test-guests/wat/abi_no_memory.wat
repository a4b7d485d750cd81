;; A guest without an exported memory: every host function that takes a pointer answers
;; OUT_OF_BOUNDS (-12) instead of trapping. Exits 0 when it does, 1 otherwise.
(module
  (import "wrt_v1" "spawn" (func $spawn (param i32 i32) (result i32)))
  (import "wrt_v1" "last_error" (func $last_error (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (func (export "_start")
    (if (i32.ne (call $spawn (i32.const 0) (i32.const 0)) (i32.const -12)) (then (call $exit (i32.const 1))))
    (if (i32.ne (call $last_error (i32.const 0) (i32.const 0)) (i32.const -12)) (then (call $exit (i32.const 2))))))
