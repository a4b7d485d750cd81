;; Imports a function wrt does not provide: instantiation must fail naming it.
(module
  (import "env" "does_not_exist" (func $missing))
  (func (export "_start") (call $missing)))
