;; Exports to `--invoke` with integer arguments at the edges of their types.
(module
  (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))
  (func (export "add64") (param i64 i64) (result i64) (i64.add (local.get 0) (local.get 1))))
