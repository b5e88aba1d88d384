"""examples/train.py runs as docs/python.md shows, as an MxJob worker would, against the fake agent."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))


def test_train_example(worker_env):
    out = subprocess.run([sys.executable, os.path.join(HERE, "..", "examples", "train.py"), "--epochs", "2"],
                         env=worker_env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["rank 0/1 epoch 0", "rank 0/1 epoch 1"]
    assert all(" 64 samples" in line for line in lines)
