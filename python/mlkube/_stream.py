"""The stream API (``GET /v1/stream/{namespace}/{name}``) over a WebSocket.

Per object the client sends a text control message ``{"object": ..., "args": ...}`` and one
binary message with its bytes; the agent answers in the same order, a binary result or a text
``{"error": ...}`` (api/wire/message.go). Debian 12's websockets (10.4) has only an asyncio API:
its event loop runs in a thread of its own, so that the agent's pings are answered while the
caller works on a result, and the caller's generator waits on it.
"""

from __future__ import annotations

import asyncio
import collections
import json
import threading
from typing import TYPE_CHECKING, Any, Coroutine, Deque, Iterable, Iterator, Tuple, TypeVar, Union

import websockets
import websockets.exceptions

from . import _paths
from .errors import ConnectionFailed, Forbidden, MlkubeError, TooManyRequests, TransformFailed, error_for

if TYPE_CHECKING:
    from .client import Client

T = TypeVar("T")

# The agent closes a stream with 1008 once RBAC no longer lets the caller use the Transform.
_POLICY_VIOLATION = 1008


class _Loop:
    """An asyncio event loop in a daemon thread, and a way to wait on it with a bound."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="mlkube-stream", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


def stream(client: "Client", transform: str, objects: Iterable[Tuple[str, bytes]], *, args: str,
           window: int, errors: str) -> Iterator[Tuple[str, Union[bytes, MlkubeError]]]:
    if window < 1:
        raise ValueError(f"window {window}: at least 1 object must be in flight")
    if errors not in ("raise", "yield"):
        raise ValueError(f'errors={errors!r}: "raise" or "yield"')
    path = ("/v1/stream/" + _paths.segment(client.namespace, "namespace") + "/"
            + _paths.segment(transform, "transform"))
    return _run(client, path, objects, args, window, errors)


def _run(client: "Client", path: str, objects: Iterable[Tuple[str, bytes]], args: str, window: int,
         errors: str) -> Iterator[Tuple[str, Union[bytes, MlkubeError]]]:
    loop = _Loop()
    timeout = client.timeout.read_timeout or 120.0
    try:
        ws = _open(client, loop, path, window)
        try:
            yield from _exchange(loop, ws, objects, args, window, errors, timeout)
        finally:
            try:
                loop.run(ws.close(), timeout)
            except Exception:  # closing is best effort: the answers are all in or abandoned
                pass
    finally:
        loop.stop()


def _open(client: "Client", loop: _Loop, path: str, window: int) -> Any:
    """The stream's WebSocket, opened again after the wait the agent asks for while it refuses
    with 429 (the streams a namespace may hold), as the client retries its requests."""
    attempt = 0
    while True:
        try:
            return _connect(client, loop, path, window)
        except TooManyRequests as e:
            if not client._wait_to_retry(attempt, e):
                raise
        attempt += 1


def _connect(client: "Client", loop: _Loop, path: str, window: int) -> Any:
    url = "ws" + client.url[len("http"):] + path
    headers = client.headers()

    async def connect() -> Any:
        # The agent pings; results may be as large as objects; every answer of the window must
        # fit the queue, or the reader would stop while the caller is still sending.
        return await websockets.connect(url, extra_headers=headers, compression=None,
                                        open_timeout=client.timeout.connect_timeout,
                                        ping_interval=None, max_size=None, max_queue=window + 1)
    try:
        return loop.run(connect(), (client.timeout.connect_timeout or 10.0) + 5)
    except websockets.exceptions.InvalidStatusCode as e:
        # websockets drops the refusal's body, which carries the agent's remedy: the same request
        # as a plain GET is refused the same way (the agent reviews before it upgrades).
        try:
            client._request("GET", path, retry=False)
        except MlkubeError as refusal:
            if refusal.status == e.status_code:
                raise refusal from None
        raise error_for(e.status_code, f"the agent refused the stream {path}".encode(),
                        e.headers.get("Retry-After")) from None
    except (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException) as e:
        raise ConnectionFailed(f"stream {url}: {e}") from e


def _exchange(loop: _Loop, ws: Any, objects: Iterable[Tuple[str, bytes]], args: str, window: int,
              errors: str, timeout: float) -> Iterator[Tuple[str, Union[bytes, MlkubeError]]]:
    pending: Deque[str] = collections.deque()
    source = iter(objects)
    exhausted = False
    while True:
        while not exhausted and len(pending) < window:
            item = next(source, None)
            if item is None:
                exhausted = True
                break
            name, data = item
            control = json.dumps({"object": name, "args": args} if args else {"object": name})
            _call(loop, _send(ws, control, data), timeout)
            pending.append(name)
        if not pending:
            return
        answer = _call(loop, ws.recv(), timeout)
        name = pending.popleft()
        if isinstance(answer, bytes):
            yield name, answer
            continue
        failure = TransformFailed(_error_text(answer), None, object=name)
        if errors == "raise":
            raise failure
        yield name, failure


async def _send(ws: Any, control: str, data: bytes) -> None:
    await ws.send(control)
    await ws.send(data)


def _call(loop: _Loop, coro: Coroutine[Any, Any, T], timeout: float) -> T:
    try:
        return loop.run(coro, timeout)
    except websockets.exceptions.ConnectionClosed as e:
        code, reason = (e.rcvd.code, e.rcvd.reason) if e.rcvd else (1006, "no close frame")
        if code == _POLICY_VIOLATION and reason.startswith("forbidden"):
            raise Forbidden(reason) from None
        raise ConnectionFailed(f"the agent closed the stream ({code}): {reason}") from None
    except TimeoutError:  # concurrent.futures.TimeoutError is TimeoutError from 3.11 on
        raise ConnectionFailed(f"no answer on the stream within {timeout}s") from None


def _error_text(answer: str) -> str:
    try:
        msg = json.loads(answer)
        if isinstance(msg, dict) and isinstance(msg.get("error"), str):
            return msg["error"]
    except ValueError:
        pass
    return answer
