;; touch(mib): grows memory to at least `mib` MiB and writes one byte into every 4 KiB page of
;; the first `mib` MiB, so the host has that much resident guest memory. Returns the memory
;; size in 64 KiB pages, or -1 when memory.grow fails.
(module
  (memory (export "memory") 1)
  (func (export "touch") (param $mib i32) (result i32)
    (local $need i32) (local $addr i32) (local $end i32)
    (local.set $need (i32.sub (i32.mul (local.get $mib) (i32.const 16)) (memory.size)))
    (if (i32.gt_s (local.get $need) (i32.const 0))
      (then
        (if (i32.eq (memory.grow (local.get $need)) (i32.const -1))
          (then (return (i32.const -1))))))
    (local.set $end (i32.shl (local.get $mib) (i32.const 20)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $addr) (local.get $end)))
        (i32.store8 (local.get $addr) (i32.const 1))
        (local.set $addr (i32.add (local.get $addr) (i32.const 4096)))
        (br $next)))
    (memory.size))
  (func (export "_start")))
