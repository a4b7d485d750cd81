// `asc_buffers`: a garbage-collected guest holding host buffers (docs/abi.md, "Host buffers").
// `argv[1]` picks the workload:
//
//   burst [N] [BODY]               the readable-push-buffer-burst analogue (nodejs/node#63863)
//   chains [TOTAL] [CHAINS] [SIZE] the nodejs/node#1671 analogue: chains of replaced buffers
//   live [MIB]                     1 MiB buffers, all reachable, until the host says NO_MEMORY
//   garbage [TOTAL_MIB]            1 MiB buffers, every 10th reachable
//   basic                          functional checks of every buffer function used
//
// No workload releases a buffer by hand: the host asks for collections (`wrt_gc`) and the
// finaliser in `wrt.ts` releases what the collector frees.

import { args, eprintln, exit, nowMs, println } from "./wasi";
import {
  BAD_HANDLE, HostBuffer, INLINE_MAX, NO_MEMORY, OUT_OF_BOUNDS, OUT_OF_RANGE,
  buffer_alloc, buffer_concat, buffer_from, buffer_len, buffer_read, buffer_release,
  buffer_slice, buffer_write, finalizeFailures, finalized, lastCode, lastError,
} from "./wrt";

/** The guest's collector hook: the host calls it with 0 (young) or 1 (full). */
export function wrt_gc(kind: i32): void {
  // The AssemblyScript heap has one generation: both kinds are a full collection, which is cheap
  // because the heap holds only small objects (the bytes are on the host).
  __collect();
}

const MIB: i32 = 1 << 20;

/** Prints `message` to stderr and exits with 1. */
function fail(message: string): void {
  eprintln("asc_buffers: " + message);
  exit(1);
}

/** `b`, or a failure naming `what` with the host's error code and message. */
function must(b: HostBuffer | null, what: string): HostBuffer {
  if (b === null) fail(what + " failed with " + lastCode.toString() + ": " + lastError());
  return changetype<HostBuffer>(b);
}

/** Fails unless `actual == expected`. */
function expect(actual: i32, expected: i32, what: string): void {
  if (actual != expected) {
    fail(what + ": expected " + expected.toString() + ", got " + actual.toString());
  }
}

/** `argv[index]` as a non-negative number, or `fallback` when absent. */
function numberArg(argv: string[], index: i32, fallback: i32): i32 {
  if (index >= argv.length) return fallback;
  let text = argv[index];
  let value: i64 = 0;
  if (text.length == 0 || text.length > 10) fail("argument `" + text + "` is not a number");
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) fail("argument `" + text + "` is not a number");
    value = value * 10 + (c - 0x30);
  }
  if (value > <i64>i32.MAX_VALUE) fail("argument `" + text + "` is too large");
  return <i32>value;
}

/** `ms` rounded to one decimal, as JSON. */
function msJson(ms: f64): string {
  return (Math.round(ms * 10) / 10).toString();
}

// burst ----------------------------------------------------------------------------------------

/** The nine chunks of the JS benchmark, UTF-8 encoded once. */
function burstChunks(bodySize: i32): ArrayBuffer[] {
  let strings: string[] = [
    "<!doctype html><html><head><title>burst</title><style>", "a".repeat(1024),
    "</style></head><body><header>", "b".repeat(2048), "</header><main>", "c".repeat(bodySize),
    "</main><script>", "d".repeat(2048), "</script></body></html>",
  ];
  return strings.map<ArrayBuffer>((s: string) => String.UTF8.encode(s));
}

/** One iteration: the chunks as buffers (small ones inline), concatenated; returns the count. */
function burstOnce(chunks: ArrayBuffer[], expectedLen: i32): i32 {
  let parts = new Array<HostBuffer>(chunks.length);
  for (let i = 0; i < chunks.length; i++) {
    let chunk = chunks[i];
    parts[i] = must(HostBuffer.from(changetype<usize>(chunk), chunk.byteLength), "buffer_from");
  }
  let joined = must(HostBuffer.concat(parts), "buffer_concat");
  expect(buffer_len(joined.handle), expectedLen, "length of the concatenation");
  return parts.length;
}

