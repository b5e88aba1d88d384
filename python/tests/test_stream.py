"""The stream API over a WebSocket: order, the window, per-object failures, refusals."""

import pytest

import mlkube
from fakeagent import TransformError


def objects(n):
    return ((f"o{i}", f"data-{i}".encode()) for i in range(n))


def test_answers_in_order(agent, client):
    got = list(client.stream("upper", objects(200), window=8))
    assert got == [(f"o{i}", f"DATA-{i}".encode()) for i in range(200)]
    assert ("GET", "/v1/stream/team-a/upper") in agent.requests


def test_window_bounds_the_objects_in_flight(agent, client):
    drawn = []

    def source():
        for item in objects(100):
            drawn.append(item[0])
            yield item
    answered = 0
    for _ in client.stream("upper", source(), window=4):
        answered += 1
        # An object is drawn only to be sent at once: drawn - answered is what is in flight.
        assert len(drawn) - answered <= 4 - 1
    assert answered == 100


def test_args_reach_the_transform(agent, client):
    assert list(client.stream("tag", [("a", b"1")], args="k=v")) == [("a", b"k=v:1")]


def test_failed_object_raises_or_is_yielded(agent, client):
    def half(b, args):
        if b.endswith(b"3"):
            raise TransformError("cannot decode o3")
        return b
    agent.transforms["half"] = half
    with pytest.raises(mlkube.TransformFailed) as e:
        list(client.stream("half", objects(6)))
    assert e.value.object == "o3" and e.value.message == "cannot decode o3"
    got = list(client.stream("half", objects(6), errors="yield"))
    assert [n for n, _ in got] == [f"o{i}" for i in range(6)]
    assert isinstance(got[3][1], mlkube.TransformFailed) and got[4][1] == b"data-4"


def test_refused_stream_keeps_the_agents_message(agent, client):
    agent.forbidden.add("upper")
    with pytest.raises(mlkube.Forbidden) as e:
        list(client.stream("upper", objects(1)))
    assert e.value.status == 403 and "may not use transforms.etl.mlkube.io upper" in e.value.message


def test_unknown_transform(agent, client):
    with pytest.raises(mlkube.NotFound, match="transform team-a/nope not found"):
        list(client.stream("nope", objects(1)))


def test_withdrawn_rights_close_the_stream(agent, client):
    agent.revoke_stream_after = 2
    got = []
    with pytest.raises(mlkube.Forbidden, match="RBAC no longer lets loader use Transform team-a/upper"):
        for item in client.stream("upper", objects(10), window=1):
            got.append(item)
    assert [n for n, _ in got] == ["o0", "o1"]


def test_bad_arguments(client):
    with pytest.raises(ValueError, match="window 0"):
        client.stream("upper", [], window=0)
    with pytest.raises(ValueError, match="errors="):
        client.stream("upper", [], errors="ignore")
