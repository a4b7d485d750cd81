;; Throws every kind of bad input at every host function of `wrt_v1` and checks each gets
;; its documented error code (docs/abi.md) while the host stays up. Run with `--allow-run true`.
;; Exits 0 when every check passes, or with the number of the first failing check:
;;     1: spawn: request starts at the end of memory
;;     2: spawn: ptr+len overflows 32 bits
;;     3: spawn: length of 4 GiB - 1
;;     4: spawn: empty request
;;     5: spawn: unknown version
;;     6: spawn: program not UTF-8
;;     7: spawn: NUL byte in an argument
;;     8: spawn: argc larger than the request
;;     9: spawn: trailing bytes
;;    10: spawn: unknown stdio mode
;;    11: spawn: non-zero flags
;;    12: spawn: empty program
;;    13: spawn: program without allow rule
;;    14: spawn: a path no rule names is denied, whether it exists or not
;;    15: last_error: a message is kept
;;    16: last_error: buffer outside memory
;;    17: spawn: `true` is allowed and gets a handle
;;    18: write: unknown handle
;;    19: write: buffer outside memory
;;    20: write: unknown flag
;;    21: write: stdin not piped
;;    22: read: unknown stream
;;    23: read: buffer wraps around
;;    24: read: unknown flag
;;    25: read: stderr not piped
;;    26: read: unknown handle
;;    27: close_stdin: stdin not piped
;;    28: close_stdin: handle 0
;;    29: poll: empty interest
;;    30: poll: unknown interest bit
;;    31: poll: negative handle
;;    32: wait: status record crosses the end of memory
;;    33: wait: unknown handle
;;    34: wait_any: no handles
;;    35: wait_any: too many handles
;;    36: wait_any: array crosses the end of memory
;;    37: wait_any: status outside memory
;;    38: wait_any: a bad handle in the array
;;    39: poll: exit becomes ready
;;    40: wait: the child ended
;;    41: wait: status says exited
;;    42: wait: exit code 0
;;    43: wait_any: reports the ended child
;;    44: kill: signal 0
;;    45: kill: signal 32
;;    46: kill: negative signal
;;    47: kill: unknown handle
;;    48: kill: an ended child is fine
;;    49: release
;;    50: release: twice
;;    51: wait: released handle
;;    52: kill: released handle
;;    53: read: released handle
;;    54: run: io record outside memory
;;    55: run: stdout buffer overflows 32 bits
;;    56: run: status record crosses the end of memory
;;    57: run: malformed request
;;    58: run: denied program
;;    59: run: `true` runs
;;    60: run: exit code 0
(module
  (import "wrt_v1" "spawn" (func $spawn (param i32 i32) (result i32)))
  (import "wrt_v1" "write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "close_stdin" (func $close_stdin (param i32) (result i32)))
  (import "wrt_v1" "read" (func $read (param i32 i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "poll" (func $poll (param i32 i32 i64) (result i32)))
  (import "wrt_v1" "wait" (func $wait (param i32 i64 i32) (result i32)))
  (import "wrt_v1" "wait_any" (func $wait_any (param i32 i32 i64 i32) (result i32)))
  (import "wrt_v1" "kill" (func $kill (param i32 i32) (result i32)))
  (import "wrt_v1" "release" (func $release (param i32) (result i32)))
  (import "wrt_v1" "run" (func $run (param i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "last_error" (func $last_error (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $h (mut i32) (i32.const 0))
  ;; io record for `run` whose stdout buffer wraps past 4 GiB
  (data (i32.const 3072) "\00\00\00\00\00\00\00\00\00\ff\ff\ff\00\10\00\00\00\00\00\00\00\00\00\00")
  ;; a good io record for `run`: no stdin, stdout at 4352 (256 bytes), stderr at 4608 (256)
  (data (i32.const 3200) "\00\00\00\00\00\00\00\00\00\11\00\00\00\01\00\00\00\12\00\00\00\01\00\00")
  (data (i32.const 5000) "every bad input got its documented error code\0a")
  (data (i32.const 8192) "\01\00\00\00\04\00\00\00\74\72\75\65\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; TRUE: 44 bytes
  (data (i32.const 8256) "\02\00\00\00\04\00\00\00\74\72\75\65\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; V2: 44 bytes
  (data (i32.const 8320) "\01\00\00\00\05\00\00\00\74\72\ff\75\65\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; BADUTF8: 45 bytes
  (data (i32.const 8384) "\01\00\00\00\04\00\00\00\74\72\75\65\01\00\00\00\03\00\00\00\61\00\62\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; NULARG: 51 bytes
  (data (i32.const 8464) "\01\00\00\00\04\00\00\00\74\72\75\65\ff\ff\ff\7f\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; HUGEARGC: 44 bytes
  (data (i32.const 8528) "\01\00\00\00\04\00\00\00\74\72\75\65\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; TRAILING: 45 bytes
  (data (i32.const 8592) "\01\00\00\00\02\00\00\00\6c\73\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; DENIED: 42 bytes
  (data (i32.const 8656) "\01\00\00\00\14\00\00\00\2f\6e\6f\6e\65\78\69\73\74\65\6e\74\2f\70\72\6f\67\72\61\6d\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; MISSING: 60 bytes
  (data (i32.const 8736) "\01\00\00\00\04\00\00\00\74\72\75\65\00\00\00\00\00\00\00\00\00\00\00\00\03\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; BADMODE: 44 bytes
  (data (i32.const 8800) "\01\00\00\00\04\00\00\00\74\72\75\65\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\01\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; FLAGS: 44 bytes
  (data (i32.const 8864) "\01\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00") ;; EMPTYPROG: 40 bytes
  (func $check (param $got i32) (param $want i32) (param $case i32)
    (if (i32.ne (local.get $got) (local.get $want)) (then (call $exit (local.get $case)))))
  (func $wait_any_bad (result i32)
    (i32.store (i32.const 4096) (global.get $h))
    (i32.store (i32.const 4100) (i32.const 9999))
    (call $wait_any (i32.const 4096) (i32.const 2) (i64.const 0) (i32.const 1024)))
  (func $wait_any_good (result i32)
    (i32.store (i32.const 4096) (global.get $h))
    (call $wait_any (i32.const 4096) (i32.const 1) (i64.const -1) (i32.const 1024)))
  (func (export "_start")
    (call $check (call $spawn (i32.const 65536) (i32.const 1)) (i32.const -12) (i32.const 1)) ;; spawn: request starts at the end of memory
    (call $check (call $spawn (i32.const -16) (i32.const 32)) (i32.const -12) (i32.const 2)) ;; spawn: ptr+len overflows 32 bits
    (call $check (call $spawn (i32.const 0) (i32.const -1)) (i32.const -12) (i32.const 3)) ;; spawn: length of 4 GiB - 1
    (call $check (call $spawn (i32.const 0) (i32.const 0)) (i32.const -9) (i32.const 4)) ;; spawn: empty request
    (call $check (call $spawn (i32.const 8256) (i32.const 44)) (i32.const -9) (i32.const 5)) ;; spawn: unknown version
    (call $check (call $spawn (i32.const 8320) (i32.const 45)) (i32.const -13) (i32.const 6)) ;; spawn: program not UTF-8
    (call $check (call $spawn (i32.const 8384) (i32.const 51)) (i32.const -9) (i32.const 7)) ;; spawn: NUL byte in an argument
    (call $check (call $spawn (i32.const 8464) (i32.const 44)) (i32.const -9) (i32.const 8)) ;; spawn: argc larger than the request
    (call $check (call $spawn (i32.const 8528) (i32.const 45)) (i32.const -9) (i32.const 9)) ;; spawn: trailing bytes
    (call $check (call $spawn (i32.const 8736) (i32.const 44)) (i32.const -9) (i32.const 10)) ;; spawn: unknown stdio mode
    (call $check (call $spawn (i32.const 8800) (i32.const 44)) (i32.const -9) (i32.const 11)) ;; spawn: non-zero flags
    (call $check (call $spawn (i32.const 8864) (i32.const 40)) (i32.const -9) (i32.const 12)) ;; spawn: empty program
    (call $check (call $spawn (i32.const 8592) (i32.const 42)) (i32.const -1) (i32.const 13)) ;; spawn: program without allow rule
    (call $check (call $spawn (i32.const 8656) (i32.const 60)) (i32.const -1) (i32.const 14)) ;; spawn: a path no rule names is denied, whether it exists or not
    (call $check (i32.gt_s (call $last_error (i32.const 0) (i32.const 0)) (i32.const 0)) (i32.const 1) (i32.const 15)) ;; last_error: a message is kept
    (call $check (call $last_error (i32.const 65536) (i32.const 10)) (i32.const -12) (i32.const 16)) ;; last_error: buffer outside memory
    (global.set $h (call $spawn (i32.const 8192) (i32.const 44)))
    (call $check (i32.gt_s (global.get $h) (i32.const 0)) (i32.const 1) (i32.const 17)) ;; spawn: `true` is allowed and gets a handle
    (call $check (call $write (i32.const 9999) (i32.const 0) (i32.const 0) (i32.const 0)) (i32.const -8) (i32.const 18)) ;; write: unknown handle
    (call $check (call $write (global.get $h) (i32.const 65536) (i32.const 1) (i32.const 0)) (i32.const -12) (i32.const 19)) ;; write: buffer outside memory
    (call $check (call $write (global.get $h) (i32.const 0) (i32.const 0) (i32.const 2)) (i32.const -9) (i32.const 20)) ;; write: unknown flag
    (call $check (call $write (global.get $h) (i32.const 0) (i32.const 4) (i32.const 0)) (i32.const -14) (i32.const 21)) ;; write: stdin not piped
    (call $check (call $read (global.get $h) (i32.const 3) (i32.const 0) (i32.const 16) (i32.const 0)) (i32.const -9) (i32.const 22)) ;; read: unknown stream
    (call $check (call $read (global.get $h) (i32.const 1) (i32.const -8) (i32.const 16) (i32.const 0)) (i32.const -12) (i32.const 23)) ;; read: buffer wraps around
    (call $check (call $read (global.get $h) (i32.const 1) (i32.const 0) (i32.const 16) (i32.const 4)) (i32.const -9) (i32.const 24)) ;; read: unknown flag
    (call $check (call $read (global.get $h) (i32.const 2) (i32.const 0) (i32.const 16) (i32.const 1)) (i32.const -14) (i32.const 25)) ;; read: stderr not piped
    (call $check (call $read (i32.const 9999) (i32.const 1) (i32.const 0) (i32.const 16) (i32.const 0)) (i32.const -8) (i32.const 26)) ;; read: unknown handle
    (call $check (call $close_stdin (global.get $h)) (i32.const -14) (i32.const 27)) ;; close_stdin: stdin not piped
    (call $check (call $close_stdin (i32.const 0)) (i32.const -8) (i32.const 28)) ;; close_stdin: handle 0
    (call $check (call $poll (global.get $h) (i32.const 0) (i64.const 0)) (i32.const -9) (i32.const 29)) ;; poll: empty interest
    (call $check (call $poll (global.get $h) (i32.const 16) (i64.const 0)) (i32.const -9) (i32.const 30)) ;; poll: unknown interest bit
    (call $check (call $poll (i32.const -1) (i32.const 8) (i64.const 0)) (i32.const -8) (i32.const 31)) ;; poll: negative handle
    (call $check (call $wait (global.get $h) (i64.const -1) (i32.const 65528)) (i32.const -12) (i32.const 32)) ;; wait: status record crosses the end of memory
    (call $check (call $wait (i32.const 9999) (i64.const 0) (i32.const 1024)) (i32.const -8) (i32.const 33)) ;; wait: unknown handle
    (call $check (call $wait_any (i32.const 4096) (i32.const 0) (i64.const 0) (i32.const 1024)) (i32.const -9) (i32.const 34)) ;; wait_any: no handles
    (call $check (call $wait_any (i32.const 4096) (i32.const 1025) (i64.const 0) (i32.const 1024)) (i32.const -9) (i32.const 35)) ;; wait_any: too many handles
    (call $check (call $wait_any (i32.const 65532) (i32.const 2) (i64.const 0) (i32.const 1024)) (i32.const -12) (i32.const 36)) ;; wait_any: array crosses the end of memory
    (call $check (call $wait_any (i32.const 4096) (i32.const 2) (i64.const 0) (i32.const 65535)) (i32.const -12) (i32.const 37)) ;; wait_any: status outside memory
    (call $check (call $wait_any_bad) (i32.const -8) (i32.const 38)) ;; wait_any: a bad handle in the array
    (call $check (call $poll (global.get $h) (i32.const 8) (i64.const -1)) (i32.const 8) (i32.const 39)) ;; poll: exit becomes ready
    (call $check (call $wait (global.get $h) (i64.const -1) (i32.const 1024)) (i32.const 0) (i32.const 40)) ;; wait: the child ended
    (call $check (i32.load (i32.const 1024)) (i32.const 1) (i32.const 41)) ;; wait: status says exited
    (call $check (i32.load (i32.const 1028)) (i32.const 0) (i32.const 42)) ;; wait: exit code 0
    (call $check (call $wait_any_good) (i32.const 0) (i32.const 43)) ;; wait_any: reports the ended child
    (call $check (call $kill (global.get $h) (i32.const 0)) (i32.const -9) (i32.const 44)) ;; kill: signal 0
    (call $check (call $kill (global.get $h) (i32.const 32)) (i32.const -9) (i32.const 45)) ;; kill: signal 32
    (call $check (call $kill (global.get $h) (i32.const -5)) (i32.const -9) (i32.const 46)) ;; kill: negative signal
    (call $check (call $kill (i32.const 9999) (i32.const 9)) (i32.const -8) (i32.const 47)) ;; kill: unknown handle
    (call $check (call $kill (global.get $h) (i32.const 9)) (i32.const 0) (i32.const 48)) ;; kill: an ended child is fine
    (call $check (call $release (global.get $h)) (i32.const 0) (i32.const 49)) ;; release
    (call $check (call $release (global.get $h)) (i32.const -8) (i32.const 50)) ;; release: twice
    (call $check (call $wait (global.get $h) (i64.const 0) (i32.const 1024)) (i32.const -8) (i32.const 51)) ;; wait: released handle
    (call $check (call $kill (global.get $h) (i32.const 9)) (i32.const -8) (i32.const 52)) ;; kill: released handle
    (call $check (call $read (global.get $h) (i32.const 1) (i32.const 0) (i32.const 16) (i32.const 1)) (i32.const -8) (i32.const 53)) ;; read: released handle
    (call $check (call $run (i32.const 8192) (i32.const 44) (i32.const 65536) (i32.const 1024)) (i32.const -12) (i32.const 54)) ;; run: io record outside memory
    (call $check (call $run (i32.const 8192) (i32.const 44) (i32.const 3072) (i32.const 1024)) (i32.const -12) (i32.const 55)) ;; run: stdout buffer overflows 32 bits
    (call $check (call $run (i32.const 8192) (i32.const 44) (i32.const 3200) (i32.const 65500)) (i32.const -12) (i32.const 56)) ;; run: status record crosses the end of memory
    (call $check (call $run (i32.const 8256) (i32.const 44) (i32.const 3200) (i32.const 1024)) (i32.const -9) (i32.const 57)) ;; run: malformed request
    (call $check (call $run (i32.const 8592) (i32.const 42) (i32.const 3200) (i32.const 1024)) (i32.const -1) (i32.const 58)) ;; run: denied program
    (call $check (call $run (i32.const 8192) (i32.const 44) (i32.const 3200) (i32.const 1024)) (i32.const 0) (i32.const 59)) ;; run: `true` runs
    (call $check (i32.load (i32.const 1028)) (i32.const 0) (i32.const 60)) ;; run: exit code 0
    (i32.store (i32.const 4000) (i32.const 5000))
    (i32.store (i32.const 4004) (i32.const 46))
    (drop (call $fd_write (i32.const 1) (i32.const 4000) (i32.const 1) (i32.const 4008)))))
