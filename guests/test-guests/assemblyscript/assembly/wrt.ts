// Host buffers of the `wrt_v1` ABI (docs/abi.md, "Host buffers") held by the AssemblyScript
// collector: a `HostBuffer` owns one buffer handle, and when the collector frees an unreachable
// `HostBuffer` the global `__finalize` hook releases its handle. Payloads of 64 bytes or less
// never become host buffers: they stay in linear memory, and `HostBuffer.concat` hands them to the
// host as linear-memory parts.

// @ts-ignore: decorator
@external("wrt_v1", "buffer_from")
export declare function buffer_from(ptr: usize, len: i32): i32;

// @ts-ignore: decorator
@external("wrt_v1", "buffer_alloc")
export declare function buffer_alloc(len: i32): i32;

// @ts-ignore: decorator
@external("wrt_v1", "buffer_len")
export declare function buffer_len(buf: i32): i32;

// @ts-ignore: decorator
@external("wrt_v1", "buffer_read")
export declare function buffer_read(buf: i32, offset: i32, ptr: usize, len: i32): i32;

// @ts-ignore: decorator
@external("wrt_v1", "buffer_write")
export declare function buffer_write(buf: i32, offset: i32, ptr: usize, len: i32): i32;

// @ts-ignore: decorator
@external("wrt_v1", "buffer_slice")
export declare function buffer_slice(buf: i32, start: i32, end: i32): i32;

// @ts-ignore: decorator
@external("wrt_v1", "buffer_concat")
export declare function buffer_concat(parts: usize, count: i32): i32;

// @ts-ignore: decorator
@external("wrt_v1", "buffer_release")
export declare function buffer_release(buf: i32): i32;

// @ts-ignore: decorator
@external("wrt_v1", "last_error")
export declare function last_error(ptr: usize, len: i32): i32;

// Error codes (returned negated).
export const BAD_HANDLE: i32 = 8;
export const INVALID_ARGUMENT: i32 = 9;
export const NO_MEMORY: i32 = 10;
export const OUT_OF_BOUNDS: i32 = 12;
export const OUT_OF_RANGE: i32 = 17;

/** Payloads up to this many bytes stay in linear memory. */
export const INLINE_MAX: i32 = 64;

/** Most parts `buffer_concat` takes in one call. */
export const MAX_PARTS: i32 = 1024;

/** The `buffer_concat` part descriptors, 12 bytes each; only used for the length of one call. */
const PARTS: usize = memory.data(MAX_PARTS * 12, 4);

/** The error code (negative) of the last `HostBuffer` operation that failed. */
export let lastCode: i32 = 0;

/** Handles released by `__finalize`. */
export let finalized: i32 = 0;

/** `buffer_release` calls from `__finalize` that failed (always 0 unless something is wrong). */
export let finalizeFailures: i32 = 0;

/** The message of the sandbox's last error (`last_error`). */
export function lastError(): string {
  let len = last_error(0, 0);
  if (len <= 0) return "";
  let bytes = new ArrayBuffer(len);
  let n = last_error(changetype<usize>(bytes), len);
  return String.UTF8.decodeUnsafe(changetype<usize>(bytes), <usize>min(n, len));
}

/**
 * A byte buffer: up to `INLINE_MAX` bytes inline in linear memory (`handle` 0), otherwise a host
 * buffer owned by this object. Nothing needs releasing by hand: the collector's finaliser
 * releases the handle once the object is unreachable. `release` frees it early.
 */
@final
export class HostBuffer {
  /** The host buffer's handle, or 0 when the bytes are inline (or after `release`). */
  handle: i32;
  /** The length in bytes. */
  length: i32;
  /** The bytes when inline. */
  bytes: ArrayBuffer | null;

  constructor(handle: i32, length: i32, bytes: ArrayBuffer | null) {
    this.handle = handle;
    this.length = length;
    this.bytes = bytes;
  }

  /** Whether the bytes live in linear memory. */
  get isInline(): bool {
    return this.bytes !== null;
  }

  /** A buffer holding a copy of `ptr..ptr+len`; null on error (`lastCode`). */
  static from(ptr: usize, len: i32): HostBuffer | null {
    if (<u32>len <= <u32>INLINE_MAX) {
      let bytes = new ArrayBuffer(len);
      memory.copy(changetype<usize>(bytes), ptr, <usize>len);
      return new HostBuffer(0, len, bytes);
    }
    let handle = buffer_from(ptr, len);
    if (handle < 0) {
      lastCode = handle;
      return null;
    }
    return new HostBuffer(handle, len, null);
  }

  /** A buffer of `len` zero bytes; null on error (`lastCode`). */
  static alloc(len: i32): HostBuffer | null {
    if (<u32>len <= <u32>INLINE_MAX) return new HostBuffer(0, len, new ArrayBuffer(len));
    let handle = buffer_alloc(len);
    if (handle < 0) {
      lastCode = handle;
      return null;
    }
    return new HostBuffer(handle, len, null);
  }

