"""The object API against the fake agent: every method, its paths and its answers."""

import hashlib
import io
import struct

import pytest

import mlkube


def test_put_get_head_delete(agent, client):
    info = client.put("train/a.bin", b"hello", checksum=True)
    assert (info.name, info.size, info.node) == ("train/a.bin", 5, "node-a")
    assert info.checksum == hashlib.sha256(b"hello").hexdigest()
    assert info.modified is not None and info.modified.microsecond == 123456
    assert client.get("train/a.bin") == b"hello"
    assert client.get("train/a.bin", byte_range=(1, 3)) == b"ell"
    head = client.head("train/a.bin")
    assert (head.size, head.node, head.checksum) == (5, "node-a", info.checksum)
    assert client.exists("train/a.bin") and not client.exists("train/none")
    assert client.delete("train/a.bin") == 1
    with pytest.raises(mlkube.NotFound) as e:
        client.get("train/a.bin")
    assert e.value.status == 404 and e.value.object == "train/a.bin" and e.value.node == "node-a"
    assert "not found on any ready node" in str(e.value)


def test_put_of_a_file_and_to_a_node(agent, client, tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x" * 70000)
    with open(p, "rb") as f:
        client.put("big", f, node="node-b")
    assert agent.objects["big"][:2] == (b"x" * 70000, "node-b")
    client.put("stream", io.BytesIO(b"unknown length"))  # sent chunked
    assert agent.objects["stream"][0] == b"unknown length"
    assert ("PUT", "/v1/objects/team-a/big?node=node-b") in agent.requests


def test_checksum_mismatch_is_bad_request(agent, client):
    with pytest.raises(mlkube.BadRequest) as e:
        client.put("a", b"data", checksum="00" * 32)
    assert e.value.status == 400 and "checksum mismatch" in e.value.message
    assert "a" not in agent.objects


def test_open_streams_the_object(agent, client):
    agent.store("big", b"y" * 100000)
    with client.open("big") as r:
        assert r.read(10) == b"y" * 10
        assert len(r.read()) == 99990


def test_recursive_delete(agent, client):
    for n in ("p/1", "p/2", "q/1"):
        agent.store(n, b"")
    assert client.delete("p/", recursive=True) == 2
    assert sorted(agent.objects) == ["q/1"]
    assert ("DELETE", "/v1/objects/team-a/p/?recursive=true") in agent.requests


def test_list_follows_pages(agent, client):
    for i in range(2500):
        agent.store(f"train/{i:05d}", b"x", node="node-a" if i % 2 else "node-b")
    agent.store("val/0", b"x")
    got = list(client.list("train/"))
    assert [o.name for o in got] == [f"train/{i:05d}" for i in range(2500)]
    assert {o.node for o in got} == {"node-a", "node-b"}
    lists = [p for m, p in agent.requests if p.startswith("/v1/objects/team-a/?")]
    assert lists == ["/v1/objects/team-a/?prefix=train%2F", "/v1/objects/team-a/?prefix=train%2F&after=train%2F00999",
                     "/v1/objects/team-a/?prefix=train%2F&after=train%2F01999"]
    page = client.list_page("train/", limit=10)
    assert len(page.items) == 10 and page.next == "train/00009"
    with pytest.raises(ValueError, match="limit 0"):
        client.list_page(limit=0)


def test_names_are_escaped_segment_by_segment(agent, client):
    client.put("dir/with space/50%?#.txt", b"1")
    client.put("a/./b", b"2")
    assert ("PUT", "/v1/objects/team-a/dir/with%20space/50%25%3F%23.txt") in agent.requests
    assert ("PUT", "/v1/objects/team-a/a/%2E/b") in agent.requests
    assert agent.objects["dir/with space/50%?#.txt"][0] == b"1"
    with pytest.raises(mlkube.BadRequest, match="contains .. as a path element"):
        client.get("a/../b")
    with pytest.raises(ValueError, match="object name is empty"):
        client.get("")


def test_get_many_reads_this_nodes_objects_in_one_request_and_the_rest_alone(agent, client):
    agent.store("a", b"alpha")
    agent.store("b", b"")
    agent.store("c", b"gamma", node="node-b")
    assert client.get_many(["a", "c", "b", "a"]) == [b"alpha", b"gamma", b"", b"alpha"]
    assert [r for r in agent.requests if r[0] == "POST"] == [("POST", "/v1/objects/team-a/?batch=true")]
    assert [p for m, p in agent.requests if m == "GET"] == ["/v1/objects/team-a/c"]
    assert client.get_many([]) == []
    with pytest.raises(mlkube.NotFound):
        client.get_many(["a", "nowhere"])  # not here, and the GET finds it nowhere either


def test_get_many_bounds_and_broken_answers(client):
    from mlkube.client import MAX_BATCH, _parse_batch
    with pytest.raises(ValueError, match="at most 1000"):
        client.get_many(["o"] * (MAX_BATCH + 1))

    def entry(status, name, data):
        return struct.pack(">HHQ", status, len(name), len(data)) + name.encode() + data

    assert _parse_batch(entry(200, "a", b"x") + entry(404, "b", b"gone"), ["a", "b"]) == [b"x", None]
    for answer, names, want in [
        (entry(200, "a", b"xyz")[:-1], ["a"], "not 'a' or is cut short"),
        (entry(200, "a", b"x"), ["a", "b"], "cut short after 1 of 2"),
        (entry(200, "b", b"x"), ["a"], "not 'a'"),
        (entry(200, "a", b"x") + b"!", ["a"], "1 bytes past the 1 objects"),
    ]:
        with pytest.raises(mlkube.MlkubeError, match=want):
            _parse_batch(answer, names)
    with pytest.raises(mlkube.Forbidden) as e:
        _parse_batch(entry(403, "a", b"object a: forbidden"), ["a"])
    assert e.value.message == "object a: forbidden"
