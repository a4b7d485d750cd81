;; Exports `wrt_gc` with the wrong type: the collector hook is `(func (param i32))`, and wrt
;; refuses to run a guest whose hook it could not call.
(module
  (memory (export "memory") 1)
  (func (export "wrt_gc") (param i64))
  (func (export "_start")))
