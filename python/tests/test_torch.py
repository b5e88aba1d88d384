"""The datasets with a real DataLoader; skipped where PyTorch is not installed (Debian's
python3-torch takes minutes to install, so CI runs the pure split tests only)."""

import pytest

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

import mlkube  # noqa: E402
from mlkube.torch import ObjectDataset, ObjectIterableDataset  # noqa: E402


@pytest.fixture
def dataset(agent):
    for i in range(50):
        agent.store(f"train/{i:03d}", f"sample-{i}".encode(), node="node-a" if i % 3 else "node-b")
    agent.store("val/000", b"v")
    return agent


def names_read(loader):
    out = []
    for batch in loader:
        out.extend(batch[0] if isinstance(batch, (list, tuple)) else batch)
    return out


@pytest.mark.parametrize("workers", [0, 2])
def test_iterable_dataset_reads_every_object_once_across_ranks_and_workers(dataset, client, workers):
    seen = []
    for rank in range(3):
        ds = ObjectIterableDataset("train/", client=client, rank=rank, world_size=3)
        loader = DataLoader(ds, batch_size=4, num_workers=workers)
        got = names_read(loader)
        assert len(got) == len(ds)
        seen.extend(got)
    assert sorted(seen) == [f"train/{i:03d}" for i in range(50)]
    assert len(seen) == 50


def test_map_dataset_with_transform_and_decode(dataset, client):
    decode = lambda name, data: (name, data.decode())  # noqa: E731
    seen = []
    for rank in range(2):
        ds = ObjectDataset("train/", client=client, transform="upper", decode=decode, rank=rank, world_size=2)
        for batch in DataLoader(ds, batch_size=5, num_workers=2):
            seen.extend(zip(*batch))
    assert sorted(seen) == [(f"train/{i:03d}", f"SAMPLE-{i}") for i in range(50)]


def test_template_and_names(dataset, client):
    ds = ObjectDataset(template="train/{000..004}", client=client, rank=0, world_size=1)
    assert [ds[i][1] for i in range(len(ds))] == [f"sample-{i}".encode() for i in range(5)]
    ds = ObjectIterableDataset(names=["val/000", "train/001"], client=client, rank=1, world_size=2)
    assert list(ds) == [("train/001", b"sample-1")]


def test_ranks_from_the_environment(dataset, client, monkeypatch):
    monkeypatch.setenv("DMLC_NUM_WORKER", "2")
    monkeypatch.setenv("DMLC_WORKER_ID", "1")
    ds = ObjectDataset("train/", client=client)
    assert (ds.rank, ds.world_size, len(ds)) == (1, 2, 25) and ds.names[0] == "train/025"


def test_bad_arguments(client):
    with pytest.raises(ValueError, match="exactly one of prefix=, names= or template="):
        ObjectDataset("a", names=["b"], client=client)
    with pytest.raises(ValueError, match="names= is a list"):
        ObjectDataset(names="a", client=client)
    with pytest.raises(ValueError, match="both rank= and world_size="):
        ObjectDataset("a", client=client, rank=0)


@pytest.mark.parametrize("workers", [0, 2])
def test_iterable_dataset_reads_as_stored_a_batch_at_a_time(dataset, client, workers):
    ds = ObjectIterableDataset("train/", client=client, batch=8)
    got = {name: data for name, data in DataLoader(ds, batch_size=None, num_workers=workers)}
    assert got == {n: dataset.objects[n][0] for n in dataset.objects if n.startswith("train/")}
    batches = [p for m, p in dataset.requests if m == "POST"]
    # 50 objects, each worker's share cut into batches of 8: 7 batches, or 4 + 4 with 2 workers.
    assert len(batches) == (7 if workers == 0 else 8)
    # The agent is node-a's: node-b's objects are each read with a GET of their own.
    gets = [p for m, p in dataset.requests if m == "GET" and "/train/" in p]
    assert len(gets) == len([n for n in got if dataset.objects[n][1] == "node-b"])


