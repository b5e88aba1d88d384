"""Refusals become exceptions of one hierarchy carrying the status and the agent's remedy."""

import pytest

import mlkube
from mlkube.errors import error_for


def test_unauthorized(agent, client):
    client._token = "stale"
    with pytest.raises(mlkube.Unauthorized) as e:
        client.get("x")
    assert e.value.status == 401 and 'audience "mlkube-datapath"' in e.value.message


def test_forbidden(agent, client):
    agent.forbidden.add("upper")
    with pytest.raises(mlkube.Forbidden) as e:
        client.transform("upper", data=b"x")
    assert e.value.status == 403
    assert str(e.value) == ("mlkube: HTTP 403 (node node-a): forbidden: system:serviceaccount:team-a:loader "
                            "may not use transforms.etl.mlkube.io upper in namespace team-a")
    assert isinstance(e.value, mlkube.MlkubeError)


def test_too_many_requests_carries_retry_after(agent, client, waits):
    agent.throttle = True
    with pytest.raises(mlkube.TooManyRequests) as e:
        client.get("x")
    assert e.value.retry_after == 3.0 and "--max-streams" in e.value.message
    # A HEAD answer has no body: the status alone says what happened.
    with pytest.raises(mlkube.TooManyRequests, match="HTTP 429"):
        client.head("x")


def test_unreachable_agent():
    c = mlkube.Client("http://127.0.0.1:1", token="t", namespace="n", env={}, connect_timeout=1)
    with pytest.raises(mlkube.ConnectionFailed) as e:
        c.get("x")
    assert e.value.status is None


@pytest.mark.parametrize("status,cls", [(400, mlkube.BadRequest), (404, mlkube.NotFound),
                                        (412, mlkube.PreconditionFailed), (413, mlkube.TooLarge),
                                        (503, mlkube.Unavailable), (507, mlkube.InsufficientStorage),
                                        (500, mlkube.MlkubeError)])
def test_error_for_each_status(status, cls):
    e = error_for(status, b'{"error": "why; what to do", "node": "n1", "object": "o"}')
    assert type(e) is cls and (e.status, e.message, e.node, e.object) == (status, "why; what to do", "n1", "o")


def test_error_body_that_is_not_the_agents():
    e = error_for(502, b"<html>bad gateway</html>")
    assert e.message == "<html>bad gateway</html>" and e.node == ""
    assert error_for(500, b"").message == "HTTP 500"


def test_a_get_is_retried_once_when_its_connection_breaks(agent, client):
    agent.store("x", b"1")
    agent.drop_next = 1  # the answer never comes: the connection is closed
    assert client.get("x") == b"1"
    agent.drop_next = 2
    with pytest.raises(mlkube.ConnectionFailed):
        client.get("x")
    agent.drop_next = 1
    with pytest.raises(mlkube.ConnectionFailed):
        client.put("y", b"2")  # sent: not repeated behind the caller's back
