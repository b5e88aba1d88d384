"""The client against the real agent (datapath/agent): run by that package's TestPythonClient,
which starts an agent, gives it Transforms tag (hpush), wstag (ws) and bad (fails every object),
lets the caller use nope too (which does not exist: the agent reviews before it looks up),
allows one stream at a time (--max-streams 1), and sets MLKUBE_TEST_AGENT_URL and
MLKUBE_TEST_AGENT_TOKEN. Skipped when run alone."""

import hashlib
import os
import time

import pytest

import mlkube

URL = os.environ.get("MLKUBE_TEST_AGENT_URL")
pytestmark = pytest.mark.skipif(not URL, reason="run by go test ./datapath/agent -run TestPythonClient")


@pytest.fixture
def client():
    c = mlkube.Client(URL, token=os.environ.get("MLKUBE_TEST_AGENT_TOKEN"), namespace="default", env={})
    yield c
    c.close()


def test_objects(client):
    info = client.put("py/a b/1.bin", b"hello", checksum=True)
    assert info.checksum == hashlib.sha256(b"hello").hexdigest()
    assert info.node == os.environ["MLKUBE_TEST_AGENT_NODE"]
    client.put("py/a b/2.bin", b"world")
    assert client.get("py/a b/1.bin") == b"hello"
    assert client.get("py/a b/1.bin", byte_range=(1, 2)) == b"el"
    head = client.head("py/a b/1.bin")
    assert (head.size, head.checksum, head.node) == (5, info.checksum, info.node)
    assert [o.name for o in client.list("py/")] == ["py/a b/1.bin", "py/a b/2.bin"]
    page = client.list_page("py/", delimiter="/")
    assert page.prefixes == ["py/a b/"] and page.items == []
    big = os.urandom(300_000)  # past the agent's write buffer of a batch answer
    client.put("py/big", big)
    assert client.get_many(["py/a b/2.bin", "py/big", "py/a b/1.bin"]) == [b"world", big, b"hello"]
    with pytest.raises(mlkube.NotFound):
        client.get_many(["py/a b/1.bin", "py/none"])
    with pytest.raises(mlkube.BadRequest, match=r"objects\[1\]: object \"\.\./x\" contains \.\."):
        client.get_many(["py/big", "../x"])
    client.delete("py/big")
    with pytest.raises(mlkube.BadRequest) as e:
        client.put("py/c", b"x", checksum="00" * 32)
    assert e.value.status == 400 and e.value.object == "py/c"
    assert client.delete("py/", recursive=True) == 2
    with pytest.raises(mlkube.NotFound) as e:
        client.get("py/a b/1.bin")
    assert e.value.status == 404 and e.value.node


def test_transforms_and_pipelines(client):
    client.put("t/in", b"abc")
    assert client.transform("tag", "t/in", args="k") == b"abc|tag:k"
    assert client.transform("tag>>tag", data=b"x") == b"x|tag:|tag:"
    with pytest.raises(mlkube.TransformFailed) as e:
        client.transform("bad", data=b"x")
    assert e.value.status == 502 and "cannot decode this object" in e.value.message
    assert e.value.transform == "default/bad"
    with pytest.raises(mlkube.NotFound, match="transform default/nope not found"):
        client.transform("nope", data=b"x")


def test_stream(client):
    objects = [(f"s/{i}", f"{i}".encode()) for i in range(100)]
    got = list(client.stream("wstag", objects, args="a", window=8))
    assert got == [(f"s/{i}", f"{i}|wstag:a".encode()) for i in range(100)]
    with pytest.raises(mlkube.BadRequest, match="streams need a ws transform"):
        list(client.stream("tag", objects[:1]))


def test_refusals_carry_the_agents_message(client):
    nobody = mlkube.Client(URL, token="nobody", namespace="default", env={})
    with pytest.raises(mlkube.Forbidden) as e:
        nobody.get("x")
    assert e.value.status == 403 and "nobody" in e.value.message
    with pytest.raises(mlkube.Forbidden):
        list(nobody.stream("wstag", [("a", b"1")]))
    stranger = mlkube.Client(URL, token="unknown", namespace="default", env={})
    with pytest.raises(mlkube.Unauthorized) as e:
        stranger.transform("tag", data=b"x")
    assert e.value.status == 401


def test_a_stream_over_the_agents_cap_is_retried(client):
    held = client.stream("wstag", iter([("h/0", b"0"), ("h/1", b"1")]), window=1)
    assert next(held) == ("h/0", b"0|wstag:")  # open, and holding the node's one stream
    impatient = mlkube.Client(URL, token=client.token(), namespace="default", env={}, retries_429=2,
                              max_retry_wait=0.05)
    start = time.monotonic()
    with pytest.raises(mlkube.TooManyRequests) as e:
        list(impatient.stream("wstag", [("a", b"1")]))
    assert e.value.status == 429 and "--max-streams" in e.value.message
    assert time.monotonic() - start >= 0.1  # two waits: the agent sent no Retry-After, 1 s capped at 0.05
    held.close()  # the agent releases the stream once it sees the close: the retries outwait that
    assert list(client.stream("wstag", [("a", b"1")])) == [("a", b"1|wstag:")]