def test_missing_object_raises(dataset, client):
    ds = ObjectDataset(names=["nope"], client=client)
    with pytest.raises(mlkube.NotFound):
        ds[0]


def test_locality_reads_each_nodes_objects_on_its_rank(dataset, client):
    seen = []
    for rank, node in enumerate(["node-a", "node-b"]):
        ds = ObjectIterableDataset("train/", client=client, rank=rank, world_size=2, locality=True,
                                   rank_nodes=["node-a", "node-b"])
        got = names_read(DataLoader(ds, batch_size=4, num_workers=2))
        assert {dataset.objects[n][1] for n in got} == {node}
        seen.extend(got)
    assert sorted(seen) == [f"train/{i:03d}" for i in range(50)]


def test_locality_gathers_the_nodes_through_torch_distributed(dataset, client, monkeypatch):
    import socket
    import torch.distributed as dist
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        with pytest.raises(ValueError, match=r"needs \$MLKUBE_NODE"):
            ObjectDataset("train/", client=client, locality=True)
        monkeypatch.setenv("MLKUBE_NODE", "node-b")
        ds = ObjectDataset("train/", client=client, locality=True)
        assert len(ds) == 50  # one rank: node-a's objects have no rank of their own and come here too
    finally:
        dist.destroy_process_group()


def test_locality_needs_a_prefix_and_the_ranks_nodes(dataset, client):
    with pytest.raises(ValueError, match="locality=True needs prefix="):
        ObjectDataset(names=["a"], client=client, locality=True)
    with pytest.raises(ValueError, match="pass rank_nodes=, or initialise torch.distributed"):
        ObjectDataset("train/", client=client, rank=0, world_size=2, locality=True)
    with pytest.raises(ValueError, match="rank_nodes names 1 nodes for 2 ranks"):
        ObjectDataset("train/", client=client, rank=0, world_size=2, locality=True, rank_nodes=["node-a"])


@pytest.fixture
def job_env(monkeypatch):
    """A worker's environment with no MxJob dataset yet; the tests add what a job sets."""
    for k in ("MLKUBE_DATASET_PREFIX", "MLKUBE_DATASET_TEMPLATE", "MLKUBE_DATASET_TRANSFORM", "MLKUBE_DATASET_ARGS"):
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


@pytest.mark.parametrize("cls", [ObjectDataset, ObjectIterableDataset])
def test_no_objects_named_reads_the_mxjobs_dataset(dataset, client, job_env, cls):
    job_env.setenv("MLKUBE_DATASET_PREFIX", "train/")
    job_env.setenv("MLKUBE_DATASET_TRANSFORM", "tag")
    job_env.setenv("MLKUBE_DATASET_ARGS", "k=v")
    ds = cls(client=client, rank=0, world_size=1)
    assert (len(ds), ds.transform, ds.args) == (50, "tag", "k=v")
    first = ds[0] if cls is ObjectDataset else next(iter(ds))
    assert first == ("train/000", b"k=v:sample-0")


def test_the_mxjobs_template_and_a_transform_of_the_callers(dataset, client, job_env):
    job_env.setenv("MLKUBE_DATASET_TEMPLATE", "train/{000..002}")
    job_env.setenv("MLKUBE_DATASET_TRANSFORM", "tag")
    job_env.setenv("MLKUBE_DATASET_ARGS", "k=v")
    ds = ObjectDataset(client=client, transform="upper", rank=0, world_size=1)
    assert [ds[i] for i in range(len(ds))] == [(f"train/{i:03d}", f"SAMPLE-{i}".encode()) for i in range(3)]
    ds = ObjectDataset(client=client, args="other", rank=0, world_size=1)
    assert (ds.transform, ds.args, ds[0][1]) == ("tag", "other", b"other:sample-0")
    ds = ObjectDataset(client=client, transform="", rank=0, world_size=1)  # as stored
    assert (ds.transform, ds.args, ds[0][1]) == (None, "", b"sample-0")


