"""py_ls: runs `ls -l /` (or `ls -l DIR` with an argument) on the host through `wrt:process` and
prints what came back, then how `ls` ended.

The sandbox denies every program it was not told to allow: without `wrt run --allow-run ls` the
spawn fails with `denied`, and the guest prints the host's message and exits with 1. It also
exits with 1 when `ls` fails.
"""

import sys

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports.process import Command, Status, Stdio, Termination_Exited, run
from wit_world.imports.types import ErrorCode

# Bytes kept of each of `ls`'s output streams.
MAX_OUTPUT = 1 << 20


def describe(status: Status) -> str:
    """How the child ended, and what it cost."""
    if isinstance(status.termination, Termination_Exited):
        ended = f"exit code {status.termination.value}"
    else:
        ended = f"killed by signal {status.termination.value}"
    if status.timed_out:
        ended += " (timed out)"
    if status.stdout_truncated or status.stderr_truncated:
        ended += " (output truncated)"
    return (
        f"{ended}, in {status.duration_ns / 1e6:.3f} ms (user {status.user_ns / 1e6:.3f} ms, "
        f"system {status.system_ns / 1e6:.3f} ms), peak memory {status.peak_rss // 1024} KiB"
    )


class Run(exports.Run):
    def run(self) -> None:
        directory = sys.argv[1] if len(sys.argv) > 1 else "/"
        command = Command(
            program="ls",
            args=["-l", directory],
            env=[],
            cwd=None,
            stdin=Stdio.NULL,
            stdout=Stdio.PIPED,
            stderr=Stdio.PIPED,
            timeout_ms=10_000,
            output_limit=None,
            pty_size=None,
        )
        try:
            output = run(command, b"", MAX_OUTPUT)
        except Err as err:
            if err.value.code == ErrorCode.DENIED:
                print(f"py_ls: the sandbox did not allow it: {err.value.message}", file=sys.stderr)
            else:
                code = err.value.code.name.lower().replace("_", "-")
                print(f"py_ls: could not run ls ({code}): {err.value.message}", file=sys.stderr)
            raise Err(None)
        print(f"`ls -l {directory}` on the host printed:")
        print(output.stdout.decode(errors="replace"), end="")
        if output.stderr:
            print("and on stderr:")
            print(output.stderr.decode(errors="replace"), end="")
        print(describe(output.status))
        if output.status.termination != Termination_Exited(0):
            raise Err(None)
