"""Requests refused with 429 are sent again after the agent's Retry-After, within the client's bounds."""

import io

import pytest

import mlkube


def attempts(agent, method, path):
    return sum(1 for m, p in agent.requests if m == method and p.startswith(path))


def test_a_get_is_retried_after_the_agents_retry_after(agent, client, waits):
    agent.store("x", b"1")
    agent.throttle_next = 2
    assert client.get("x") == b"1"
    assert waits == [3.0, 3.0]
    assert attempts(agent, "GET", "/v1/objects/team-a/x") == 3


def test_the_number_of_retries_is_bounded(agent, waits):
    c = mlkube.Client(agent.url, token="token-1", namespace=agent.namespace, env={}, retries_429=2)
    agent.throttle = True
    with pytest.raises(mlkube.TooManyRequests) as e:
        c.get("x")
    assert e.value.retry_after == 3.0 and "--max-streams" in e.value.message
    assert waits == [3.0, 3.0]
    assert attempts(agent, "GET", "/v1/objects/team-a/x") == 3


def test_each_wait_is_bounded(agent, waits):
    c = mlkube.Client(agent.url, token="token-1", namespace=agent.namespace, env={}, max_retry_wait=5)
    agent.retry_after = "100"
    agent.throttle_next = 2
    assert c.transform("upper", data=b"a") == b"A"
    assert waits == [5.0, 5.0]


def test_without_retry_after_the_waits_double(agent, client, waits):
    agent.retry_after = None
    agent.throttle = True
    with pytest.raises(mlkube.TooManyRequests):
        client.head("x")
    assert waits == [1.0, 2.0, 4.0]
    assert attempts(agent, "HEAD", "/v1/objects/team-a/x") == 4


def test_no_retries(agent, waits):
    c = mlkube.Client(agent.url, token="token-1", namespace=agent.namespace, env={}, retries_429=0)
    agent.throttle_next = 1
    with pytest.raises(mlkube.TooManyRequests):
        c.delete("x")
    assert waits == [] and attempts(agent, "DELETE", "/v1/objects/team-a/x") == 1


def test_a_put_of_bytes_is_sent_again_a_put_of_a_file_is_not(agent, client, waits, tmp_path):
    agent.throttle_next = 1
    assert client.put("b", b"bytes").size == 5
    assert agent.objects["b"][0] == b"bytes" and waits == [3.0]
    f = tmp_path / "f"
    f.write_bytes(b"file")
    agent.throttle_next = 1
    with open(f, "rb") as body, pytest.raises(mlkube.TooManyRequests):
        client.put("f", body)
    with pytest.raises(mlkube.TooManyRequests):
        agent.throttle_next = 1
        client.put("g", io.BytesIO(b"stream"))
    assert waits == [3.0] and "f" not in agent.objects and "g" not in agent.objects
    assert attempts(agent, "PUT", "/v1/objects/team-a/f") == 1


def test_a_stream_is_opened_again(agent, client, waits):
    # The refused upgrade, then the GET that fetches the agent's message, are both answered 429.
    agent.throttle_next = 2
    assert list(client.stream("upper", [("a", b"x")])) == [("a", b"X")]
    assert waits == [3.0]
    agent.throttle = True
    with pytest.raises(mlkube.TooManyRequests) as e:
        list(client.stream("upper", [("a", b"x")]))
    assert e.value.retry_after == 3.0 and "--max-streams" in e.value.message
    assert waits == [3.0] * 4


def test_bad_bounds():
    with pytest.raises(ValueError, match="retries_429=-1, max_retry_wait=30.0: neither may be negative"):
        mlkube.Client("http://x", token="t", namespace="n", env={}, retries_429=-1)
