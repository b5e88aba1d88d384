import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # fakeagent
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))  # mlkube, uninstalled

import mlkube  # noqa: E402
from fakeagent import FakeAgent  # noqa: E402


@pytest.fixture
def agent():
    a = FakeAgent().start()
    a.transforms["upper"] = lambda b, args: b.upper()
    a.transforms["rev"] = lambda b, args: b[::-1]
    a.transforms["tag"] = lambda b, args: args.encode() + b":" + b
    yield a
    a.stop()


@pytest.fixture
def client(agent):
    c = mlkube.Client(agent.url, token="token-1", namespace=agent.namespace, env={}, read_timeout=10)
    yield c
    c.close()


@pytest.fixture
def waits(monkeypatch):
    """The waits of the client's 429 retries, recorded instead of slept."""
    import mlkube.client
    seen = []
    monkeypatch.setattr(mlkube.client, "_sleep", seen.append)
    return seen


@pytest.fixture
def worker_env(agent, tmp_path):
    """The environment of an MxJob worker whose spec.dataset is {prefix: train, transform: decode},
    with the fake agent for its node: 64 objects of one sample each (four float32 features and a
    float32 target), which decode passes on as they are."""
    import struct
    for i in range(64):
        x = [i % 5 / 5, i % 3 / 3, i % 7 / 7, 1.0]
        agent.store(f"train/{i:03d}", struct.pack("<5f", *x, 2 * x[0] - x[1] + 0.5))
    agent.transforms["decode"] = lambda b, args: b
    token = tmp_path / "token"
    token.write_text("token-1")
    env = dict(os.environ, MLKUBE_DATAPATH_URL=agent.url, MLKUBE_NAMESPACE=agent.namespace,
               MLKUBE_DATAPATH_TOKEN_FILE=str(token), PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."),
               MLKUBE_DATASET_PREFIX="train/", MLKUBE_DATASET_TRANSFORM="decode")
    for k in ("RANK", "WORLD_SIZE", "DMLC_NUM_WORKER", "DMLC_WORKER_ID", "MLKUBE_DATASET_TEMPLATE",
              "MLKUBE_DATASET_ARGS"):
        env.pop(k, None)
    return env
