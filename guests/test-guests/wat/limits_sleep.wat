;; Sleeps in `poll_oneoff` on one relative monotonic-clock subscription of as many seconds as
;; the invoked `sleep` export is given, or 10 s from `_start`: `--timeout` must stop it at the
;; deadline. `poll` calls `poll_oneoff` with any subscription pointer and count, for
;; hostile inputs.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; subscription at 0: userdata 0, tag 0 (clock), clock id 1 (monotonic) at 16, timeout at 24,
  ;; precision 0 at 32, flags 0 (relative) at 40; the event at 64, nevents at 128
  (func $sleep (export "sleep") (param $seconds i64) (result i32)
    (i32.store (i32.const 16) (i32.const 1))
    (i64.store (i32.const 24) (i64.mul (local.get $seconds) (i64.const 1000000000)))
    (if (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128)) (then unreachable))
    (i32.load (i32.const 128)))
  (func (export "poll") (param $subscriptions i32) (param $count i32) (result i32)
    (call $poll (local.get $subscriptions) (i32.const 64) (local.get $count) (i32.const 128)))
  (func (export "_start") (drop (call $sleep (i64.const 10)))))
