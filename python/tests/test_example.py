"""examples/train.py runs as docs/python.md shows, as an MxJob worker would, against the fake agent."""

import os
import struct
import subprocess
import sys

import pytest

pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))


def test_train_example(agent, tmp_path):
    for i in range(64):
        x = [i % 5 / 5, i % 3 / 3, i % 7 / 7, 1.0]
        agent.store(f"train/{i:03d}", struct.pack("<5f", *x, 2 * x[0] - x[1] + 0.5))
    agent.transforms["decode"] = lambda b, args: b  # the objects are already samples
    token = tmp_path / "token"
    token.write_text("token-1")
    # As an MxJob worker of a job with spec.dataset {prefix: train, transform: decode} sees it.
    env = dict(os.environ, MLKUBE_DATAPATH_URL=agent.url, MLKUBE_NAMESPACE=agent.namespace,
               MLKUBE_DATAPATH_TOKEN_FILE=str(token), PYTHONPATH=os.path.dirname(HERE),
               MLKUBE_DATASET_PREFIX="train/", MLKUBE_DATASET_TRANSFORM="decode")
    for k in ("RANK", "WORLD_SIZE", "DMLC_NUM_WORKER", "DMLC_WORKER_ID"):
        env.pop(k, None)
    out = subprocess.run([sys.executable, os.path.join(HERE, "..", "examples", "train.py"), "--epochs", "2"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["rank 0/1 epoch 0", "rank 0/1 epoch 1"]
    assert all(" 64 samples" in line for line in lines)
