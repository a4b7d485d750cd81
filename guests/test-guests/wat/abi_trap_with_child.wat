;; Spawns `sleep 4242.5` and then traps: the child must not outlive the sandbox.
;; Run with `--allow-run sleep`.
(module
  (import "wrt_v1" "spawn" (func $spawn (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "\01\00\00\00\05\00\00\00\73\6c\65\65\70\01\00\00\00\06\00\00\00\34\32\34\32\2e\35\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  (func (export "_start")
    (if (i32.le_s (call $spawn (i32.const 1024) (i32.const 55)) (i32.const 0)) (then (return)))
    unreachable))
