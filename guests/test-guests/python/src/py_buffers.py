# world: collected-command
"""py_buffers: host buffers (`wrt:process/buffers`) held by a garbage-collected language.

Python frees an object when its last reference goes, except in a reference cycle: that waits for
the cycle collector, which runs after enough *objects* were allocated, blind to the megabytes of
host memory a small `Buffer` object holds. So the host's external-memory policy decides: after
making a buffer, the guest asks `collection_due()` and runs Python's collector when a collection
is due; after a `no-memory` error it does the same and retries. It also exports `collector`, for
embedders that call it between calls into the guest.

`py_buffers basic` checks the buffer API. `py_buffers cycles COUNT SIZE` allocates COUNT
buffers of SIZE bytes, each in a reference cycle that is garbage at once; `py_buffers live COUNT
SIZE` keeps them all. Both print one JSON line (the buffers made, their bytes, the collections
run); a failed allocation prints the host's error and exits with 1.
"""

import gc
import json
import sys

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports.buffers import Buffer, collection_due
from wit_world.imports.types import Collection, ErrorCode

# Collections run, by kind.
COLLECTIONS = {"young": 0, "full": 0}


def collect(kind: Collection) -> None:
    """Runs Python's collector: the youngest generation, or all of them."""
    if kind == Collection.YOUNG:
        COLLECTIONS["young"] += 1
        gc.collect(0)
    else:
        COLLECTIONS["full"] += 1
        gc.collect()


def collect_if_due() -> bool:
    """Runs the collection the host's policy asks for, if any; says whether there was one."""
    due = collection_due()
    if due is None:
        return False
    collect(due)
    return True


def alloc(size: int) -> Buffer:
    """A new buffer, collecting when the host says a collection is due: after a `no-memory`
    error a full collection is due, and the allocation is retried once after it."""
    try:
        buf = Buffer.alloc(size)
    except Err as err:
        if err.value.code != ErrorCode.NO_MEMORY or not collect_if_due():
            raise
        buf = Buffer.alloc(size)
    collect_if_due()
    return buf


class Collector(exports.Collector):
    def collect(self, kind: Collection) -> None:
        collect(kind)


class Node:
    """Holds a buffer in a reference cycle (it refers to itself)."""

    def __init__(self, buf: Buffer) -> None:
        self.buf = buf
        self.me = self


def check(condition: bool, what: str) -> None:
    if not condition:
        print(f"py_buffers: {what}", file=sys.stderr)
        raise Err(None)


def basic() -> None:
    hello = Buffer.from_bytes(b"hello, ")
    world = Buffer.from_bytes(b"world")
    both = Buffer.concat([hello, world])
    check(both.len() == 12, f"concat has length {both.len()}")
    check(both.read(0, 100) == b"hello, world", "concat read back wrong")
    check(both.slice(7, 12).read(0, 5) == b"world", "slice read back wrong")
    zeros = Buffer.alloc(4)
    zeros.write(1, b"ab")
    check(zeros.read(0, 4) == b"\0ab\0", "write read back wrong")
    try:
        zeros.read(5, 1)
        check(False, "a read past the end succeeded")
    except Err as err:
        check(err.value.code == ErrorCode.OUT_OF_RANGE, f"a read past the end failed with {err.value.code}")
    print("py buffers ok")


def allocate(count: int, size: int, keep: bool) -> None:
    kept = []
    total = 0
    for i in range(count):
        try:
            buf = alloc(size)
        except Err as err:
            code = err.value.code.name.lower().replace("_", "-")
            print(f"py_buffers: buffer {i} of {size} bytes: {code}: {err.value.message}", file=sys.stderr)
            raise Err(None)
        buf.write(size - 1, b"x")
        total += buf.len()
        if keep:
            kept.append(buf)
        else:
            Node(buf)
    print(json.dumps({"n": count, "bytes": total, "young": COLLECTIONS["young"], "full": COLLECTIONS["full"]}))


class Run(exports.Run):
    def run(self) -> None:
        args = sys.argv[1:]
        if args == ["basic"]:
            basic()
        elif len(args) == 3 and args[0] in ("cycles", "live"):
            allocate(int(args[1]), int(args[2]), keep=args[0] == "live")
        else:
            print("usage: py_buffers basic | cycles COUNT SIZE | live COUNT SIZE", file=sys.stderr)
            raise Err(None)
