;; Benchmark guest: spawns `/bin/true` n times through `wrt_v1` while holding `touch`ed
;; linear memory. Run with `--allow-run /bin/true --allow-run /bin/sh`.
;;   touch(mib) -> pages        grow memory to `mib` MiB and write every 4 KiB page
;;   spawn_wait(n) -> 0|-code   spawn + wait + release, n times
;;   run_capture(n) -> 0|-code  one-shot `run` with captured output, n times
;;   sh_exec(n) -> 0|-code      spawn `/bin/sh -c 'exec /bin/true'` + wait + release, n times
;;   hold_buffers(mib) -> count|-code
;;                              allocate `mib` host buffers of 1 MiB (`buffer_alloc`), write every
;;                              byte of each (so the pages are resident) and keep them all: their
;;                              handles stay in memory at 8192.., and the guest never releases them
(module
  (import "wrt_v1" "spawn" (func $spawn (param i32 i32) (result i32)))
  (import "wrt_v1" "wait" (func $wait (param i32 i64 i32) (result i32)))
  (import "wrt_v1" "release" (func $release (param i32) (result i32)))
  (import "wrt_v1" "run" (func $run (param i32 i32 i32 i32) (result i32)))
  (import "wrt_v1" "buffer_alloc" (func $buffer_alloc (param i32) (result i32)))
  (import "wrt_v1" "buffer_write" (func $buffer_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "\01\00\00\00\09\00\00\00\2f\62\69\6e\2f\74\72\75\65\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  (data (i32.const 1280) "\01\00\00\00\07\00\00\00\2f\62\69\6e\2f\73\68\02\00\00\00\02\00\00\00\2d\63\0e\00\00\00\65\78\65\63\20\2f\62\69\6e\2f\74\72\75\65\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00\00")
  ;; io record for run: no stdin, stdout 4096+1024, stderr 5120+1024
  (data (i32.const 2048) "\00\00\00\00\00\00\00\00\00\10\00\00\00\04\00\00\00\14\00\00\00\04\00\00")
  (func (export "touch") (param $mib i32) (result i32)
    (local $need i32) (local $addr i32) (local $end i32)
    (local.set $need (i32.sub (i32.mul (local.get $mib) (i32.const 16)) (memory.size)))
    (if (i32.gt_s (local.get $need) (i32.const 0))
      (then (if (i32.eq (memory.grow (local.get $need)) (i32.const -1)) (then (return (i32.const -1))))))
    (local.set $end (i32.shl (local.get $mib) (i32.const 20)))
    (local.set $addr (i32.const 65536))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $addr) (local.get $end)))
        (i32.store8 (local.get $addr) (i32.const 1))
        (local.set $addr (i32.add (local.get $addr) (i32.const 4096)))
        (br $next)))
    (memory.size))
  (func $spawn_loop (param $n i32) (param $req i32) (param $len i32) (result i32)
    (local $h i32) (local $r i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $h (call $spawn (local.get $req) (local.get $len)))
        (if (i32.lt_s (local.get $h) (i32.const 0)) (then (return (local.get $h))))
        (local.set $r (call $wait (local.get $h) (i64.const -1) (i32.const 3072)))
        (if (i32.lt_s (local.get $r) (i32.const 0)) (then (return (local.get $r))))
        (drop (call $release (local.get $h)))
        (if (i32.load (i32.const 3076)) (then (return (i32.const -1000))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (i32.const 0))
  (func (export "spawn_wait") (param $n i32) (result i32)
    (call $spawn_loop (local.get $n) (i32.const 1024) (i32.const 49)))
  (func (export "sh_exec") (param $n i32) (result i32)
    (call $spawn_loop (local.get $n) (i32.const 1280) (i32.const 71)))
  (func (export "run_capture") (param $n i32) (result i32)
    (local $r i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $r (call $run (i32.const 1024) (i32.const 49) (i32.const 2048) (i32.const 3072)))
        (if (i32.lt_s (local.get $r) (i32.const 0)) (then (return (local.get $r))))
        (if (i32.load (i32.const 3076)) (then (return (i32.const -1000))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (i32.const 0))
  ;; Handles held by hold_buffers, stored at 8192 + 4 * i (at most 14336 of them, below 65536).
  (global $held (mut i32) (i32.const 0))
  (func (export "hold_buffers") (param $mib i32) (result i32)
    (local $h i32) (local $r i32)
    (if (i32.gt_u (i32.add (global.get $held) (local.get $mib)) (i32.const 14336)) (then (return (i32.const -9))))
    ;; 1 MiB of ones at 65536, the bytes written into every buffer.
    (if (i32.lt_u (memory.size) (i32.const 17))
      (then (if (i32.eq (memory.grow (i32.sub (i32.const 17) (memory.size))) (i32.const -1)) (then (return (i32.const -10))))))
    (memory.fill (i32.const 65536) (i32.const 1) (i32.const 0x100000))
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $mib)))
        (local.set $h (call $buffer_alloc (i32.const 0x100000)))
        (if (i32.lt_s (local.get $h) (i32.const 0)) (then (return (local.get $h))))
        (i32.store (i32.add (i32.const 8192) (i32.shl (global.get $held) (i32.const 2))) (local.get $h))
        (global.set $held (i32.add (global.get $held) (i32.const 1)))
        (local.set $r (call $buffer_write (local.get $h) (i32.const 0) (i32.const 65536) (i32.const 0x100000)))
        (if (i32.ne (local.get $r) (i32.const 0x100000))
          (then (return (select (local.get $r) (i32.const -1000) (i32.lt_s (local.get $r) (i32.const 0))))))
        (local.set $mib (i32.sub (local.get $mib) (i32.const 1)))
        (br $next)))
    (global.get $held))
  (func (export "_start")))
