;; A start function that calls `proc_exit(7)`: the exit is the guest's, not a failure to
;; instantiate, and `_start` (which traps) never runs.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (func $start (call $exit (i32.const 7)))
  (start $start)
  (func (export "_start") unreachable))
