"""How a dataset's objects are divided among distributed ranks and DataLoader workers.

Pure functions: every object goes to exactly one (rank, worker), shares differ by at most one
object, and each share is a contiguous run of the sorted names, so a rank's objects stay
together (a prefix listed in name order keeps a node's shard of ``shard-0000..`` close).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple


def share(n: int, index: int, count: int) -> range:
    """The indexes of ``n`` objects that part ``index`` of ``count`` takes: ``range(n)`` cut into
    ``count`` contiguous runs whose lengths differ by at most one, the longer ones first.

    >>> [list(share(5, i, 2)) for i in range(2)]
    [[0, 1, 2], [3, 4]]
    """
    if n < 0:
        raise ValueError(f"object count {n} is negative")
    if count < 1:
        raise ValueError(f"share count {count}: at least 1 is needed")
    if not 0 <= index < count:
        raise ValueError(f"share index {index} is outside 0..{count - 1}")
    base, extra = divmod(n, count)
    start = index * base + min(index, extra)
    return range(start, start + base + (1 if index < extra else 0))


def worker_share(n: int, rank: int, world: int, worker: int = 0, workers: int = 1) -> range:
    """The indexes of ``n`` objects that DataLoader worker ``worker`` of ``workers`` reads on
    ``rank`` of ``world``: the rank's share, shared again among its workers."""
    ranks = share(n, rank, world)
    inner = share(len(ranks), worker, workers)
    return range(ranks.start + inner.start, ranks.start + inner.stop)


def _int(env: Mapping[str, str], name: str) -> int:
    raw = env[name]
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"${name}={raw!r} is not an integer") from None


def rank_and_world(env: Mapping[str, str], dist: Optional[Any] = None) -> Tuple[int, int]:
    """This process's rank and the number of ranks, from the first that says:

    1. ``torch.distributed`` (``dist``), when initialised;
    2. ``$RANK`` and ``$WORLD_SIZE`` (torchrun, PyTorchJobs);
    3. an MxJob worker's ``$DMLC_WORKER_ID`` and ``$DMLC_NUM_WORKER``, which the MxJob controller
       gives every worker (``DMLC_ROLE=worker``);
    4. else one rank: ``(0, 1)``.
    """
    if dist is not None and dist.is_available() and dist.is_initialized():
        return _checked(dist.get_rank(), dist.get_world_size(), "torch.distributed")
    if "WORLD_SIZE" in env or "RANK" in env:
        if not ("WORLD_SIZE" in env and "RANK" in env):
            raise ValueError("set both $RANK and $WORLD_SIZE, or neither")
        return _checked(_int(env, "RANK"), _int(env, "WORLD_SIZE"), "$RANK/$WORLD_SIZE")
    if env.get("DMLC_ROLE", "worker") == "worker" and "DMLC_NUM_WORKER" in env and "DMLC_WORKER_ID" in env:
        return _checked(_int(env, "DMLC_WORKER_ID"), _int(env, "DMLC_NUM_WORKER"),
                        "$DMLC_WORKER_ID/$DMLC_NUM_WORKER")
    return 0, 1


def _checked(rank: int, world: int, source: str) -> Tuple[int, int]:
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"{source}: rank {rank} of {world} ranks is outside 0..{world - 1}")
    return rank, world


def by_node(nodes: Sequence[str], rank_nodes: Sequence[str]) -> List[List[int]]:
    """The indexes of objects, held on ``nodes[i]``, that each rank reads when rank r runs on
    ``rank_nodes[r]``: a node's objects are shared among the ranks on that node (contiguous runs,
    as :func:`share`), so they are read from local disk; the objects of nodes no rank runs on go,
    one by one in order, to whichever rank has the fewest so far (the lowest rank on a tie).

    Every object goes to exactly one rank. The ranks' shares are as even as the data's spread over
    the nodes allows, no more: a node holding more objects gives its ranks more. Training that
    needs every rank to take the same number of steps (DistributedDataParallel) should cut the
    epoch to the smallest share or not use locality.
    """
    if not rank_nodes:
        raise ValueError("no ranks: rank_nodes names the node of each rank")
    ranks_on: Dict[str, List[int]] = {}
    for r, node in enumerate(rank_nodes):
        ranks_on.setdefault(node, []).append(r)
    held: Dict[str, List[int]] = {}
    orphans: List[int] = []
    for i, node in enumerate(nodes):
        (held.setdefault(node, []) if node in ranks_on else orphans).append(i)
    out: List[List[int]] = [[] for _ in rank_nodes]
    for node, idx in held.items():
        ranks = ranks_on[node]
        for k, r in enumerate(ranks):
            out[r].extend(idx[i] for i in share(len(idx), k, len(ranks)))
    for i in orphans:
        r = min(range(len(out)), key=lambda r: (len(out[r]), r))
        out[r].append(i)
    for share_ in out:
        share_.sort()
    return out
