"""Request paths of the agent's API, escaped as api/wire.ObjectPath escapes them."""

from __future__ import annotations

from typing import Sequence, Union
from urllib.parse import quote

PIPELINE_SEPARATOR = ">>"
MAX_PIPELINE_STAGES = 8

Pipeline = Union[str, Sequence[str]]


def object_path(name: str) -> str:
    """The object's name with each segment escaped; "." and ".." segments too, so that no proxy
    or library cleans them away and the name arrives as sent (the agent refuses "..")."""
    if not name:
        raise ValueError("object name is empty: name an object")
    segs = []
    for seg in name.split("/"):
        segs.append({".": "%2E", "..": "%2E%2E"}.get(seg) or quote(seg, safe=""))
    return "/".join(segs)


def segment(value: str, what: str) -> str:
    """One path segment (a namespace, a Transform or pipeline), escaped whole."""
    if not value:
        raise ValueError(f"{what} is empty")
    return quote(value, safe="")


def pipeline(transform: Pipeline) -> str:
    """A Transform name, a pipeline "a>>b", or a list of stages, as the agent's {name} segment."""
    stages = transform.split(PIPELINE_SEPARATOR) if isinstance(transform, str) else list(transform)
    if not stages or any(not s for s in stages):
        raise ValueError(f"transform {transform!r}: name a Transform, or a pipeline of them joined by "
                         f"{PIPELINE_SEPARATOR!r}, with no empty stage")
    if len(stages) > MAX_PIPELINE_STAGES:
        raise ValueError(f"pipeline of {len(stages)} stages: at most {MAX_PIPELINE_STAGES} are allowed; "
                         "split it into several requests")
    return PIPELINE_SEPARATOR.join(stages)