def test_objects_the_caller_names_do_not_take_the_mxjobs_transform(dataset, client, job_env):
    job_env.setenv("MLKUBE_DATASET_PREFIX", "val/")
    job_env.setenv("MLKUBE_DATASET_TRANSFORM", "tag")
    ds = ObjectDataset("train/", client=client, rank=0, world_size=1)
    assert (len(ds), ds.transform, ds[0][1]) == (50, None, b"sample-0")


def test_no_objects_and_no_mxjob_dataset(client, job_env):
    job_env.setenv("MLKUBE_DATASET_TRANSFORM", "tag")
    with pytest.raises(ValueError, match=r"sets \$MLKUBE_DATASET_PREFIX or \$MLKUBE_DATASET_TEMPLATE"):
        ObjectIterableDataset(client=client)


@pytest.mark.parametrize("workers", [0, 2])
def test_stream_sends_each_workers_objects_over_one_websocket(dataset, client, workers):
    ds = ObjectIterableDataset("train/", client=client, transform="tag", args="k", stream=True, window=4,
                               rank=0, world_size=1)
    got = [tuple(sample) for sample in DataLoader(ds, batch_size=None, num_workers=workers)]
    assert sorted(got) == [(f"train/{i:03d}", f"k:sample-{i}".encode()) for i in range(50)]
    streams = [p for m, p in dataset.requests if p.startswith("/v1/stream/")]
    assert streams == ["/v1/stream/team-a/tag"] * max(workers, 1)
    assert not [p for m, p in dataset.requests if p.startswith("/v1/transform/")]


def test_stream_keeps_the_window_it_is_given(dataset, client, monkeypatch):
    windows = []
    real = mlkube.Client.stream

    def spy(self, transform, objects, **kwargs):
        windows.append(kwargs["window"])
        return real(self, transform, objects, **kwargs)
    monkeypatch.setattr(mlkube.Client, "stream", spy)
    ds = ObjectIterableDataset(names=["train/001"], client=client, transform="upper", stream=True, window=3)
    assert list(ds) == [("train/001", b"SAMPLE-1")] and windows == [3]


def test_stream_needs_one_transform(client):
    with pytest.raises(ValueError, match="stream=True needs one ws Transform .* not None"):
        ObjectIterableDataset(names=["a"], client=client, stream=True)
    with pytest.raises(ValueError, match="not 'upper>>rev'"):
        ObjectIterableDataset(names=["a"], client=client, transform="upper>>rev", stream=True)
    with pytest.raises(ValueError, match="window 0"):
        ObjectIterableDataset(names=["a"], client=client, transform="upper", stream=True, window=0)


def test_batch_reads_are_bounded_in_objects_and_bytes(agent, client, monkeypatch):
    import mlkube.torch as mt
    with pytest.raises(ValueError, match="batch 0: a batch read asks for 1 to 1000"):
        ObjectIterableDataset(names=["a"], client=client, batch=0)
    with pytest.raises(ValueError, match="batch 1001"):
        ObjectIterableDataset(names=["a"], client=client, batch=1001)
    monkeypatch.setattr(mt, "BATCH_BYTES", 10)
    for name, size in [("p/a", 4), ("p/b", 4), ("p/c", 4), ("p/d", 11), ("p/e", 1)]:
        agent.store(name, b"x" * size)
    ds = ObjectIterableDataset("p/", client=client)
    # a + b fill 8 of 10 bytes, c would pass 10; d is over the bound and is read alone.
    assert list(ds.batches(ds.names)) == [["p/a", "p/b"], ["p/c"], ["p/d"], ["p/e"]]
    assert {n: len(d) for n, d in ds} == {"p/a": 4, "p/b": 4, "p/c": 4, "p/d": 11, "p/e": 1}
    # Names without sizes (a list) are read one GET each.
    assert list(ObjectIterableDataset(names=["p/a", "p/b"], client=client).batches(["p/a", "p/b"])) == [["p/a"], ["p/b"]]
