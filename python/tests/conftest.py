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