function burst(argv: string[]): void {
  let n = numberArg(argv, 2, 20000);
  let bodySize = numberArg(argv, 3, 120 * 1024);
  let chunks = burstChunks(bodySize);
  let expectedLen = 0;
  for (let i = 0; i < chunks.length; i++) expectedLen += chunks[i].byteLength;
  if (expectedLen <= INLINE_MAX) fail("BODY too small for host buffers");
  let total: i64 = 0;
  let t0 = nowMs();
  for (let i = 0; i < n; i++) total += burstOnce(chunks, expectedLen);
  let ms = nowMs() - t0;
  let opsPerS = ms > 0 ? Math.round(<f64>n / ms * 1000) : 0;
  println(
    "{\"n\":" + n.toString() + ",\"body_size\":" + bodySize.toString() + ",\"ms\":" + msJson(ms) +
    ",\"ops_per_s\":" + (<i64>opsPerS).toString() + ",\"total\":" + total.toString() + "}"
  );
}

// chains ---------------------------------------------------------------------------------------

function chains(argv: string[]): void {
  let total = numberArg(argv, 2, 800000);
  let count = numberArg(argv, 3, 20);
  let size = numberArg(argv, 4, 16384);
  if (count == 0) fail("CHAINS must be at least 1");
  if (size < 8) fail("SIZE must be at least 8");
  let heads = new Array<HostBuffer | null>(count);
  let stamp = memory.data(8);
  let t0 = nowMs();
  for (let i = 0; i < total; i++) {
    let chain = i % count;
    let next = must(HostBuffer.alloc(size), "buffer_alloc");
    store<i32>(stamp, i);
    store<i32>(stamp, chain, 4);
    expect(next.write(0, stamp, 8), 8, "buffer_write at the start");
    expect(next.write(size - 8, stamp, 8), 8, "buffer_write at the end");
    // Dropping the chain's previous buffer is the only thing that frees it.
    heads[chain] = next;
  }
  let ms = nowMs() - t0;
  for (let chain = 0; chain < min(count, total); chain++) {
    let head = heads[chain];
    if (head === null) fail("chain lost its head");
    expect(changetype<HostBuffer>(head).read(4, stamp, 4), 4, "buffer_read of a chain head");
    expect(load<i32>(stamp), chain, "stamp of a chain head");
  }
  println(
    "{\"total\":" + total.toString() + ",\"chains\":" + count.toString() + ",\"size\":" +
    size.toString() + ",\"ms\":" + msJson(ms) + "}"
  );
}

// live and garbage -------------------------------------------------------------------------------

function live(argv: string[]): void {
  let limit = numberArg(argv, 2, 1 << 20);
  let kept = new Array<HostBuffer>(0);
  for (let i = 0; i < limit; i++) {
    let b = HostBuffer.alloc(MIB);
    if (b === null) {
      if (lastCode == -NO_MEMORY) {
        println("no memory after " + i.toString() + " MiB");
        return;
      }
      fail("buffer_alloc failed with " + lastCode.toString() + ": " + lastError());
    }
    kept.push(changetype<HostBuffer>(b));
  }
  fail("allocated " + limit.toString() + " MiB without running out of memory");
}

function garbage(argv: string[]): void {
  let total = numberArg(argv, 2, 512);
  let kept = new Array<HostBuffer>(0);
  let mark = memory.data(4);
  for (let i = 0; i < total; i++) {
    let b = must(HostBuffer.alloc(MIB), "buffer_alloc of MiB " + i.toString());
    store<i32>(mark, i);
    expect(b.write(MIB - 4, mark, 4), 4, "buffer_write");
    if (i % 10 == 0) kept.push(b);
  }
  for (let j = 0; j < kept.length; j++) {
    expect(kept[j].read(MIB - 4, mark, 4), 4, "buffer_read");
    expect(load<i32>(mark), j * 10, "mark of a kept buffer");
  }
  println("done");
}

// basic ----------------------------------------------------------------------------------------

/** `len` bytes `seed, seed+1, ...` in a new linear-memory array. */
function pattern(len: i32, seed: i32): ArrayBuffer {
  let bytes = new ArrayBuffer(len);
  for (let i = 0; i < len; i++) store<u8>(changetype<usize>(bytes) + <usize>i, <u8>(seed + i));
  return bytes;
}

/** Fails unless `a` and `b` hold the same bytes. */
function expectBytes(a: ArrayBuffer, b: ArrayBuffer, what: string): void {
  expect(a.byteLength, b.byteLength, what + " (length)");
  if (memory.compare(changetype<usize>(a), changetype<usize>(b), <usize>a.byteLength) != 0) {
    fail(what + ": bytes differ");
  }
}

