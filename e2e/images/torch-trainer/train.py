"""The e2e training workload: every replica of an MxJob runs it, and DMLC_ROLE says what it does.

scheduler  hosts the job's rendezvous, a torch.distributed TCPStore on DMLC_PS_ROOT_PORT (the
           port every replica is told), until each worker reports; it fails when one reports a
           failure. The job is submitted with --success-policy AllWorkers: it succeeds when every
           worker has, so no worker is removed while it is still exiting.
server     has nothing to serve: the workers average their gradients with all_reduce.
worker     joins a gloo process group through the store, reads its share of the job's dataset
           (spec.dataset: the prefix and Transform in its MLKUBE_DATASET_* environment) through
           its own node's agent with locality, so it reads the objects its node holds, and trains
           a linear model on them. Each object is one sample, four features and a target as
           little-endian float32s (what the Transform makes of a line of CSV, or the objects as
           stored when the dataset names no Transform). It prints one line per object it read,
           "object NAME SHA256 NODE", and one per request of the client that reads objects as
           stored, "batch N" or "get NAME", which the e2e test checks: every object read exactly
           once across the workers, byte for byte, each on the node that holds it, and a dataset
           without a Transform read in batches.
"""

import datetime
import hashlib
import os
import struct
import sys
import traceback

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

from mlkube import Client
from mlkube.torch import ObjectIterableDataset

FEATURES = 4
TIMEOUT = datetime.timedelta(minutes=10)


def rendezvous(master: bool) -> "dist.TCPStore":
    """The job's store: hosted by the scheduler, reached by the workers at the DMLC root."""
    return dist.TCPStore(os.environ["DMLC_PS_ROOT_URI"], int(os.environ["DMLC_PS_ROOT_PORT"]),
                         is_master=master, timeout=TIMEOUT, wait_for_workers=False)


def scheduler() -> int:
    store = rendezvous(True)
    keys = [f"done/{r}" for r in range(int(os.environ["DMLC_NUM_WORKER"]))]
    store.wait(keys, TIMEOUT)
    reports = {k: store.get(k).decode() for k in keys}
    for k, v in reports.items():
        print(f"{k}: {v}", flush=True)
    return 0 if all(v == "ok" for v in reports.values()) else 1


def say(line: str) -> None:
    """Prints line with one write: the DataLoader workers print too, and a line written in pieces
    (print writes the text and its newline apart) could interleave with theirs."""
    os.write(1, (line + "\n").encode())


class ReportingClient(Client):
    """The client, saying how it reads objects as stored: a batch read of N objects, or a GET."""

    def get_many(self, names):
        say(f"batch {len(names)}")
        return super().get_many(names)

    def get(self, name, **kwargs):
        say(f"get {name}")
        return super().get(name, **kwargs)


def decode(name: str, data: bytes):
    """One sample, with what the test checks: the object's name and its bytes' SHA-256."""
    if len(data) != 4 * (FEATURES + 1):
        raise ValueError(f"object {name}: {len(data)} bytes, want {4 * (FEATURES + 1)}")
    *x, y = struct.unpack(f"<{FEATURES + 1}f", data)
    return torch.tensor(x), torch.tensor([y]), name, hashlib.sha256(data).hexdigest()


def worker() -> int:
    rank = int(os.environ["DMLC_WORKER_ID"])
    store = rendezvous(False)
    try:
        dist.init_process_group("gloo", store=dist.PrefixStore("gloo", store), rank=rank,
                                world_size=int(os.environ["DMLC_NUM_WORKER"]), timeout=TIMEOUT)
        loss = train(rank)
        # Tear gloo down while the scheduler's store is still up. Left to the interpreter's exit,
        # its threads can outlive the store the scheduler closes once every worker reported, and
        # the worker dies at exit ("terminate called without an active exception", exit 139)
        # after its work succeeded.
        dist.destroy_process_group()
    except Exception as e:  # the scheduler must hear of it, or it waits out its timeout
        traceback.print_exc()
        store.set(f"done/{rank}", f"rank {rank} failed: {e}")
        return 1
    store.set(f"done/{rank}", "ok")
    print(f"rank {rank}: done, loss {loss:.6f}", flush=True)
    return 0


def train(rank: int) -> float:
    node = os.environ["MLKUBE_NODE"]
    # The job's dataset and Transform from the environment; the ranks' nodes gathered over gloo.
    data = ObjectIterableDataset(locality=True, decode=decode, client=ReportingClient())
    xs, ys = [], []
    for x, y, names, digests in DataLoader(data, batch_size=50, num_workers=2):
        xs.append(x)
        ys.append(y)
        for name, digest in zip(names, digests):
            say(f"object {name} {digest} {node}")
    x, y = torch.cat(xs), torch.cat(ys)
    print(f"rank {rank} on {node}: {len(x)} samples of {data.world_size} ranks", flush=True)

    model = torch.nn.Linear(FEATURES, 1)
    with torch.no_grad():  # every rank starts from the same model
        for p in model.parameters():
            p.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    first = last = None
    for step in range(300):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        for p in model.parameters():  # data parallel: the ranks' mean gradient
            dist.all_reduce(p.grad)
            p.grad /= data.world_size
        opt.step()
        first = loss.item() if first is None else first
        last = loss.item()
    print(f"rank {rank}: loss {first:.4f} -> {last:.6f}, weights {model.weight.data.tolist()}, "
          f"bias {model.bias.data.item():.4f}", flush=True)
    if not last < first / 100:
        raise RuntimeError(f"the model did not learn: loss {first} -> {last}")
    return last


def main() -> int:
    role = os.environ.get("DMLC_ROLE", "")
    if role == "scheduler":
        return scheduler()
    if role == "server":
        return 0
    if role == "worker":
        return worker()
    print(f"DMLC_ROLE={role!r}: want scheduler, server or worker (run me in an MxJob)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
