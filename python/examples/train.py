#!/usr/bin/python3
"""Trains a linear model on a dataset of the namespace, read through the node's own agent.

Each object holds one sample: four little-endian float32 features and a float32 target. In a
pod (an MxJob worker, say) everything is found by itself; outside one, set MLKUBE_DATAPATH_URL,
MLKUBE_NAMESPACE and MLKUBE_DATAPATH_TOKEN_FILE (docs/python.md). As an MxJob worker it reads
the job's spec.dataset unless --prefix names other objects.

    python3 train.py [--prefix train/ [--transform decode]] [--workers 2] [--epochs 5]
"""

import argparse
import struct
import sys

import torch
from torch.utils.data import DataLoader

import mlkube
from mlkube.torch import ObjectIterableDataset

FEATURES = 4


def decode(name: str, data: bytes):
    """One sample: its features and target as tensors; a malformed object says which it is."""
    if len(data) != 4 * (FEATURES + 1):
        raise ValueError(f"object {name}: {len(data)} bytes, want {4 * (FEATURES + 1)}")
    *x, y = struct.unpack(f"<{FEATURES + 1}f", data)
    return torch.tensor(x), torch.tensor([y])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prefix", default=None,
                   help="the dataset: every object under this prefix (by default the MxJob's dataset)")
    p.add_argument("--transform", default=None,
                   help="a Transform (or pipeline a>>b) each object goes through (by default the MxJob dataset's)")
    p.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    p.add_argument("--epochs", type=int, default=5)
    args = p.parse_args()

    client = mlkube.Client()
    data = ObjectIterableDataset(args.prefix, client=client, transform=args.transform, decode=decode)
    loader = DataLoader(data, batch_size=32, num_workers=args.workers)
    model = torch.nn.Linear(FEATURES, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        total, n = 0.0, 0
        for x, y in loader:
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            total, n = total + loss.item() * len(x), n + len(x)
        print(f"rank {data.rank}/{data.world_size} epoch {epoch}: {n} samples, loss {total / max(n, 1):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
