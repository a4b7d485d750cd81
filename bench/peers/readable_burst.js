'use strict';
// The readable-push-buffer-burst workload of nodejs/node#63863, as wrt's
// buffer bench runs it beside its guests: N iterations (default 20000); each turns the nine
// strings of an HTML page (BODY bytes of body, default 120 KiB) into Buffers, pushes every Buffer
// through a fresh Readable, reads it back out and keeps nothing. Prints one JSON line with the
// same keys as the guests (`buffer_burst`, `asc_buffers burst`) plus Node's own memory figures.
// Run it with `node --trace-gc` to count Scavenges and Mark-Compacts.
const { Readable } = require('stream');

const n = Number(process.env.N || 20000);
const bodySize = Number(process.env.BODY || 120 * 1024);

const page = [
  '<!doctype html><html><head><title>burst</title><style>',
  'a'.repeat(1024),
  '</style></head><body><header>',
  'b'.repeat(2048),
  '</header><main>',
  'c'.repeat(bodySize),
  '</main><script>',
  'd'.repeat(2048),
  '</script></body></html>',
];
const pageBytes = page.reduce((sum, s) => sum + Buffer.byteLength(s), 0);

// One iteration: every string becomes a Buffer, goes into its own Readable and comes back out.
function burstOnce() {
  const out = [];
  for (const text of page) {
    const stream = new Readable({ read() {} });
    stream.push(Buffer.from(text, 'utf8'));
    stream.push(null);
    for (let chunk = stream.read(); chunk !== null; chunk = stream.read()) out.push(chunk);
  }
  return out;
}

// The first iteration's output must be the page, byte for byte.
const first = Buffer.concat(burstOnce());
if (first.length !== pageBytes || first.toString('utf8') !== page.join('')) {
  console.error(`readable_burst: the page came back as ${first.length} bytes, expected ${pageBytes}`);
  process.exit(1);
}

let total = 0;
const start = process.hrtime.bigint();
for (let i = 0; i < n; i++) total += burstOnce().length;
const ms = Number(process.hrtime.bigint() - start) / 1e6;
const mem = process.memoryUsage();
console.log(JSON.stringify({
  node: process.version,
  n,
  body_size: bodySize,
  ms: Math.round(ms * 10) / 10,
  ops_per_s: ms > 0 ? Math.round((n / ms) * 1000) : 0,
  total,
  rss: mem.rss,
  external: mem.external,
}));
