'use strict';
// The nodejs/node#1671 test case, as wrt's buffer bench runs it beside
// its guests (`buffer_chains`, `asc_buffers chains`): CHAINS (default 20) setImmediate chains
// run side by side; each turn of a chain allocates a SIZE-byte Buffer (default 16 KiB, zeroed like
// the guests' `buffer_alloc`), stamps it at both ends, makes it the chain's head and drops the
// previous head, until TOTAL (default 800000) Buffers were allocated in all. Prints one JSON line
// with the guests' keys plus the largest `process.memoryUsage().external` seen (sampled every
// 1024 allocations). Run it with `node --trace-gc` to count Scavenges and Mark-Compacts.
const total = Number(process.env.TOTAL || 800000);
const chains = Math.max(1, Number(process.env.CHAINS || 20));
const size = Math.max(8, Number(process.env.SIZE || 16384));

const heads = new Array(chains).fill(null);
let allocated = 0;
let running = chains;
let peakExternal = 0;
const start = process.hrtime.bigint();

function turn(chain) {
  if (allocated >= total) {
    running -= 1;
    if (running === 0) finish();
    return;
  }
  const i = allocated++;
  const next = Buffer.alloc(size);
  next.writeUInt32LE(i, 0);
  next.writeUInt32LE(chain, 4);
  next.writeUInt32LE(i, size - 8);
  next.writeUInt32LE(chain, size - 4);
  heads[chain] = next;
  if ((i & 1023) === 0) peakExternal = Math.max(peakExternal, process.memoryUsage().external);
  setImmediate(turn, chain);
}

function finish() {
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  for (let chain = 0; chain < Math.min(chains, total); chain++) {
    const head = heads[chain];
    if (head === null || head.readUInt32LE(4) !== chain || head.readUInt32LE(size - 4) !== chain) {
      console.error(`buffer_chains: chain ${chain} lost its head`);
      process.exit(1);
    }
  }
  const mem = process.memoryUsage();
  console.log(JSON.stringify({
    node: process.version,
    total,
    chains,
    size,
    ms: Math.round(ms * 10) / 10,
    peak_external: Math.max(peakExternal, mem.external),
    rss: mem.rss,
  }));
}

for (let chain = 0; chain < chains; chain++) setImmediate(turn, chain);
