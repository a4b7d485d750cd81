;; A start function that traps: `wrt run` exits 134 as for a trap in `_start`, not 2.
(module
  (func $boom unreachable)
  (start $boom)
  (func (export "_start")))
