"""The division of objects among ranks and workers: no overlap, no gap, balanced."""

import pytest

from mlkube.split import by_node, rank_and_world, share, worker_share
from mlkube.template import Template


@pytest.mark.parametrize("n", [0, 1, 7, 8, 1000, 1001])
@pytest.mark.parametrize("world,workers", [(1, 1), (2, 1), (2, 4), (3, 2), (8, 3)])
def test_every_object_once(n, world, workers):
    seen = []
    sizes = []
    for rank in range(world):
        for worker in range(workers):
            r = worker_share(n, rank, world, worker, workers)
            seen.extend(r)
            sizes.append(len(r))
    assert seen == list(range(n))  # in order: no overlap, no gap
    rank_sizes = [len(share(n, rank, world)) for rank in range(world)]
    assert max(rank_sizes) - min(rank_sizes) <= 1


def test_share_examples():
    assert [list(share(5, i, 2)) for i in range(2)] == [[0, 1, 2], [3, 4]]
    assert [list(share(2, i, 3)) for i in range(3)] == [[0], [1], []]


@pytest.mark.parametrize("args,msg", [((5, 2, 2), "index 2 is outside 0..1"), ((5, 0, 0), "count 0"),
                                      ((-1, 0, 1), "negative")])
def test_share_refuses(args, msg):
    with pytest.raises(ValueError, match=msg):
        share(*args)


class FakeDist:
    def __init__(self, init):
        self.init = init

    def is_available(self):
        return True

    def is_initialized(self):
        return self.init

    def get_rank(self):
        return 3

    def get_world_size(self):
        return 4


def test_rank_sources_in_order():
    env = {"RANK": "1", "WORLD_SIZE": "2", "DMLC_WORKER_ID": "0", "DMLC_NUM_WORKER": "5", "DMLC_ROLE": "worker"}
    assert rank_and_world(env, FakeDist(True)) == (3, 4)
    assert rank_and_world(env, FakeDist(False)) == (1, 2)
    del env["RANK"], env["WORLD_SIZE"]
    assert rank_and_world(env, None) == (0, 5)
    assert rank_and_world({"DMLC_WORKER_ID": "4", "DMLC_NUM_WORKER": "5"}) == (4, 5)
    assert rank_and_world(dict(env, DMLC_ROLE="server")) == (0, 1)
    assert rank_and_world({}) == (0, 1)


@pytest.mark.parametrize("env,msg", [({"RANK": "1"}, "set both"), ({"RANK": "x", "WORLD_SIZE": "2"}, r"\$RANK='x'"),
                                     ({"RANK": "2", "WORLD_SIZE": "2"}, "rank 2 of 2"),
                                     ({"DMLC_WORKER_ID": "0", "DMLC_NUM_WORKER": "0"}, "DMLC_NUM_WORKER")])
def test_bad_rank_variables(env, msg):
    with pytest.raises(ValueError, match=msg):
        rank_and_world(env)


def test_template():
    t = Template("shard-{0000..0999}.tar")
    assert len(t) == 1000 and t[0] == "shard-0000.tar" and t[-1] == "shard-0999.tar"
    assert list(Template("{a,b}/{8..10}")) == ["a/8", "a/9", "a/10", "b/8", "b/9", "b/10"]
    assert list(Template("{01..3}")) == ["01", "02", "03"]
    assert list(Template("plain")) == ["plain"]
    for bad, msg in [("{3..1}", "ends before"), ("{a}", "neither a range"), ("{a,{b}}", "unbalanced or nested"),
                     ("x}", "unbalanced")]:
        with pytest.raises(ValueError, match=msg):
            Template(bad)


def test_by_node_reads_each_nodes_objects_on_that_node():
    nodes = ["a", "b", "a", "c", "b", "a", "c", "c"]
    got = by_node(nodes, ["a", "b"])  # no rank on c: its objects are spread
    assert sorted(i for s in got for i in s) == list(range(8))  # once each
    assert [nodes[i] for i in got[0] if nodes[i] != "c"] == ["a", "a", "a"]
    assert [nodes[i] for i in got[1] if nodes[i] != "c"] == ["b", "b"]
    assert [len(s) for s in got] == [4, 4]  # the three of c went to b, b, then a (fewest first)


def test_by_node_shares_a_node_among_its_ranks():
    nodes = ["a"] * 5 + ["b"] * 2
    assert by_node(nodes, ["a", "b", "a"]) == [[0, 1, 2], [5, 6], [3, 4]]
    with pytest.raises(ValueError, match="no ranks"):
        by_node(nodes, [])