/** All of `b`, read back into linear memory. */
function contents(b: HostBuffer): ArrayBuffer {
  let out = new ArrayBuffer(b.length);
  expect(b.read(0, changetype<usize>(out), b.length), b.length, "read of the whole buffer");
  return out;
}

/** Creates a host buffer, drops it, and returns its handle. */
function unreachableBuffer(len: i32): i32 {
  let bytes = pattern(len, 7);
  let b = must(HostBuffer.from(changetype<usize>(bytes), len), "buffer_from");
  if (b.isInline) fail("a " + len.toString() + "-byte buffer is inline");
  return b.handle;
}

function basic(): void {
  // Small payloads stay in linear memory.
  let small = pattern(INLINE_MAX, 1);
  let inline = must(HostBuffer.from(changetype<usize>(small), INLINE_MAX), "from (inline)");
  if (!inline.isInline || inline.handle != 0) fail("a 64-byte buffer is not inline");
  expectBytes(contents(inline), small, "inline contents");

  // buffer_from, buffer_len, buffer_read.
  let data = pattern(100, 3);
  let b = must(HostBuffer.from(changetype<usize>(data), 100), "buffer_from");
  if (b.handle < 0x4000_0000) fail("buffer handle " + b.handle.toString() + " is below 0x40000000");
  expect(buffer_len(b.handle), 100, "buffer_len");
  expectBytes(contents(b), data, "buffer_from contents");
  let tail = new ArrayBuffer(20);
  expect(buffer_read(b.handle, 90, changetype<usize>(tail), 20), 10, "buffer_read past the end");
  expect(load<u8>(changetype<usize>(tail)), <u8>(3 + 90), "buffer_read at an offset");
  expect(buffer_read(b.handle, 100, changetype<usize>(tail), 20), 0, "buffer_read at the end");
  expect(buffer_read(b.handle, 101, changetype<usize>(tail), 20), -OUT_OF_RANGE, "buffer_read offset past the end");
  let memEnd = <usize>memory.size() << 16;
  expect(buffer_read(b.handle, 0, memEnd - 10, 20), -OUT_OF_BOUNDS, "buffer_read out of linear memory");
  expect(buffer_from(memEnd - 10, 100), -OUT_OF_BOUNDS, "buffer_from out of linear memory");
  if (lastError().length == 0) fail("last_error is empty after an error");

  // buffer_alloc, buffer_write.
  let z = must(HostBuffer.alloc(200), "buffer_alloc");
  expectBytes(contents(z), new ArrayBuffer(200), "buffer_alloc contents");
  let five = pattern(5, 50);
  expect(buffer_write(z.handle, 10, changetype<usize>(five), 5), 5, "buffer_write");
  let back = new ArrayBuffer(5);
  expect(buffer_read(z.handle, 10, changetype<usize>(back), 5), 5, "buffer_read after write");
  expectBytes(back, five, "buffer_write contents");
  expect(buffer_write(z.handle, 198, changetype<usize>(five), 5), -OUT_OF_RANGE, "buffer_write past the end");
  expect(buffer_write(z.handle, 0, memEnd - 2, 5), -OUT_OF_BOUNDS, "buffer_write from out of linear memory");

  // buffer_slice shares bytes both ways.
  let s = must(z.slice(50, 150), "buffer_slice");
  if (s.isInline) fail("a 100-byte slice is inline");
  expect(buffer_len(s.handle), 100, "buffer_len of a slice");
  expect(s.write(0, changetype<usize>(five), 5), 5, "write through the slice");
  expect(buffer_read(z.handle, 50, changetype<usize>(back), 5), 5, "read through the original");
  expectBytes(back, five, "slice shares its bytes");
  expect(buffer_slice(z.handle, 150, 50), -OUT_OF_RANGE, "buffer_slice start > end");
  expect(buffer_slice(z.handle, 0, 201), -OUT_OF_RANGE, "buffer_slice past the end");
  let smallSlice = must(b.slice(10, 20), "small slice");
  if (!smallSlice.isInline) fail("a 10-byte slice is not inline");
  expectBytes(contents(smallSlice), data.slice(10, 20), "small slice contents");

  // buffer_concat: inline parts go as linear-memory parts.
  let parts: HostBuffer[] = [inline, b, smallSlice, s];
  let joined = must(HostBuffer.concat(parts), "buffer_concat");
  if (joined.isInline) fail("a 274-byte concatenation is inline");
  expect(buffer_len(joined.handle), 64 + 100 + 10 + 100, "buffer_len of the concatenation");
  let expected = new ArrayBuffer(274);
  let e = changetype<usize>(expected);
  memory.copy(e, changetype<usize>(small), 64);
  memory.copy(e + 64, changetype<usize>(data), 100);
  memory.copy(e + 164, changetype<usize>(data) + 10, 10);
  expect(s.read(0, e + 174, 100), 100, "read of the slice");
  expectBytes(contents(joined), expected, "buffer_concat contents");
  let tiny = must(HostBuffer.concat([smallSlice, smallSlice]), "inline concat");
  if (!tiny.isInline || tiny.length != 20) fail("a 20-byte concatenation is not inline");
  let empty = buffer_concat(0, 0);
  if (empty < 0x4000_0000) fail("buffer_concat of 0 parts returned " + empty.toString());
  expect(buffer_len(empty), 0, "buffer_len of an empty concatenation");
  expect(buffer_release(empty), 0, "buffer_release of an empty concatenation");
  let desc = memory.data(12, 4);
  store<i32>(desc, b.handle);
  store<u32>(desc, 1, 4);
  expect(buffer_concat(desc, 1), -9, "buffer_concat with a non-zero reserved field");
  store<i32>(desc, 0x4000_0000 - 1);
  store<u32>(desc, 0, 4);
  expect(buffer_concat(desc, 1), -BAD_HANDLE, "buffer_concat with a bad handle");
  store<i32>(desc, 0);
  store<u32>(desc, <u32>(memEnd - 4), 4);
  store<u32>(desc, 8, 8);
  expect(buffer_concat(desc, 1), -OUT_OF_BOUNDS, "buffer_concat with a part out of linear memory");

  // Bad handles.
  expect(buffer_len(0), -BAD_HANDLE, "buffer_len(0)");
  expect(buffer_len(1), -BAD_HANDLE, "buffer_len of a child-range handle");
  expect(buffer_len(-5), -BAD_HANDLE, "buffer_len of a negative handle");
  expect(buffer_len(0x7fff_ffff), -BAD_HANDLE, "buffer_len of an unknown handle");
  expect(buffer_release(0x7fff_ffff), -BAD_HANDLE, "buffer_release of an unknown handle");

  // Explicit release: twice is an error, and the handle is gone.
  let early = must(HostBuffer.alloc(1000), "buffer_alloc");
  let earlyHandle = early.handle;
  expect(early.release(), 0, "buffer_release");
  expect(buffer_release(earlyHandle), -BAD_HANDLE, "second buffer_release");
  expect(buffer_len(earlyHandle), -BAD_HANDLE, "buffer_len after release");

  // The finaliser releases what the collector frees, when the host (here: we) asks.
  let before = finalized;
  let young = unreachableBuffer(300);
  let full = unreachableBuffer(400);
  expect(buffer_len(young), 300, "buffer_len before collection");
  wrt_gc(0);
  expect(buffer_len(young), -BAD_HANDLE, "buffer_len after wrt_gc(0) of a finalised buffer");
  expect(buffer_len(full), -BAD_HANDLE, "buffer_len after wrt_gc(0) of a finalised buffer");
  let later = unreachableBuffer(500);
  wrt_gc(1);
  expect(buffer_len(later), -BAD_HANDLE, "buffer_len after wrt_gc(1) of a finalised buffer");
  if (finalized - before < 3) fail("only " + (finalized - before).toString() + " finalised buffers");
  expect(finalizeFailures, 0, "failed releases in the finaliser");

  // Everything still reachable survived the collections.
  expect(buffer_len(b.handle), 100, "buffer_len of a live buffer after collections");
  expect(buffer_len(s.handle), 100, "buffer_len of a live slice after collections");
  expect(buffer_len(joined.handle), 274, "buffer_len of a live concatenation after collections");
  expectBytes(contents(joined), expected, "live concatenation after collections");

  println("asc ok");
}

// entry ----------------------------------------------------------------------------------------

function main(): void {
  let argv = args();
  let workload = argv.length > 1 ? argv[1] : "";
  if (workload == "burst") burst(argv);
  else if (workload == "chains") chains(argv);
  else if (workload == "live") live(argv);
  else if (workload == "garbage") garbage(argv);
  else if (workload == "basic") basic();
  else {
    eprintln("usage: asc_buffers burst [N] [BODY] | chains [TOTAL] [CHAINS] [SIZE] | live [MIB] | garbage [TOTAL_MIB] | basic");
    exit(2);
  }
}

// With `--exportStart _start`, this top-level code is the body of the exported `_start`.
main();
