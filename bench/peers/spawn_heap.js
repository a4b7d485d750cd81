'use strict';
// Node's child_process.spawn of /bin/true, N times one after another, while the process holds
// HEAP_MB of touched WebAssembly.Memory (KIND=wasm) or Buffers (KIND=buffer). Prints one JSON
// line with the mean milliseconds from spawn to exit. wrt's spawn benches run it as the peer.
const { spawn } = require('child_process');

const n = Number(process.env.N || 1000);
const heapMb = Number(process.env.HEAP_MB || 0);
const kind = process.env.KIND || 'wasm';

const held = [];
if (heapMb > 0 && kind === 'wasm') {
  const memory = new WebAssembly.Memory({ initial: heapMb * 16 });
  new Uint8Array(memory.buffer).fill(1);
  held.push(memory);
} else if (heapMb > 0 && kind === 'buffer') {
  for (let i = 0; i < heapMb; i++) held.push(Buffer.alloc(1 << 20, 1));
}

const start = process.hrtime.bigint();
function next(left) {
  if (left === 0) {
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    console.log(JSON.stringify({ node: process.version, kind, heap_mb: heapMb, n, ms_per_spawn: ms / n }));
    return;
  }
  spawn('/bin/true').on('exit', (code) => {
    if (code !== 0) process.exit(1);
    next(left - 1);
  });
}
next(n);
