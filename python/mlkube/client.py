"""The client of a node agent's data path API: objects, Transforms and streams."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import time
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import IO, Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union
from urllib.parse import urlencode

import urllib3

from . import _config, _paths
from .errors import ConnectionFailed, MlkubeError, NotFound, TooManyRequests, error_for

Body = Union[bytes, bytearray, memoryview, IO[bytes]]

HEADER_NODE = "X-Mlkube-Node"
HEADER_CHECKSUM = "X-Mlkube-Checksum-Sha256"

# A batch read (POST /v1/objects/{namespace}/?batch=true, api/wire/objects.go): at most
# MAX_BATCH names; each object of the answer is a header (status, name length, data length;
# big-endian), the name, then the bytes or the agent's error message.
MAX_BATCH = 1000
_BATCH_HEADER = struct.Struct(">HHQ")


@dataclass(frozen=True)
class ObjectInfo:
    """One stored object, as a list, a HEAD and a PUT answer it."""

    name: str
    size: int
    node: str
    modified: Optional[datetime] = None
    checksum: str = ""  # SHA-256, lower-case hex, when the agent knows it

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "ObjectInfo":
        modified = d.get("modified")
        return cls(name=d["name"], size=int(d["size"]), node=d.get("node", ""),
                   modified=datetime.fromisoformat(_rfc3339(modified)) if modified else None,
                   checksum=d.get("checksum", ""))


@dataclass(frozen=True)
class ObjectPage:
    """One page of a list: objects sorted by name, the grouped prefixes, and the next page's
    ``after`` (empty on the last page)."""

    items: List[ObjectInfo]
    prefixes: List[str]
    next: str


def _rfc3339(s: str) -> str:
    # Go writes "Z" and up to nine fractional digits; fromisoformat of 3.11 takes at most six.
    s = s.replace("Z", "+00:00")
    head, dot, rest = s.partition(".")
    if not dot:
        return s
    digits = len(rest) - len(rest.lstrip("0123456789"))
    return head + "." + rest[:min(digits, 6)] + rest[digits:]


class Client:
    """A client of the node agent's data path API.

    In a pod, ``Client()`` finds everything itself: the agent at ``$MLKUBE_DATAPATH_URL``, else
    the node-local Service ``node-agent.mlkube-datapath.svc``; the token in
    ``$MLKUBE_DATAPATH_TOKEN_FILE``, else ``/var/run/secrets/mlkube.io/datapath/token`` (a
    projected token of audience ``mlkube-datapath``, read again whenever the kubelet rotates it);
    the namespace in ``$MLKUBE_NAMESPACE``, else the pod's own. Outside a pod pass ``url`` and
    ``token`` (or ``token_file``), and ``namespace``.

    Connections are pooled and reused (one urllib3 PoolManager per client); every request is
    bounded by ``connect_timeout`` and ``read_timeout`` (between bytes, not for the whole body).
    A client may be shared by threads. DataLoader workers are processes: each one that is forked
    with a client makes its own connections on first use.

    A request the agent refuses with 429 (a limit of its own, or its reviews' rate) is sent again
    after the ``Retry-After`` the agent asked for (else 1, 2, 4... seconds), at most
    ``retries_429`` times and waiting at most ``max_retry_wait`` seconds each time, then raises
    :class:`~mlkube.errors.TooManyRequests`. A 429 means the agent did nothing, so repeating is
    safe; only a request whose body is a file is not repeated, as its bytes were read.
    """

    def __init__(self, url: Optional[str] = None, *, token: Optional[str] = None,
                 token_file: Optional[str] = None, namespace: Optional[str] = None,
                 connect_timeout: float = 5.0, read_timeout: float = 120.0, pool_size: int = 16,
                 retries_429: int = 3, max_retry_wait: float = 30.0,
                 env: Optional[Mapping[str, str]] = None) -> None:
        if retries_429 < 0 or max_retry_wait < 0:
            raise ValueError(f"retries_429={retries_429}, max_retry_wait={max_retry_wait}: neither may be "
                             "negative (0 turns the retries off)")
        env = os.environ if env is None else env
        self.url = _config.agent_url(url, env)
        self.namespace = _config.namespace(namespace, env)
        self._token = token
        path = None if token else _config.token_file(token_file, env)
        self._token_file = _config.TokenFile(path) if path else None
        if not token and not self._token_file:
            raise _config.ConfigError("no token: outside a pod, pass Client(token=...) with a token of "
                                      f"audience {_config.AUDIENCE} (`kubectl create token SA "
                                      f"--audience {_config.AUDIENCE}`), or token_file=...")
        self.timeout = urllib3.Timeout(connect=connect_timeout, read=read_timeout)
        self.retries_429 = retries_429
        self.max_retry_wait = max_retry_wait
        self._pool_size = pool_size
        self._pid = os.getpid()
        self._http = self._new_pool()

    def _new_pool(self) -> urllib3.PoolManager:
        # Connecting is retried, and a GET or HEAD once more when its connection broke (a pooled
        # connection the agent closed while idle); a PUT or DELETE that was sent is the caller's
        # to repeat, and statuses are answers, not failures to retry.
        return urllib3.PoolManager(
            num_pools=4, maxsize=self._pool_size, block=False, timeout=self.timeout,
            retries=urllib3.Retry(total=2, connect=2, read=1, redirect=0, status=0, other=0,
                                  allowed_methods=frozenset({"GET", "HEAD"}), raise_on_status=False))

    def _pool(self) -> urllib3.PoolManager:
        # A forked DataLoader worker must not share its parent's pooled sockets: two processes
        # writing requests on one connection would interleave them.
        if os.getpid() != self._pid:
            self._pid, self._http = os.getpid(), self._new_pool()
        return self._http

    def __getstate__(self) -> Dict[str, Any]:
        # Pickled into spawned DataLoader workers: the pool and the token file's lock are made
        # anew there.
        state = dict(self.__dict__)
        del state["_http"]
        state["_token_file"] = self._token_file.path if self._token_file else None
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        path = state.pop("_token_file")
        self.__dict__.update(state)
        self._token_file = _config.TokenFile(path) if path else None
        self._pid = os.getpid()
        self._http = self._new_pool()

    def __repr__(self) -> str:
        return f"Client(url={self.url!r}, namespace={self.namespace!r})"

    def token(self) -> str:
        """The token sent with the next request: the token given, or the token file's, read again
        when the file changed."""
        if self._token:
            return self._token
        assert self._token_file is not None
        return self._token_file.read()

    def headers(self) -> Dict[str, str]:
        """The headers every request carries: the token."""
        return {"Authorization": "Bearer " + self.token()}

    def _request(self, method: str, path: str, query: Optional[Mapping[str, str]] = None,
                 body: Optional[Body] = None, headers: Optional[Mapping[str, str]] = None,
                 stream: bool = False, retry: bool = True) -> urllib3.HTTPResponse:
        url = self.url + path
        q = {k: v for k, v in (query or {}).items() if v not in (None, "")}
        if q:
            url += "?" + urlencode(q)
        attempt = 0
        while True:
            try:
                return self._send(method, url, body, headers, stream)
            except TooManyRequests as e:
                if not (retry and _resendable(body) and self._wait_to_retry(attempt, e)):
                    raise
            attempt += 1

    def _wait_to_retry(self, attempt: int, refusal: TooManyRequests) -> bool:
        """Waits before retry number ``attempt + 1`` of a request the agent refused with 429, and
        says whether to retry: False once ``retries_429`` retries were made."""
        if attempt >= self.retries_429:
            return False
        asked = refusal.retry_after if refusal.retry_after is not None else 2.0 ** attempt
        _sleep(min(max(asked, 0.0), self.max_retry_wait))
        return True

    def _send(self, method: str, url: str, body: Optional[Body], headers: Optional[Mapping[str, str]],
              stream: bool) -> urllib3.HTTPResponse:
        h = self.headers()
        h.update(headers or {})
        if not _resendable(body):  # a file
            size = _length(body)
            if size is not None:
                h.setdefault("Content-Length", str(size))
        try:
            resp = self._pool().request(method, url, body=body, headers=h, preload_content=not stream,
                                      redirect=False, chunked=False)
        except urllib3.exceptions.HTTPError as e:
            raise ConnectionFailed(f"{method} {url}: {e}") from e
        if resp.status >= 400:
            data = resp.data  # the agent's JSON error: small, read whole
            resp.release_conn()
            raise error_for(resp.status, data or b"", resp.headers.get("Retry-After"))
        return resp

    def _object(self, name: str) -> str:
        return "/v1/objects/" + _paths.segment(self.namespace, "namespace") + "/" + _paths.object_path(name)

    # The object API.

    def get(self, name: str, *, node: Optional[str] = None,
            byte_range: Optional[Tuple[int, int]] = None) -> bytes:
        """The bytes of object name (or of ``byte_range``, first and last byte inclusive), from
        whichever node holds it; ``node`` reads from that node only."""
        headers = {"Range": f"bytes={byte_range[0]}-{byte_range[1]}"} if byte_range else None
        return self._request("GET", self._object(name), {"node": node or ""}, headers=headers).data

    def get_many(self, names: List[str]) -> List[bytes]:
        """The bytes of each object of ``names``, in order: the objects this node holds in one
        request (a batch read of at most :data:`MAX_BATCH` names, answered from the node's disk),
        any other with a GET of its own. Many small objects cost one round trip, not one each;
        the answer is held whole, so ask for what fits in memory."""
        if not names:
            return []
        if len(names) > MAX_BATCH:
            raise ValueError(f"{len(names)} names: a batch read takes at most {MAX_BATCH}; ask for fewer at a time")
        body = json.dumps({"objects": names}).encode()
        resp = self._request("POST", "/v1/objects/" + _paths.segment(self.namespace, "namespace") + "/",
                             {"batch": "true"}, body=body, headers={"Content-Type": "application/json"})
        return [data if data is not None else self.get(name)
                for name, data in zip(names, _parse_batch(resp.data, names))]

    def open(self, name: str, *, node: Optional[str] = None) -> urllib3.HTTPResponse:
        """Object name as a file-like stream, for objects too large to hold; close it (or use it in a
        ``with``) to give its connection back."""
        return self._request("GET", self._object(name), {"node": node or ""}, stream=True)

    def head(self, name: str, *, node: Optional[str] = None) -> ObjectInfo:
        """Size, checksum, node and modification time of object name."""
        resp = self._request("HEAD", self._object(name), {"node": node or ""})
        h = resp.headers
        modified = parsedate_to_datetime(h["Last-Modified"]) if h.get("Last-Modified") else None
        return ObjectInfo(name=name, size=int(h.get("Content-Length", "0")), node=h.get(HEADER_NODE, ""),
                          modified=modified, checksum=h.get(HEADER_CHECKSUM, ""))

    def exists(self, name: str) -> bool:
        """Says whether object name exists on some node."""
        try:
            self.head(name)
        except NotFound:
            return False
        return True

    def put(self, name: str, data: Body, *, node: Optional[str] = None,
            checksum: Union[bool, str] = False) -> ObjectInfo:
        """Stores data (bytes or a binary file) as object name, on the node placement picks or on
        ``node``. ``checksum=True`` sends the SHA-256 of bytes (or a given hex digest), which the
        agent checks before the object becomes visible."""
        headers = {"Content-Type": "application/octet-stream"}
        if checksum is True:
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise ValueError("checksum=True needs data as bytes; pass the hex digest of a file")
            headers[HEADER_CHECKSUM] = hashlib.sha256(data).hexdigest()
        elif checksum:
            headers[HEADER_CHECKSUM] = str(checksum)
        resp = self._request("PUT", self._object(name), {"node": node or ""}, body=data, headers=headers)
        return ObjectInfo.from_json(_json(resp))

    def delete(self, name: str, *, recursive: bool = False) -> int:
        """Removes object name (``recursive``: every object whose name starts with it, on every
        node) and returns how many went; :class:`NotFound` when none did."""
        resp = self._request("DELETE", self._object(name), {"recursive": "true" if recursive else ""})
        return int(_json(resp)["deleted"])

    def list_page(self, prefix: str = "", *, after: str = "", limit: Optional[int] = None,
                  delimiter: str = "") -> ObjectPage:
        """One page of the namespace's objects whose names start with prefix, sorted by name."""
        if limit is not None and not 1 <= limit <= 1000:
            raise ValueError(f"limit {limit}: a page holds 1 to 1000 objects")
        query = {"prefix": prefix, "after": after, "limit": str(limit) if limit else "",
                 "delimiter": delimiter}
        resp = self._request("GET", "/v1/objects/" + _paths.segment(self.namespace, "namespace") + "/",
                             query)
        d = _json(resp)
        return ObjectPage(items=[ObjectInfo.from_json(i) for i in d.get("items") or []],
                          prefixes=list(d.get("prefixes") or []), next=d.get("next", ""))

    def list(self, prefix: str = "", *, delimiter: str = "") -> Iterator[ObjectInfo]:
        """Every object whose name starts with prefix, sorted by name, a page at a time."""
        after = ""
        while True:
            page = self.list_page(prefix, after=after, delimiter=delimiter)
            yield from page.items
            if not page.next:
                return
            after = page.next

    # The transform API.

    def transform(self, transform: _paths.Pipeline, name: Optional[str] = None, *,
                  data: Optional[Body] = None, args: str = "", src: str = "") -> bytes:
        """The result of a Transform, or a pipeline ``"a>>b"`` (or ``["a", "b"]``), applied to:

        - object name of this node's data (``data`` and ``src`` unset): GET, the agent reads the
          object from its own node's disk;
        - ``data``, a body sent to the agent (PUT; name, by default ``"body"``, only labels it);
        - ``src``, a URL the agent fetches, when its ``--src-allowed-hosts`` allows it.

        ``args`` are the Transform's per-object arguments.
        """
        if data is not None and src:
            raise ValueError("give data or src, not both")
        path = ("/v1/transform/" + _paths.segment(self.namespace, "namespace") + "/"
                + _paths.segment(_paths.pipeline(transform), "transform") + "/"
                + _paths.object_path(name or "body"))
        if data is None and not src and not name:
            raise ValueError("name an object of the node's data, or give data or src")
        query = {"args": args, "src": src}
        if data is not None:
            return self._request("PUT", path, query, body=data,
                                 headers={"Content-Type": "application/octet-stream"}).data
        return self._request("GET", path, query).data

    def transform_anywhere(self, transform: _paths.Pipeline, name: str, *, args: str = "") -> bytes:
        """Like :meth:`transform` of object name, from whichever node holds it: on this node the
        agent reads it from disk; else the client gets it (the agent forwards from its node) and
        sends it back as a body."""
        try:
            return self.transform(transform, name, args=args)
        except NotFound:
            # Either the object is on another node or does not exist, or the Transform does not:
            # get raises NotFound for a missing object, the PUT for a missing Transform.
            return self.transform(transform, name, data=self.get(name), args=args)

    def stream(self, transform: str, objects: Iterable[Tuple[str, bytes]], *, args: str = "",
               window: int = 32, errors: str = "raise") -> Iterator[Tuple[str, Union[bytes, MlkubeError]]]:
        """Transforms many objects over one WebSocket (``/v1/stream``, ws Transforms only), keeping
        at most ``window`` objects in flight, and yields ``(name, result)`` in the order given.

        A failed object raises :class:`~mlkube.errors.TransformFailed` (``errors="raise"``), or is
        yielded as that exception in place of its bytes (``errors="yield"``) and the stream goes on.
        """
        from ._stream import stream  # websockets is needed only here
        return stream(self, transform, objects, args=args, window=window, errors=errors)

    def close(self) -> None:
        """Closes the pooled connections."""
        self._http.clear()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# What waits between retries: a name of this module, so the tests can count the waits.
_sleep = time.sleep


def _parse_batch(answer: bytes, names: List[str]) -> List[Optional[bytes]]:
    """The objects of a batch answer to ``names``, in order; None for one this node does not
    hold (404). Any other failure of an object raises its error; an answer cut short or out of
    order raises :class:`MlkubeError`."""
    out: List[Optional[bytes]] = []
    view, off = memoryview(answer), 0
    for name in names:
        if len(answer) - off < _BATCH_HEADER.size:
            raise MlkubeError(f"batch answer cut short after {len(out)} of {len(names)} objects")
        status, name_len, size = _BATCH_HEADER.unpack_from(answer, off)
        off += _BATCH_HEADER.size
        end = off + name_len + size
        if end > len(answer) or bytes(view[off:off + name_len]) != name.encode():
            raise MlkubeError(f"batch answer: object {len(out)} is not {name!r} or is cut short")
        data = answer[off + name_len:end]
        off = end
        if status == 200:
            out.append(data)
        elif status == 404:
            out.append(None)
        else:
            raise error_for(status, data)  # the agent's message, which names the object
    if off != len(answer):
        raise MlkubeError(f"batch answer: {len(answer) - off} bytes past the {len(names)} objects asked for")
    return out


def _resendable(body: Optional[Body]) -> bool:
    """Says whether a request's body can be sent again: bytes can, a file was read."""
    return body is None or isinstance(body, (bytes, bytearray, memoryview))


def _length(body: Any) -> Optional[int]:
    """The bytes left in a file body, so the PUT carries a Content-Length: the agent refuses an
    object over its limit before reading it, and checks the quota once."""
    try:
        return os.fstat(body.fileno()).st_size - body.tell()
    except (AttributeError, OSError, ValueError):
        return None


def _json(resp: urllib3.HTTPResponse) -> Any:
    try:
        return json.loads(resp.data)
    except ValueError as e:
        raise MlkubeError(f"the agent answered {resp.status} with a body that is not JSON: {e}", resp.status) from e
