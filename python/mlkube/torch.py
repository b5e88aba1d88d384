"""PyTorch datasets over a namespace's objects, read through the node agent.

``ObjectDataset`` (map-style) and ``ObjectIterableDataset`` (iterable) take the objects named by a
prefix, a list or a brace template, optionally through a Transform or pipeline, and divide them
among distributed ranks (and, for the iterable one, among DataLoader workers) so that every object
is read exactly once: see :mod:`mlkube.split`. The division needs no PyTorch and is importable
without it (``share``, ``by_node``, ``rank_and_world``); the datasets need PyTorch
(Debian's ``python3-torch``).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from . import _config
from ._paths import PIPELINE_SEPARATOR
from .client import MAX_BATCH, Client
from .split import by_node, rank_and_world, share
from .template import Template

try:
    import torch.distributed as _dist
    import torch.utils.data as _data

    _Dataset: Any = _data.Dataset
    _IterableDataset: Any = _data.IterableDataset
except ImportError:  # the pure parts above still work
    _dist = None  # type: ignore[assignment]
    _data = None  # type: ignore[assignment]

    class _Dataset:  # type: ignore[no-redef]
        """Stands for torch's Dataset when PyTorch is absent; the constructor says so."""

    class _IterableDataset:  # type: ignore[no-redef]
        """Stands for torch's IterableDataset when PyTorch is absent."""

__all__ = ["ObjectDataset", "ObjectIterableDataset", "object_names", "by_node", "rank_and_world",
           "share", "Decode"]

# The most bytes of objects an iterable dataset asks for in one batch read: the answer is held
# whole. A larger object is read alone.
BATCH_BYTES = 16 << 20

# The node a pod runs on, from the downward API (fieldRef spec.nodeName): what a rank tells the
# others with locality=True.
ENV_NODE = "MLKUBE_NODE"

Decode = Callable[[str, bytes], Any]
"""A decode hook: ``decode(name, data)`` makes a sample of an object's name and bytes."""


def _pair(name: str, data: bytes) -> Any:
    return name, data


def object_names(client: Client, prefix: Optional[str] = None, names: Optional[Sequence[str]] = None,
                 template: Optional[str] = None) -> Sequence[str]:
    """The objects of exactly one of: every object under ``prefix`` (listed, sorted by name), the
    list ``names`` as given, or the names of a brace ``template`` (``shard-{0000..0999}.tar``,
    not listed: a template names objects that must exist)."""
    given = [x is not None for x in (prefix, names, template)]
    if sum(given) != 1:
        raise ValueError("name the objects with exactly one of prefix=, names= or template=")
    if prefix is not None:
        return [o.name for o in client.list(prefix)]
    if names is not None:
        if isinstance(names, str):
            raise ValueError("names= is a list of object names; for a prefix use prefix=")
        return list(names)
    return Template(template or "")


