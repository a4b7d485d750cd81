;; The output `run` captures counts against the memory limit: a guest that touched 100 MiB of
;; its memory asks `run` to capture `head -c 104857600 /dev/zero` into all of it.
;;   touch() -> 0
;;       fills 0x10000.. (100 MiB) with 'A'.
;;   run_head() -> stdout bytes | -code
;;       touch(), then `run` with stdout_cap 100 MiB at 0x10000; returns the bytes written to
;;       the stdout buffer (the status record's field at 48), or the error code.
(module
  (import "wrt_v1" "run" (func $run (param i32 i32 i32 i32) (result i32)))
  ;; 0..76: the spawn request; 0x200: the io record; 0x300: the run status record.
  (memory (export "memory") 1601)
  (data (i32.const 0)
    "\01\00\00\00"                      ;; version
    "\04\00\00\00head"                  ;; program
    "\03\00\00\00"                      ;; argc
    "\02\00\00\00-c"
    "\09\00\00\00104857600"
    "\09\00\00\00/dev/zero"
    "\00\00\00\00"                      ;; envc
    "\00\00\00\00"                      ;; cwd: the policy's
    "\00\01\01\00"                      ;; stdin, stdout, stderr, flags
    "\00\00\00\00\00\00\00\00"          ;; timeout_ms: the policy's
    "\00\00\00\00\00\00\00\00")         ;; output_limit: the policy's

  (func $touch (export "touch") (result i32)
    (memory.fill (i32.const 0x10000) (i32.const 0x41) (i32.const 0x6400000))
    (i32.const 0))

  (func (export "run_head") (result i32)
    (local $ret i32)
    (drop (call $touch))
    (i32.store (i32.const 0x200) (i32.const 0))
    (i32.store (i32.const 0x204) (i32.const 0))
    (i32.store (i32.const 0x208) (i32.const 0x10000))
    (i32.store (i32.const 0x20c) (i32.const 0x6400000))
    (i32.store (i32.const 0x210) (i32.const 0x10000))
    (i32.store (i32.const 0x214) (i32.const 0))
    (local.set $ret (call $run (i32.const 0) (i32.const 76) (i32.const 0x200) (i32.const 0x300)))
    (if (i32.lt_s (local.get $ret) (i32.const 0)) (then (return (local.get $ret))))
    (i32.load (i32.const 0x330)))
)
