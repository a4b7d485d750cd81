;; Runs `sh -c "trap '' TERM; while :; do :; done"` (a child that ignores SIGTERM) with the
;; one-shot `run`. Under `--timeout` the sandbox must stop the guest at its deadline, not after
;; the policy's kill grace, and kill the child.
(module
  (import "wrt_v1" "run" (func $run (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 4096) "\01\00\00\00\02\00\00\00\73\68\02\00\00\00\02\00\00\00\2d\63\21\00\00\00\74\72\61\70\20\27\27\20\54\45\52\4d\3b\20\77\68\69\6c\65\20\3a\3b\20\64\6f\20\3a\3b\20\64\6f\6e\65\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  ;; io record: no stdin, stdout 8192+1024, stderr 9216+1024
  (data (i32.const 1024) "\00\00\00\00\00\00\00\00\00\20\00\00\00\04\00\00\00\24\00\00\00\04\00\00")
  (func (export "_start")
    (drop (call $run (i32.const 4096) (i32.const 85) (i32.const 1024) (i32.const 2048)))))
