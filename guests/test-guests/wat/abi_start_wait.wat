;; A start function that spawns `sleep 1001.5` and waits for it: `--timeout` must stop the guest
;; during instantiation and the child must end with it. Run with `--allow-run sleep`.
(module
  (import "wrt_v1" "spawn" (func $spawn (param i32 i32) (result i32)))
  (import "wrt_v1" "wait" (func $wait (param i32 i64 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "\01\00\00\00\05\00\00\00\73\6c\65\65\70\01\00\00\00\06\00\00\00\31\30\30\31\2e\35\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  (func $start (local $h i32)
    (local.set $h (call $spawn (i32.const 1024) (i32.const 55)))
    (if (i32.le_s (local.get $h) (i32.const 0)) (then unreachable))
    (drop (call $wait (local.get $h) (i64.const 100000000) (i32.const 2048))))
  (start $start)
  (func (export "_start")))
