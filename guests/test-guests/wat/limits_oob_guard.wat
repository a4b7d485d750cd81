;; load(addr): reads the byte at `addr`. One page of memory: any address past 64 KiB traps,
;; including addresses inside wasmtime's guard region that the JIT does not bounds-check.
(module
  (memory (export "memory") 1)
  (func (export "load") (param $addr i32) (result i32)
    (i32.load8_u (local.get $addr)))
  (func (export "_start")))