class _Objects:
    """What both datasets share: the arguments (documented on :class:`ObjectDataset`), the client,
    this rank's names and how one object becomes a sample."""

    def __init__(self, prefix: Optional[str] = None, *, names: Optional[Sequence[str]] = None,
                 template: Optional[str] = None, client: Optional[Client] = None,
                 transform: Optional[str] = None, args: Optional[str] = None, decode: Optional[Decode] = None,
                 rank: Optional[int] = None, world_size: Optional[int] = None, locality: bool = False,
                 rank_nodes: Optional[Sequence[str]] = None) -> None:
        if _data is None:
            raise ImportError("mlkube.torch's datasets need PyTorch (Debian: apt-get install "
                              "python3-torch); share() and rank_and_world() work without it")
        if prefix is None and names is None and template is None:
            # An MxJob's dataset is one whole: its objects come with its Transform and args, which
            # the caller may still replace (transform="" reads the objects as stored).
            job = _config.job_dataset(os.environ)
            prefix, template = job.prefix, job.template
            if transform is None:
                transform, args = job.transform, (job.args if args is None else args)
        self.client = client or Client()
        self.transform = transform or None
        self.args = args or ""
        self.decode: Decode = decode or _pair
        if (rank is None) != (world_size is None):
            raise ValueError("give both rank= and world_size=, or neither")
        if rank is None or world_size is None:
            rank, world_size = rank_and_world(os.environ, _dist)
        self.rank, self.world_size = rank, world_size
        self.names: List[str] = self._rank_names(prefix, names, template, locality, rank_nodes)

    def _rank_names(self, prefix: Optional[str], names: Optional[Sequence[str]], template: Optional[str],
                    locality: bool, rank_nodes: Optional[Sequence[str]]) -> List[str]:
        """The objects this rank reads, in name order."""
        # The sizes of listed objects, so that reads can be batched without holding too much.
        self.sizes: Dict[str, int] = {}
        if not locality:
            if prefix is not None and names is None and template is None:
                listed = list(self.client.list(prefix))
                self.sizes = {o.name: o.size for o in listed}
                every: Sequence[str] = [o.name for o in listed]
            else:
                every = object_names(self.client, prefix, names, template)
            return [every[i] for i in share(len(every), self.rank, self.world_size)]
        if prefix is None:
            raise ValueError("locality=True needs prefix=: the list of a prefix says which node holds each object")
        listed = list(self.client.list(prefix))
        self.sizes = {o.name: o.size for o in listed}
        nodes = rank_nodes if rank_nodes is not None else _gathered_nodes(self.world_size)
        if len(nodes) != self.world_size:
            raise ValueError(f"rank_nodes names {len(nodes)} nodes for {self.world_size} ranks: name the node of each rank")
        return [listed[i].name for i in by_node([o.node for o in listed], nodes)[self.rank]]

    def read(self, name: str) -> Any:
        """Object name's sample: its bytes (through the Transform, if any) given to decode."""
        if self.transform:
            # From this node's disk when the object is here; else fetched through the agent.
            data = self.client.transform_anywhere(self.transform, name, args=self.args)
        else:
            data = self.client.get(name)
        return self.decode(name, data)


def _gathered_nodes(world_size: int) -> Sequence[str]:
    """The node of every rank, gathered by torch.distributed from each rank's $MLKUBE_NODE."""
    if _dist is None or not _dist.is_available() or not _dist.is_initialized():
        raise ValueError("locality=True needs the node of every rank: pass rank_nodes=, or initialise "
                         "torch.distributed so the ranks can tell each other")
    node = os.environ.get(ENV_NODE, "")
    if not node:
        raise ValueError(f"locality=True needs ${ENV_NODE}, this pod's node: set it from the downward API "
                         "(env valueFrom fieldRef spec.nodeName)")
    nodes: List[Any] = [None] * world_size
    _dist.all_gather_object(nodes, node)
    return [str(n) for n in nodes]


class ObjectDataset(_Objects, _Dataset):  # type: ignore[misc]
    """A map-style dataset of this rank's share of the objects.

    ``dataset[i]`` is ``decode(name, data)`` of the i-th object of the rank's share (by default
    the pair ``(name, data)``). DataLoader workers need no split of their own here: the sampler
    hands each index to one worker.

    Args:
        prefix, names, template: the objects, exactly one (see :func:`object_names`); none reads
            the dataset of the MxJob this process is a worker of (``$MLKUBE_DATASET_PREFIX`` or
            ``$MLKUBE_DATASET_TEMPLATE``).
        client: the agent's client; by default ``Client()``, which finds it in a pod.
        transform: a Transform or pipeline ``"a>>b"`` each object goes through; None (or ``""``)
            reads the objects as stored. With the MxJob's dataset, None takes its Transform
            (``$MLKUBE_DATASET_TRANSFORM``) and ``""`` reads its objects as stored.
        args: the Transform's per-object arguments; with the MxJob's dataset and its Transform,
            by default its ``$MLKUBE_DATASET_ARGS``.
        decode: makes a sample of ``(name, data)``.
        rank, world_size: this process's rank and the number of ranks; by default from
            ``torch.distributed``, ``$RANK``/``$WORLD_SIZE`` or an MxJob worker's DMLC variables.
        locality: each rank reads the objects its own node holds (shared among the ranks on
            that node), and the objects of nodes without a rank are spread over all ranks
            (:func:`mlkube.split.by_node`); needs ``prefix`` and the node of every rank.
        rank_nodes: the node of each rank, for ``locality``; by default gathered through
            ``torch.distributed`` from each rank's ``$MLKUBE_NODE``.
    """

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, index: int) -> Any:
        return self.read(self.names[index])


