"""The in-pod speed of mlkube.torch (make bench-cluster, docs/benchmarks.md): one pod on one node
reads the same objects through its node's agent and, as plain Python does, with open() of the
files in a hostPath of the node's data root and with an HTTP GET each from a bare Go file server
of the same files, through a DataLoader with 0 and 4 workers; then the same objects through an
md5 Transform on the node against md5 computed in the DataLoader workers.

Usage: torch-trainer bench DATA_DIR NODE ROUNDS BARE_URL SIZE:COUNT...

DATA_DIR is the namespace's directory of the node's data root (where the agent keeps its objects),
NODE the node the pod runs on (every object is put there), BARE_URL the base URL under which the
bare server serves DATA_DIR's files, each SIZE:COUNT a set of COUNT objects of SIZE bytes. The
client finds the agent, its token and the namespace as a pod's client does.

Every row of every round reads every object of its set exactly once and checks each answer (the
bytes, or their md5) against what was put; a wrong or missing answer fails the run. One JSON line a
row and round: {"row", "size", "workers", "round", "objects", "seconds"}. The rows of a
round run one after another in the same pod, so each ratio compares like with like.
"""

import hashlib
import json
import os
import random
import sys
import time
import warnings
from typing import Any, Callable, Dict, Iterator, List, Sequence, Tuple

import urllib3
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from mlkube import Client
from mlkube.split import share
from mlkube.torch import ObjectIterableDataset

TRANSFORM = "md5"  # the namespace's Transform of the md5 transformer, made by the bench
PREFIX = "pybench"
WORKERS = (0, 4)


class FileDataset(IterableDataset):
    """What a training script without mlkube does: open() each file of a directory, the names
    shared among DataLoader workers as mlkube's iterable dataset shares them."""

    def __init__(self, root: str, names: Sequence[str], decode: Callable[[bytes], Any]) -> None:
        self.root, self.names, self.decode = root, list(names), decode

    def __iter__(self) -> Iterator[Tuple[str, Any]]:
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        for i in share(len(self.names), worker, workers):
            name = self.names[i]
            with open(os.path.join(self.root, name), "rb") as f:
                yield name, self.decode(f.read())


class HTTPDataset(FileDataset):
    """What a training script reading over plain HTTP does: a GET of each file from a bare Go file
    server (net/http, sendfile) behind a node-local Service, with urllib3 as mlkube's client uses
    it; the same bytes, the same network path as the agent's, none of its work."""

    def __iter__(self) -> Iterator[Tuple[str, Any]]:
        info = get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        pool = urllib3.PoolManager()
        for i in share(len(self.names), worker, workers):
            name = self.names[i]
            resp = pool.request("GET", f"{self.root}/{name}")
            if resp.status != 200:
                raise RuntimeError(f"GET {self.root}/{name}: {resp.status}")
            yield name, self.decode(resp.data)


def raw(data: bytes) -> bytes:
    return data


def md5(data: bytes) -> bytes:
    return hashlib.md5(data).hexdigest().encode()


def put(client: Client, node: str, size: int, count: int) -> Dict[str, bytes]:
    """Stores count objects of size random bytes on node and returns them by name."""
    rng = random.Random(size)
    objects = {f"{PREFIX}/{size}/{i:06d}": rng.randbytes(size) for i in range(count)}
    for name, data in objects.items():
        client.put(name, data, node=node)
    return objects


def timed(loader: DataLoader, want: Dict[str, bytes]) -> float:
    """Reads every sample of loader, checks each against want, and returns the seconds taken."""
    seen: Dict[str, bool] = {}
    start = time.perf_counter()
    for name, data in loader:
        if data != want.get(name):
            raise RuntimeError(f"object {name}: {len(data)} bytes that differ from what was put")
        if name in seen:
            raise RuntimeError(f"object {name} read twice")
        seen[name] = True
    seconds = time.perf_counter() - start
    if len(seen) != len(want):
        raise RuntimeError(f"{len(seen)} objects read of {len(want)}")
    return seconds


def main(argv: List[str]) -> int:
    # The pod may have fewer cores than DataLoader workers: the rows measure that as it is.
    warnings.filterwarnings("ignore", message="This DataLoader will create")
    if len(argv) < 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root, node, rounds, bare, sets = argv[0], argv[1], int(argv[2]), argv[3], argv[4:]
    client = Client()
    for spec in sets:
        size, count = (int(x) for x in spec.split(":"))
        objects = put(client, node, size, count)
        names = sorted(objects)
        digests = {name: md5(data) for name, data in objects.items()}
        prefix = f"{PREFIX}/{size}/"
        rows: List[Tuple[str, Any, Dict[str, bytes]]] = [
            ("py-open", FileDataset(root, names, raw), objects),
            ("py-http", HTTPDataset(bare.rstrip("/"), names, raw), objects),
            ("py-agent", ObjectIterableDataset(prefix, client=client), objects),
            ("py-md5-loader", FileDataset(root, names, md5), digests),
            ("py-md5-node", ObjectIterableDataset(prefix, client=client, transform=TRANSFORM), digests),
        ]
        for r in range(rounds):
            for workers in WORKERS:
                for row, dataset, want in rows:
                    loader = DataLoader(dataset, batch_size=None, num_workers=workers)
                    seconds = timed(loader, want)
                    print(json.dumps({"row": row, "size": size, "workers": workers, "round": r,
                                      "objects": len(want), "seconds": seconds}), flush=True)
        client.delete(prefix, recursive=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
