"""Exceptions of the mlkube client: one hierarchy under :class:`MlkubeError`.

The node agent answers every failed request with a JSON body
``{"error": ..., "transform": ..., "object": ..., "node": ...}`` whose ``error`` text names what
went wrong and, where the agent knows it, what to do (the flag of a limit, the ready nodes, the
audience a token needs). Each exception keeps that text verbatim in :attr:`MlkubeError.message`,
beside the HTTP status, so a caller can both branch on the class and show the agent's advice.
"""

from __future__ import annotations

import json
from typing import Dict, Optional, Type


class MlkubeError(Exception):
    """A request to the node agent failed.

    Attributes:
        status: the HTTP status the agent answered, or ``None`` when no answer came (the agent
            could not be reached, the connection broke, a timeout passed).
        message: the agent's error text verbatim; or what the client saw.
        node: the node whose agent answered, when it said.
        object: the object the request named, when the agent said.
        transform: the Transform or pipeline (``namespace/a>>b``), when the agent said.
        retry_after: seconds the agent asked to wait before retrying (429), else ``None``.
    """

    def __init__(self, message: str, status: Optional[int] = None, *, node: str = "",
                 object: str = "", transform: str = "",
                 retry_after: Optional[float] = None) -> None:
        self.status = status
        self.message = message
        self.node = node
        self.object = object
        self.transform = transform
        self.retry_after = retry_after
        super().__init__(self._describe())

    def _describe(self) -> str:
        where = f" (node {self.node})" if self.node else ""
        if self.status is None:
            return f"mlkube: {self.message}"
        return f"mlkube: HTTP {self.status}{where}: {self.message}"


class ConnectionFailed(MlkubeError):
    """No answer: the agent could not be reached, the connection broke or a timeout passed."""


class BadRequest(MlkubeError):
    """400: the request was malformed (a name, an argument, a checksum); the message says which."""


class Unauthorized(MlkubeError):
    """401: no token, or one not issued for the audience ``mlkube-datapath``, or expired."""


class Forbidden(MlkubeError):
    """403: RBAC does not allow the caller; the message names the ClusterRole to bind."""


class NotFound(MlkubeError):
    """404: no such object, Transform or node."""


class PreconditionFailed(MlkubeError):
    """412: a conditional request's condition did not hold."""


class TooLarge(MlkubeError):
    """413: the object is over the agent's ``--max-object-size``."""


class TooManyRequests(MlkubeError):
    """429: a limit of the agent (reviews, streams, inline requests); see ``retry_after``."""


class TransformFailed(MlkubeError):
    """502: the transformer failed the object or could not be reached; its message is kept."""


class Unavailable(MlkubeError):
    """503: the Transform has no running transformer on the node yet."""


class InsufficientStorage(MlkubeError):
    """507: the namespace's quota on the node, or the node's free space, ran out."""


_BY_STATUS: Dict[int, Type[MlkubeError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 412: PreconditionFailed,
    413: TooLarge, 429: TooManyRequests, 502: TransformFailed, 503: Unavailable,
    507: InsufficientStorage,
}


def error_for(status: int, body: bytes, retry_after: Optional[str] = None) -> MlkubeError:
    """Returns the exception for a failed answer of status with body.

    A body that is not the agent's JSON error (a proxy's page, an empty body) is kept as text,
    cut to 1 KiB, so the exception stays readable.
    """
    cls = _BY_STATUS.get(status, MlkubeError)
    fields: Dict[str, str] = {}
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
            fields = {k: v for k, v in parsed.items() if isinstance(v, str)}
    except ValueError:
        pass
    message = fields.get("error") or body[:1024].decode("utf-8", "replace").strip() or f"HTTP {status}"
    wait: Optional[float] = None
    if retry_after:
        try:
            wait = float(retry_after)
        except ValueError:
            wait = None
    return cls(message, status, node=fields.get("node", ""), object=fields.get("object", ""),
               transform=fields.get("transform", ""), retry_after=wait)
