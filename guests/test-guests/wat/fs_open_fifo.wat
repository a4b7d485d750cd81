;; Opens `fifo` in the first preopened directory for reading (`write` 0) or for writing only
;; (`write` 1), which waits for the other end, and returns the open's errno (0 when it opened).
;; Neither may keep the guest past `--timeout`.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "fifo")
  ;; FD_READ is right 1 << 1, FD_WRITE 1 << 6.
  (func (export "open") (param $write i32) (result i32)
    (call $open (i32.const 3) (i32.const 0) (i32.const 0) (i32.const 4) (i32.const 0)
      (select (i64.const 64) (i64.const 2) (local.get $write)) (i64.const 0) (i32.const 0) (i32.const 32))))