  /**
   * The parts one after another. Inline parts go to the host as linear-memory parts, so they are
   * never materialised as host buffers; a result of `INLINE_MAX` bytes or less stays inline.
   * Null on error (`lastCode`).
   */
  static concat(parts: HostBuffer[]): HostBuffer | null {
    let count = parts.length;
    let total: i64 = 0;
    for (let i = 0; i < count; i++) total += parts[i].length;
    if (total <= <i64>INLINE_MAX) {
      let bytes = new ArrayBuffer(<i32>total);
      let offset = 0;
      for (let i = 0; i < count; i++) {
        let part = parts[i];
        let n = part.read(0, changetype<usize>(bytes) + <usize>offset, part.length);
        if (n < 0) {
          lastCode = n;
          return null;
        }
        offset += n;
      }
      return new HostBuffer(0, <i32>total, bytes);
    }
    if (count > MAX_PARTS) {
      lastCode = -INVALID_ARGUMENT;
      return null;
    }
    for (let i = 0; i < count; i++) {
      let part = parts[i];
      let desc = PARTS + <usize>i * 12;
      let bytes = part.bytes;
      if (bytes !== null) {
        store<i32>(desc, 0);
        store<u32>(desc, <u32>changetype<usize>(bytes), 4);
        store<u32>(desc, <u32>part.length, 8);
      } else {
        store<i32>(desc, part.handle);
        store<u32>(desc, 0, 4);
        store<u32>(desc, 0, 8);
      }
    }
    // `parts` (and through it every inline part) is on the shadow stack, so a collection the
    // host runs inside this call cannot free bytes the descriptors point at.
    let handle = buffer_concat(PARTS, count);
    if (handle < 0) {
      lastCode = handle;
      return null;
    }
    return new HostBuffer(handle, <i32>total, null);
  }

  /** Copies `this[offset..]` to `ptr..ptr+len`; returns the bytes copied or `-code`. */
  read(offset: i32, ptr: usize, len: i32): i32 {
    let bytes = this.bytes;
    if (bytes !== null) {
      if (<u32>offset > <u32>this.length) return -OUT_OF_RANGE;
      let n = min(<u32>len, <u32>(this.length - offset));
      memory.copy(ptr, changetype<usize>(bytes) + <usize>offset, <usize>n);
      return <i32>n;
    }
    return buffer_read(this.handle, offset, ptr, len);
  }

  /** Copies `ptr..ptr+len` into the buffer at `offset`; returns `len` or `-code`. */
  write(offset: i32, ptr: usize, len: i32): i32 {
    let bytes = this.bytes;
    if (bytes !== null) {
      if (<u64><u32>offset + <u64><u32>len > <u64><u32>this.length) return -OUT_OF_RANGE;
      memory.copy(changetype<usize>(bytes) + <usize>offset, ptr, <usize>len);
      return len;
    }
    return buffer_write(this.handle, offset, ptr, len);
  }

  /**
   * `this[start..end]`. A host buffer's slice shares its bytes; a slice of `INLINE_MAX` bytes
   * or less is a copy in linear memory. Null on error (`lastCode`).
   */
  slice(start: i32, end: i32): HostBuffer | null {
    if (<u32>start > <u32>end || <u32>end > <u32>this.length) {
      lastCode = -OUT_OF_RANGE;
      return null;
    }
    let len = end - start;
    if (len <= INLINE_MAX) {
      let bytes = new ArrayBuffer(len);
      let n = this.read(start, changetype<usize>(bytes), len);
      if (n < 0) {
        lastCode = n;
        return null;
      }
      return new HostBuffer(0, len, bytes);
    }
    let handle = buffer_slice(this.handle, start, end);
    if (handle < 0) {
      lastCode = handle;
      return null;
    }
    return new HostBuffer(handle, len, null);
  }

  /** Releases the host buffer now instead of at collection; returns 0 or `-code`. */
  release(): i32 {
    let handle = this.handle;
    this.handle = 0;
    this.length = 0;
    this.bytes = null;
    return handle != 0 ? buffer_release(handle) : 0;
  }
}

/** Where the runtime keeps an object's class id: `rt/common.ts`, `OBJECT.rtId`, 8 bytes before it. */
const RT_ID_OFFSET: usize = 8;

/**
 * Called by the collector (`rt/itcms.ts`, `free`) with the address of every object it frees,
 * before freeing its memory, header intact. It must not allocate.
 */
// @ts-ignore: decorator
@global function __finalize(ptr: usize): void {
  // `HostBuffer` is `@final`, so its class id identifies it exactly.
  if (load<u32>(ptr - RT_ID_OFFSET) != idof<HostBuffer>()) return;
  let handle = load<i32>(ptr, offsetof<HostBuffer>("handle"));
  if (handle == 0) return;
  finalized++;
  if (buffer_release(handle) < 0) finalizeFailures++;
}
