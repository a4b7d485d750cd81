;; Writes 64 KiB to stdout (fd 1) or, with the `stderr` export, to stderr (fd 2), over and over:
;; when nobody reads the pipe, `--timeout` must still stop it at the deadline.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  ;; iovec at 0: the 64 KiB at 65536; bytes written at 16
  (func $flood (param $fd i32)
    (i32.store (i32.const 0) (i32.const 65536))
    (i32.store (i32.const 4) (i32.const 65536))
    (memory.fill (i32.const 65536) (i32.const 120) (i32.const 65536))
    (loop $again
      (if (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 16)) (then unreachable))
      (br $again)))
  (func (export "stderr") (call $flood (i32.const 2)))
  (func (export "_start") (call $flood (i32.const 1))))
