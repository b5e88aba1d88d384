"""The transform API and pipelines against the fake agent."""

import pytest

import mlkube
from fakeagent import TransformError


def test_transform_of_a_local_object(agent, client):
    agent.store("notes.txt", b"abc")
    assert client.transform("upper", "notes.txt") == b"ABC"
    assert client.transform("tag", "notes.txt", args="x y") == b"x y:abc"
    assert ("GET", "/v1/transform/team-a/tag/notes.txt?args=x+y") in agent.requests


def test_transform_of_a_body(agent, client):
    assert client.transform("upper", data=b"abc") == b"ABC"
    assert client.transform("upper", "label", data=b"q") == b"Q"
    assert ("PUT", "/v1/transform/team-a/upper/body") in agent.requests


def test_pipelines(agent, client):
    agent.store("n", b"abc")
    assert client.transform("upper>>rev", "n") == b"CBA"
    assert client.transform(["rev", "upper"], data=b"xy") == b"YX"
    assert ("GET", "/v1/transform/team-a/upper%3E%3Erev/n") in agent.requests
    with pytest.raises(ValueError, match="no empty stage"):
        client.transform("upper>>", "n")
    with pytest.raises(ValueError, match="at most 8"):
        client.transform(["upper"] * 9, "n")


def test_transform_anywhere_reads_another_nodes_object_through_the_agent(agent, client):
    agent.store("remote", b"abc", node="node-b")
    with pytest.raises(mlkube.NotFound):
        client.transform("upper", "remote")  # GET reads this node's disk only
    assert client.transform_anywhere("upper", "remote") == b"ABC"
    with pytest.raises(mlkube.NotFound, match="object missing not found on any ready node"):
        client.transform_anywhere("upper", "missing")
    with pytest.raises(mlkube.NotFound, match="transform team-a/nope not found"):
        client.transform_anywhere("nope", "remote")


def test_transformer_failure(agent, client):
    def broken(b, args):
        raise TransformError("transformer answered 500: bad image header")
    agent.transforms["decode"] = broken
    with pytest.raises(mlkube.TransformFailed) as e:
        client.transform("decode", data=b"x")
    assert e.value.status == 502 and e.value.transform == "team-a/decode"
    assert e.value.message == "transformer answered 500: bad image header"


def test_transform_needs_an_input(client):
    with pytest.raises(ValueError, match="name an object"):
        client.transform("upper")
    with pytest.raises(ValueError, match="data or src, not both"):
        client.transform("upper", "n", data=b"", src="http://x")
