;; The readable-push-buffer-burst workload (shared/peers/readable-burst.js, research/seeds.md D5)
;; with buffers held as `externref`. Per iteration the four large chunks (1 KiB of `a`, 2 KiB of
;; `b`, BODY bytes of `c`, 2 KiB of `d`, prepared once in linear memory) become buffers with
;; ref_from; a buffer for the whole page is allocated with ref_alloc and filled with ref_copy (the
;; chunks) and ref_write (the five small HTML strings, which stay in linear memory: <= 64 bytes);
;; then every reference is dropped. Nothing is released: wasmtime's collector frees the buffers
;; when the host collects.
;;
;;     wrt run ref_burst.wat [N [BODY]]             (defaults: 20000 and 122880, as the seed)
;;     wrt run --invoke burst ref_burst.wat N BODY
;;
;; `_start` exits with, and `burst` returns, 0 on success or the number of the failed check:
;;     1-4: ref_from of chunk a, b, c, d returned null
;;       5: ref_alloc of the page returned null
;;    6-14: a ref_write (6, 8, 10, 12, 14) or ref_copy (7, 9, 11, 13) did not return its length
;;      15: ref_len of the page is not the total
;;      16: the first page's bytes are not the strings and chunks one after another
;;      90: BODY past 1 GiB
;;      91: memory.grow failed
;;     100: N or BODY is not a decimal number (or the arguments do not fit)
(module
  (import "wrt_v1" "ref_from" (func $ref_from (param i32 i32) (result externref)))
  (import "wrt_v1" "ref_alloc" (func $ref_alloc (param i32) (result externref)))
  (import "wrt_v1" "ref_len" (func $ref_len (param externref) (result i32)))
  (import "wrt_v1" "ref_read" (func $ref_read (param externref i32 i32 i32) (result i32)))
  (import "wrt_v1" "ref_write" (func $ref_write (param externref i32 i32 i32) (result i32)))
  (import "wrt_v1" "ref_copy" (func $ref_copy (param externref i32 externref) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  ;; Layout: 256 the five strings; 512 argc and the size of argv; 1024 argv (64 pointers);
  ;; 1536..4096 the argument bytes; 65536 chunk a, 66560 b, 68608 d, 70656 c (BODY bytes); then
  ;; the expected page and the first page read back (grown to fit).
  (memory (export "memory") 2)
  (data (i32.const 256) "<!doctype html><html><head><title>burst</title><style>") ;; 54
  (data (i32.const 320) "</style></head><body><header>") ;; 29
  (data (i32.const 352) "</header><main>") ;; 15
  (data (i32.const 368) "</main><script>") ;; 15
  (data (i32.const 384) "</script></body></html>") ;; 23
  ;; The five strings (136 bytes) and the chunks other than the body (5 KiB).
  (global $fixed i32 (i32.const 5256))

  ;; Copies `len` bytes from `src` to `p`; returns the end of the copy.
  (func $append (param $p i32) (param $src i32) (param $len i32) (result i32)
    (memory.copy (local.get $p) (local.get $src) (local.get $len))
    (i32.add (local.get $p) (local.get $len)))

  ;; 1 when `len` bytes at `a` and `b` are equal.
  (func $eq (param $a i32) (param $b i32) (param $len i32) (result i32)
    (block $differ
      (loop $bytes
        (if (i32.eqz (local.get $len)) (then (return (i32.const 1))))
        (br_if $differ (i32.ne (i32.load8_u (local.get $a)) (i32.load8_u (local.get $b))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (local.set $len (i32.sub (local.get $len) (i32.const 1)))
        (br $bytes)))
    (i32.const 0))

  (func $burst (export "burst") (param $n i32) (param $body i32) (result i32)
    (local $total i32) (local $exp i32) (local $got i32) (local $need i32) (local $have i32)
    (local $i i32) (local $off i32)
    (local $a externref) (local $b externref) (local $c externref) (local $d externref)
    (local $page externref)
    (if (i32.gt_u (local.get $body) (i32.const 0x40000000)) (then (return (i32.const 90))))
    (local.set $total (i32.add (local.get $body) (global.get $fixed)))
    (local.set $exp (i32.add (i32.const 70656) (local.get $body)))
    (local.set $got (i32.add (local.get $exp) (local.get $total)))
    (local.set $need (i32.add (local.get $got) (local.get $total)))
    (local.set $have (i32.shl (memory.size) (i32.const 16)))
    (if (i32.gt_u (local.get $need) (local.get $have))
      (then
        (if (i32.eq (memory.grow (i32.shr_u (i32.add (i32.sub (local.get $need) (local.get $have)) (i32.const 0xffff))
                                            (i32.const 16)))
                    (i32.const -1))
          (then (return (i32.const 91))))))
    (memory.fill (i32.const 65536) (i32.const 0x61) (i32.const 1024))
    (memory.fill (i32.const 66560) (i32.const 0x62) (i32.const 2048))
    (memory.fill (i32.const 68608) (i32.const 0x64) (i32.const 2048))
    (memory.fill (i32.const 70656) (i32.const 0x63) (local.get $body))
    ;; The page as readable-burst.js joins it.
    (local.set $off (call $append (local.get $exp) (i32.const 256) (i32.const 54)))
    (local.set $off (call $append (local.get $off) (i32.const 65536) (i32.const 1024)))
    (local.set $off (call $append (local.get $off) (i32.const 320) (i32.const 29)))
    (local.set $off (call $append (local.get $off) (i32.const 66560) (i32.const 2048)))
    (local.set $off (call $append (local.get $off) (i32.const 352) (i32.const 15)))
    (local.set $off (call $append (local.get $off) (i32.const 70656) (local.get $body)))
    (local.set $off (call $append (local.get $off) (i32.const 368) (i32.const 15)))
    (local.set $off (call $append (local.get $off) (i32.const 68608) (i32.const 2048)))
    (drop (call $append (local.get $off) (i32.const 384) (i32.const 23)))
    (block $done
      (loop $iteration
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $a (call $ref_from (i32.const 65536) (i32.const 1024)))
        (if (ref.is_null (local.get $a)) (then (return (i32.const 1))))
        (local.set $b (call $ref_from (i32.const 66560) (i32.const 2048)))
        (if (ref.is_null (local.get $b)) (then (return (i32.const 2))))
        (local.set $c (call $ref_from (i32.const 70656) (local.get $body)))
        (if (ref.is_null (local.get $c)) (then (return (i32.const 3))))
        (local.set $d (call $ref_from (i32.const 68608) (i32.const 2048)))
        (if (ref.is_null (local.get $d)) (then (return (i32.const 4))))
        (local.set $page (call $ref_alloc (local.get $total)))
        (if (ref.is_null (local.get $page)) (then (return (i32.const 5))))
        (if (i32.ne (call $ref_write (local.get $page) (i32.const 0) (i32.const 256) (i32.const 54)) (i32.const 54))
          (then (return (i32.const 6))))
        (local.set $off (i32.const 54))
        (if (i32.ne (call $ref_copy (local.get $page) (local.get $off) (local.get $a)) (i32.const 1024))
          (then (return (i32.const 7))))
        (local.set $off (i32.add (local.get $off) (i32.const 1024)))
        (if (i32.ne (call $ref_write (local.get $page) (local.get $off) (i32.const 320) (i32.const 29)) (i32.const 29))
          (then (return (i32.const 8))))
        (local.set $off (i32.add (local.get $off) (i32.const 29)))
        (if (i32.ne (call $ref_copy (local.get $page) (local.get $off) (local.get $b)) (i32.const 2048))
          (then (return (i32.const 9))))
        (local.set $off (i32.add (local.get $off) (i32.const 2048)))
        (if (i32.ne (call $ref_write (local.get $page) (local.get $off) (i32.const 352) (i32.const 15)) (i32.const 15))
          (then (return (i32.const 10))))
        (local.set $off (i32.add (local.get $off) (i32.const 15)))
        (if (i32.ne (call $ref_copy (local.get $page) (local.get $off) (local.get $c)) (local.get $body))
          (then (return (i32.const 11))))
        (local.set $off (i32.add (local.get $off) (local.get $body)))
        (if (i32.ne (call $ref_write (local.get $page) (local.get $off) (i32.const 368) (i32.const 15)) (i32.const 15))
          (then (return (i32.const 12))))
        (local.set $off (i32.add (local.get $off) (i32.const 15)))
        (if (i32.ne (call $ref_copy (local.get $page) (local.get $off) (local.get $d)) (i32.const 2048))
          (then (return (i32.const 13))))
        (local.set $off (i32.add (local.get $off) (i32.const 2048)))
        (if (i32.ne (call $ref_write (local.get $page) (local.get $off) (i32.const 384) (i32.const 23)) (i32.const 23))
          (then (return (i32.const 14))))
        (if (i32.ne (call $ref_len (local.get $page)) (local.get $total)) (then (return (i32.const 15))))
        (if (i32.eqz (local.get $i))
          (then
            (if (i32.ne (call $ref_read (local.get $page) (i32.const 0) (local.get $got) (local.get $total)) (local.get $total))
              (then (return (i32.const 16))))
            (if (i32.eqz (call $eq (local.get $got) (local.get $exp) (local.get $total)))
              (then (return (i32.const 16))))))
        ;; Drop every reference: all five buffers are garbage now.
        (local.set $a (ref.null extern))
        (local.set $b (ref.null extern))
        (local.set $c (ref.null extern))
        (local.set $d (ref.null extern))
        (local.set $page (ref.null extern))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $iteration)))
    (i32.const 0))

  ;; A decimal number at `p` up to its NUL, or -1.
  (func $atoi (param $p i32) (result i32)
    (local $v i32) (local $digit i32)
    (if (i32.eqz (i32.load8_u (local.get $p))) (then (return (i32.const -1))))
    (block $end
      (loop $digits
        (br_if $end (i32.eqz (i32.load8_u (local.get $p))))
        (local.set $digit (i32.sub (i32.load8_u (local.get $p)) (i32.const 0x30)))
        (if (i32.gt_u (local.get $digit) (i32.const 9)) (then (return (i32.const -1))))
        (if (i32.gt_u (local.get $v) (i32.const 214748363)) (then (return (i32.const -1))))
        (local.set $v (i32.add (i32.mul (local.get $v) (i32.const 10)) (local.get $digit)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $digits)))
    (local.get $v))

  (func (export "_start")
    (local $argc i32) (local $n i32) (local $body i32)
    (local.set $n (i32.const 20000))
    (local.set $body (i32.const 122880))
    (if (call $args_sizes_get (i32.const 512) (i32.const 516)) (then (call $exit (i32.const 100))))
    (local.set $argc (i32.load (i32.const 512)))
    (if (i32.or (i32.gt_u (local.get $argc) (i32.const 64)) (i32.gt_u (i32.load (i32.const 516)) (i32.const 2560)))
      (then (call $exit (i32.const 100))))
    (if (call $args_get (i32.const 1024) (i32.const 1536)) (then (call $exit (i32.const 100))))
    (if (i32.ge_u (local.get $argc) (i32.const 2)) (then (local.set $n (call $atoi (i32.load (i32.const 1028))))))
    (if (i32.ge_u (local.get $argc) (i32.const 3)) (then (local.set $body (call $atoi (i32.load (i32.const 1032))))))
    (if (i32.or (i32.lt_s (local.get $n) (i32.const 0)) (i32.lt_s (local.get $body) (i32.const 0)))
      (then (call $exit (i32.const 100))))
    (call $exit (call $burst (local.get $n) (local.get $body)))))
