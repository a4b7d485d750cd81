// The WASI preview 1 functions this guest uses, and small helpers over them: output, program
// arguments, a monotonic clock, exit, and the `abort` the compiler calls on a failed assertion
// (wired with `--use abort=...` so the module imports nothing from `env`).

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_write")
declare function fd_write(fd: i32, iovs: usize, iovsLen: i32, nwritten: usize): i32;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "proc_exit")
declare function proc_exit(code: i32): void;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "args_sizes_get")
declare function args_sizes_get(argc: usize, bufSize: usize): i32;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "args_get")
declare function args_get(argv: usize, buf: usize): i32;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "clock_time_get")
declare function clock_time_get(id: i32, precision: i64, time: usize): i32;

/** WASI's monotonic clock. */
const CLOCK_MONOTONIC: i32 = 1;

/** Scratch space for one iovec and the count written back; never used across calls. */
const IO_SCRATCH: usize = memory.data(16);

/** Writes all of `ptr..ptr+len` to `fd`; gives up silently if the stream fails. */
export function writeBytes(fd: i32, ptr: usize, len: usize): void {
  while (len > 0) {
    store<u32>(IO_SCRATCH, <u32>ptr);
    store<u32>(IO_SCRATCH, <u32>len, 4);
    if (fd_write(fd, IO_SCRATCH, 1, IO_SCRATCH + 8) != 0) return;
    let written = <usize>load<u32>(IO_SCRATCH, 8);
    if (written == 0) return;
    ptr += written;
    len -= written;
  }
}

const NEWLINE: usize = memory.data<u8>([0x0a]);

/** Writes `line` and a newline to `fd`, UTF-8 encoded. */
export function writeLine(fd: i32, line: string): void {
  let bytes = String.UTF8.encode(line);
  writeBytes(fd, changetype<usize>(bytes), <usize>bytes.byteLength);
  writeBytes(fd, NEWLINE, 1);
}

/** Writes `line` to stdout. */
export function println(line: string): void {
  writeLine(1, line);
}

/** Writes `line` to stderr. */
export function eprintln(line: string): void {
  writeLine(2, line);
}

/** Ends the program with `code` (WASI `proc_exit`). */
export function exit(code: i32): void {
  proc_exit(code);
  unreachable();
}

/** The program's arguments, `argv[0]` included. */
export function args(): string[] {
  let sizes = memory.data(8);
  if (args_sizes_get(sizes, sizes + 4) != 0) return [];
  let argc = load<u32>(sizes);
  let bufSize = load<u32>(sizes, 4);
  let argv = new ArrayBuffer(<i32>argc * sizeof<u32>());
  let buf = new ArrayBuffer(<i32>bufSize);
  if (args_get(changetype<usize>(argv), changetype<usize>(buf)) != 0) return [];
  let out = new Array<string>(0);
  for (let i: u32 = 0; i < argc; i++) {
    let start = <usize>load<u32>(changetype<usize>(argv) + <usize>i * sizeof<u32>());
    let end = start;
    while (load<u8>(end) != 0) end++;
    out.push(String.UTF8.decodeUnsafe(start, end - start));
  }
  return out;
}

/** Milliseconds on WASI's monotonic clock. */
export function nowMs(): f64 {
  let time = memory.data(8);
  if (clock_time_get(CLOCK_MONOTONIC, 1000, time) != 0) return 0;
  return <f64>load<u64>(time) / 1e6;
}

// `abort` must not allocate: it also runs when the allocator itself gives up.

const ABORT_SCRATCH: usize = memory.data(128);

/** Writes the ASCII rendering of `text` (`?` for anything else) to stderr without allocating. */
function writeAscii(text: string): void {
  let n = text.length;
  let i = 0;
  while (i < n) {
    let chunk = min(n - i, 128);
    for (let j = 0; j < chunk; j++) {
      let c = text.charCodeAt(i + j);
      store<u8>(ABORT_SCRATCH + <usize>j, c < 0x80 ? <u8>c : 0x3f);
    }
    writeBytes(2, ABORT_SCRATCH, <usize>chunk);
    i += chunk;
  }
}

/** Writes `value` in decimal to stderr without allocating. */
function writeU32(value: u32): void {
  let end = ABORT_SCRATCH + 16;
  let ptr = end;
  do {
    ptr--;
    store<u8>(ptr, <u8>(0x30 + value % 10));
    value /= 10;
  } while (value != 0);
  writeBytes(2, ptr, end - ptr);
}

/** The compiler's `abort` (`--use abort=...`): prints where and why to stderr, exits with 134. */
export function wasiAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  writeAscii("abort: ");
  if (message !== null) writeAscii(message);
  if (fileName !== null) {
    writeAscii(" at ");
    writeAscii(fileName);
    writeAscii(":");
    writeU32(line);
    writeAscii(":");
    writeU32(column);
  }
  writeBytes(2, NEWLINE, 1);
  proc_exit(134);
  unreachable();
}
