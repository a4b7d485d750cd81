// js_ls: runs `ls -l /` on the host through `wrt:process` and prints what came back, then how
// `ls` ended.
//
// The sandbox denies every program it was not told to allow: without `wrt run --allow-run ls` the
// spawn fails with `denied`, and the guest prints the host's message and exits with 1. It also
// exits with 1 when `ls` fails.

import { run as runCommand } from 'wrt:process/process@0.1.0';

// Bytes kept of each of `ls`'s output streams.
const MAX_OUTPUT = 1 << 20;

// How the child ended, and what it cost.
function describe(status) {
  const ms = (ns) => (Number(ns) / 1e6).toFixed(3);
  const { tag, val } = status.termination;
  let ended = tag === 'exited' ? `exit code ${val}` : `killed by signal ${val}`;
  if (status.timedOut) ended += ' (timed out)';
  if (status.stdoutTruncated || status.stderrTruncated) ended += ' (output truncated)';
  return (
    `${ended}, in ${ms(status.durationNs)} ms (user ${ms(status.userNs)} ms, ` +
    `system ${ms(status.systemNs)} ms), peak memory ${status.peakRss / 1024n} KiB`
  );
}

// `wasi:cli/run`: throwing makes `run` return its error, and the component exit with 1.
function main() {
  const directory = '/';
  let output;
  try {
    output = runCommand(
      {
        program: 'ls',
        args: ['-l', directory],
        env: [],
        cwd: undefined,
        stdin: 'null',
        stdout: 'piped',
        stderr: 'piped',
        timeoutMs: 10000n,
        outputLimit: undefined,
        ptySize: undefined,
      },
      new Uint8Array(0),
      MAX_OUTPUT,
    );
  } catch (e) {
    // A `result` error arrives as an exception whose `payload` is the WIT `error` record.
    const error = e.payload;
    if (error === undefined) throw e;
    if (error.code === 'denied') {
      console.error(`js_ls: the sandbox did not allow it: ${error.message}`);
    } else {
      console.error(`js_ls: could not run ls (${error.code}): ${error.message}`);
    }
    throw new Error('ls did not run');
  }
  const text = (bytes) => new TextDecoder().decode(bytes).replace(/\n$/, '');
  console.log(`\`ls -l ${directory}\` on the host printed:`);
  console.log(text(output.stdout));
  if (output.stderr.length > 0) {
    console.log('and on stderr:');
    console.log(text(output.stderr));
  }
  console.log(describe(output.status));
  if (output.status.termination.tag !== 'exited' || output.status.termination.val !== 0) {
    throw new Error('ls failed');
  }
}

export const run = { run: main };
