;; WASI calls whose sizes come from the guest, at sizes near a 64 MiB memory limit (the linear
;; memory is 50 MiB). Each export returns the call's errno (or a byte count), for the tests that
;; measure the host's peak RSS meanwhile.
;;   random(len) -> errno              random_get of `len` bytes at 0x10000
;;   poll(n) -> errno                  poll_oneoff of `n` clock subscriptions that are due at once
;;   path(which, len) -> errno         path function `which` (see $path) with a path of `len` 'a's
;;   read(len) -> n | -errno           fd_read of `len` bytes of the file `big` in fd 3
;;   write(len) -> n | -errno          fd_write of `len` bytes to a new file `out` in fd 3
(module
  (import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_create_directory" (func $mkdir (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_get" (func $stat (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_set_times"
    (func $utimes (param i32 i32 i32 i32 i64 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_link" (func $link (param i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_readlink" (func $readlink (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_remove_directory" (func $rmdir (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_rename" (func $rename (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_symlink" (func $symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_unlink_file" (func $unlink (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  ;; 0x100: "b" (the short path); 0x110: "big"; 0x120: "out"; 0x200..0x400: results and iovecs;
  ;; 0x10000..: the data.
  (memory (export "memory") 800)
  (data (i32.const 0x100) "b")
  (data (i32.const 0x110) "big")
  (data (i32.const 0x120) "out")

  (func (export "random") (param $len i32) (result i32)
    (call $random (i32.const 0x10000) (local.get $len)))

  ;; Zeroed subscriptions are relative realtime clocks of 0 ns; the events follow them.
  (func (export "poll") (param $n i32) (result i32)
    (call $poll (i32.const 0x10000) (i32.add (i32.const 0x10000) (i32.mul (local.get $n) (i32.const 48)))
      (local.get $n) (i32.const 0x200)))

  ;; $which: 0 create_directory, 1 filestat_get, 2 filestat_set_times, 3 link (old path long),
  ;; 4 link (new path long), 5 open, 6 readlink, 7 remove_directory, 8 rename (old long),
  ;; 9 rename (new long), 10 symlink (target long), 11 symlink (link long), 12 unlink_file.
  (func (export "path") (param $which i32) (param $len i32) (result i32)
    (local $p i32) (local $l i32)
    (local.set $p (i32.const 0x10000))
    (local.set $l (local.get $len))
    (memory.fill (local.get $p) (i32.const 0x61) (local.get $l))
    (block $12 (block $11 (block $10 (block $9 (block $8 (block $7 (block $6 (block $5 (block $4
    (block $3 (block $2 (block $1 (block $0
      (br_table $0 $1 $2 $3 $4 $5 $6 $7 $8 $9 $10 $11 $12 (local.get $which)))
      (return (call $mkdir (i32.const 3) (local.get $p) (local.get $l))))
      (return (call $stat (i32.const 3) (i32.const 0) (local.get $p) (local.get $l) (i32.const 0x200))))
      (return (call $utimes (i32.const 3) (i32.const 0) (local.get $p) (local.get $l)
        (i64.const 0) (i64.const 0) (i32.const 0))))
      (return (call $link (i32.const 3) (i32.const 0) (local.get $p) (local.get $l)
        (i32.const 3) (i32.const 0x100) (i32.const 1))))
      (return (call $link (i32.const 3) (i32.const 0) (i32.const 0x100) (i32.const 1)
        (i32.const 3) (local.get $p) (local.get $l))))
      (return (call $open (i32.const 3) (i32.const 0) (local.get $p) (local.get $l) (i32.const 0)
        (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 0x200))))
      (return (call $readlink (i32.const 3) (local.get $p) (local.get $l) (i32.const 0x200) (i32.const 64)
        (i32.const 0x300))))
      (return (call $rmdir (i32.const 3) (local.get $p) (local.get $l))))
      (return (call $rename (i32.const 3) (local.get $p) (local.get $l) (i32.const 3) (i32.const 0x100)
        (i32.const 1))))
      (return (call $rename (i32.const 3) (i32.const 0x100) (i32.const 1) (i32.const 3) (local.get $p)
        (local.get $l))))
      (return (call $symlink (local.get $p) (local.get $l) (i32.const 3) (i32.const 0x100) (i32.const 1))))
      (return (call $symlink (i32.const 0x100) (i32.const 1) (i32.const 3) (local.get $p) (local.get $l))))
    (call $unlink (i32.const 3) (local.get $p) (local.get $l)))

  ;; An iovec of `len` bytes at 0x10000, at 0x200.
  (func $iovec (param $len i32)
    (i32.store (i32.const 0x200) (i32.const 0x10000))
    (i32.store (i32.const 0x204) (local.get $len)))

  ;; Opens `name` (3 bytes at `path`) in fd 3 with `oflags` and `rights`: the fd, or -errno.
  (func $open3 (param $path i32) (param $oflags i32) (param $rights i64) (result i32)
    (local $errno i32)
    (local.set $errno (call $open (i32.const 3) (i32.const 0) (local.get $path) (i32.const 3)
      (local.get $oflags) (local.get $rights) (i64.const 0) (i32.const 0) (i32.const 0x210)))
    (if (result i32) (local.get $errno)
      (then (i32.sub (i32.const 0) (local.get $errno)))
      (else (i32.load (i32.const 0x210)))))

  ;; Reads or writes with fd_read or fd_write (`write` set): n, or -errno.
  (func $transfer (param $fd i32) (param $len i32) (param $write i32) (result i32)
    (local $errno i32)
    (if (i32.lt_s (local.get $fd) (i32.const 0)) (then (return (local.get $fd))))
    (call $iovec (local.get $len))
    (local.set $errno
      (if (result i32) (local.get $write)
        (then (call $write (local.get $fd) (i32.const 0x200) (i32.const 1) (i32.const 0x220)))
        (else (call $read (local.get $fd) (i32.const 0x200) (i32.const 1) (i32.const 0x220)))))
    (if (result i32) (local.get $errno)
      (then (i32.sub (i32.const 0) (local.get $errno)))
      (else (i32.load (i32.const 0x220)))))

  ;; FD_READ is right 1 << 1, FD_WRITE 1 << 6; O_CREAT | O_TRUNC are oflags 1 | 8.
  (func (export "read") (param $len i32) (result i32)
    (call $transfer (call $open3 (i32.const 0x110) (i32.const 0) (i64.const 2)) (local.get $len) (i32.const 0)))

  (func (export "write") (param $len i32) (result i32)
    (memory.fill (i32.const 0x10000) (i32.const 0x77) (local.get $len))
    (call $transfer (call $open3 (i32.const 0x120) (i32.const 9) (i64.const 64)) (local.get $len) (i32.const 1)))
)