class ObjectIterableDataset(_Objects, _IterableDataset):  # type: ignore[misc]
    """An iterable dataset: each DataLoader worker of each rank reads its own contiguous run of
    the objects, in name order; together they read every object once.

    Takes the arguments of :class:`ObjectDataset`, and:

    Args:
        stream: send the objects through the Transform over one WebSocket per worker
            (:meth:`mlkube.Client.stream`), ``window`` of them in flight, instead of one transform
            request per object; each object is still fetched with a GET. Needs a ws Transform,
            one and not a pipeline.
        window: the objects a worker's stream keeps in flight.
        batch: without a Transform, the most objects one batch read asks for
            (:meth:`mlkube.Client.get_many`; at most 1,000): the objects are read as stored,
            ``batch`` of them (and at most :data:`BATCH_BYTES`) with one request.
    """

    def __init__(self, *args: Any, stream: bool = False, window: int = 32, batch: int = 128,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if stream and (not self.transform or PIPELINE_SEPARATOR in self.transform):
            raise ValueError(f"stream=True needs one ws Transform to stream the objects through, not "
                             f"{self.transform!r}: pass transform=, or leave stream off")
        if window < 1:
            raise ValueError(f"window {window}: at least 1 object must be in flight")
        if not 1 <= batch <= MAX_BATCH:
            raise ValueError(f"batch {batch}: a batch read asks for 1 to {MAX_BATCH} objects")
        self.stream, self.window, self.batch = stream, window, batch

    def worker_names(self) -> Sequence[str]:
        """The objects the calling DataLoader worker (or the main process) reads."""
        info = _data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        return [self.names[i] for i in share(len(self.names), worker, workers)]

    def batches(self, names: Sequence[str]) -> Iterator[List[str]]:
        """names in runs read with one batch read each: at most ``batch`` objects and
        :data:`BATCH_BYTES` bytes of objects whose size the list gave; any other object alone."""
        run: List[str] = []
        held = 0
        for name in names:
            size = self.sizes.get(name)
            if size is None or size > BATCH_BYTES:
                if run:
                    yield run
                run, held = [], 0
                yield [name]
                continue
            if run and (len(run) >= self.batch or held + size > BATCH_BYTES):
                yield run
                run, held = [], 0
            run.append(name)
            held += size
        if run:
            yield run

    def __iter__(self) -> Iterator[Any]:
        if self.transform and not self.stream:
            for name in self.worker_names():
                yield self.read(name)
            return
        if not self.transform:
            # As stored: the node's objects a batch at a time, one round trip for many.
            for run in self.batches(self.worker_names()):
                if len(run) == 1 and run[0] not in self.sizes:
                    yield self.read(run[0])
                    continue
                for name, data in zip(run, self.client.get_many(run)):
                    yield self.decode(name, data)
            return
        # Drawn one at a time as the stream's window frees: at most window objects are held.
        objects = ((name, self.client.get(name)) for name in self.worker_names())
        assert self.transform is not None
        for name, data in self.client.stream(self.transform, objects, args=self.args, window=self.window):
            yield self.decode(name, data)

    def __len__(self) -> int:
        """The objects of this rank (all its workers together)."""
        return len(self.names)
