;; A start function that never returns: `--timeout` and `--fuel` must stop it during
;; instantiation, with the exit codes and messages of a spinning `_start`.
(module
  (func $spin (loop $again (br $again)))
  (start $spin)
  (func (export "_start")))
