"""wrt as a runtime of the official WASI test suite (github.com/WebAssembly/wasi-testsuite).

The suite's runner imports this file as an adapter: `get_name`, `get_version`,
`get_wasi_versions`, `get_wasi_worlds` and `compute_argv` tell it how to start wrt on a test.
The suite is not part of this repository and CI cannot reach it; docs/wasi-testsuite.md says how
to run it by hand and holds the latest results.

`WRT` names the wrt to run (default `wrt` on the PATH), split as a shell would split it, so
that `WRT="target/release/wrt"` or `WRT="wrt --no-cache"` work.
"""

import os
import shlex
import subprocess
from typing import Dict, List, Optional, Tuple

WRT = shlex.split(os.getenv("WRT", "wrt"))


def get_name() -> str:
    return "wrt"


def get_version() -> str:
    # `wrt --version` prints `wrt VERSION`.
    result = subprocess.run(WRT[0:1] + ["--version"], encoding="UTF-8", capture_output=True, check=True)
    return result.stdout.split()[1]


def get_wasi_versions() -> List[str]:
    return ["wasm32-wasip1", "wasm32-wasip3"]


def get_wasi_worlds() -> List[str]:
    return ["wasi:cli/command", "wasi:http/service"]


def compute_argv(
    test_path: str,
    args_env_root: Tuple[List[str], Dict[str, str], Optional[str]],
    proposals: List[str],
    wasi_world: str,
    wasi_version: str,
) -> List[str]:
    args, env, root = args_env_root
    if wasi_world == "wasi:http/service":
        # The runner reads the URL from the first line of stderr, and stops the server with
        # SIGINT, expecting status 0.
        argv = WRT + ["serve", "--addr", "127.0.0.1:0"]
    else:
        argv = WRT + ["run"]
        if "http" in proposals:
            argv += ["-S", "http"]
    for name, value in env.items():
        argv += ["--env", f"{name}={value}"]
        # The servers the runner stands up for a test's outgoing requests reach the guest as
        # `HTTP_SERVER_<NAME>=HOST:PORT`: each is allowed, and nothing else.
        if name.startswith("HTTP_SERVER_"):
            argv += ["--allow-http", value]
    if "sockets" in proposals:
        # The sockets tests bind the wildcard address and loopback, as `wasmtime run -S
        # inherit-network` lets them: `-S inherit-network` is `--allow-net any`.
        argv += ["-S", "inherit-network"]
    if root:
        # The test's directory, preopened read-write as `/`.
        argv += ["--dir", f"{root}::/"]
    # wrt links WASI 0.2 and 0.3 into every component.
    return argv + [test_path] + args
