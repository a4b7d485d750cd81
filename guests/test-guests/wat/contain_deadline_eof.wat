;; The deadline race of `contain_nonblocking_eof`, deterministically: spawns `sleep 1000` with
;; stdout piped, then, in straight-line code (no loop and no call into wasm, so no epoch check can
;; stop it), sleeps with WASI `poll_oneoff` past the sandbox's deadline and reads the child's stdout
;; without blocking, three times 100 ms apart. The child's own timeout (the time left, no grace)
;; ends it at the deadline, so the last read sees end of file; if it does, the guest returns and
;; exits 0. Under `--timeout 300ms` the sandbox must stop it with the timeout instead.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "spawn" (func $spawn (param i32 i32) (result i32)))
  (import "wrt_v1" "read" (func $read (param i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; Clock subscriptions (userdata, tag 0 = clock, clock id 1 = monotonic, timeout in ns):
  ;; 600 ms at 0, 100 ms at 64. Events at 128, the event count at 192, the read buffer at 256.
  (data (i32.const 0) "\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00\00\00\00\46\c3\23\00\00\00\00")
  (data (i32.const 64) "\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00\00\00\00\e1\f5\05\00\00\00\00")
  ;; The spawn request: version 1, `sleep`, args [`1000`], no env, default cwd, stdin null,
  ;; stdout piped, stderr null, no timeout or output limit of its own.
  (data (i32.const 4096) "\01\00\00\00\05\00\00\00sleep\01\00\00\00\04\00\00\001000\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  (func (export "_start") (local $h i32)
    (local.set $h (call $spawn (i32.const 4096) (i32.const 53)))
    (if (i32.le_s (local.get $h) (i32.const 0)) (then unreachable))
    ;; Past the deadline.
    (drop (call $poll_oneoff (i32.const 0) (i32.const 128) (i32.const 1) (i32.const 192)))
    ;; SIGTERM is due: the first read sends it, the next SIGKILL; then end of file.
    (drop (call $read (local.get $h) (i32.const 1) (i32.const 256) (i32.const 100) (i32.const 1)))
    (drop (call $poll_oneoff (i32.const 64) (i32.const 128) (i32.const 1) (i32.const 192)))
    (drop (call $read (local.get $h) (i32.const 1) (i32.const 256) (i32.const 100) (i32.const 1)))
    (drop (call $poll_oneoff (i32.const 64) (i32.const 128) (i32.const 1) (i32.const 192)))
    (if (i32.ne (call $read (local.get $h) (i32.const 1) (i32.const 256) (i32.const 100) (i32.const 1)) (i32.const 0))
      (then unreachable))))
