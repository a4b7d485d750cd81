;; Spawns `sh -c "trap '' TERM; while :; do :; done"` (a child that ignores SIGTERM and never
;; writes) with stdout piped, then blocks reading it. Under `--timeout` the sandbox must stop the
;; guest at its deadline, not after the policy's kill grace, and kill the child.
(module
  (import "wrt_v1" "spawn" (func $spawn (param i32 i32) (result i32)))
  (import "wrt_v1" "read" (func $read (param i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 4096) "\01\00\00\00\02\00\00\00\73\68\02\00\00\00\02\00\00\00\2d\63\21\00\00\00\74\72\61\70\20\27\27\20\54\45\52\4d\3b\20\77\68\69\6c\65\20\3a\3b\20\64\6f\20\3a\3b\20\64\6f\6e\65\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  (func (export "_start") (local $h i32)
    (local.set $h (call $spawn (i32.const 4096) (i32.const 85)))
    (if (i32.le_s (local.get $h) (i32.const 0)) (then unreachable))
    (drop (call $read (local.get $h) (i32.const 1) (i32.const 0) (i32.const 100) (i32.const 0)))))
