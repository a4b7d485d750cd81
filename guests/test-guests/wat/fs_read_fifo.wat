;; Opens `fifo` in the first preopened directory and reads from it; exits with 200 + the open's
;; errno, 100 + the read's errno, or 0 when it read bytes. A FIFO with no writer or a silent one
;; must not keep the guest past `--timeout`.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "fifo")
  ;; iovec at 16: 64 bytes at 1024
  (data (i32.const 16) "\00\04\00\00\40\00\00\00")
  (func (export "_start") (local $errno i32)
    (local.set $errno
      (call $open (i32.const 3) (i32.const 0) (i32.const 0) (i32.const 4) (i32.const 0)
        (i64.const 0x1fffffff) (i64.const 0x1fffffff) (i32.const 0) (i32.const 32)))
    (if (local.get $errno) (then (call $exit (i32.add (i32.const 200) (local.get $errno)))))
    (local.set $errno (call $read (i32.load (i32.const 32)) (i32.const 16) (i32.const 1) (i32.const 36)))
    (if (local.get $errno) (then (call $exit (i32.add (i32.const 100) (local.get $errno)))))
    (call $exit (i32.const 0))))
