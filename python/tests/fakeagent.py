"""An in-process agent that answers the data path API as datapath/agent does, for the tests.

It holds objects in memory, each on a node; it is the agent of node ``self.node``. The object API
answers for every node (as the real agent does by forwarding); the transform API's GET reads only
this node's objects, as the real one reads its own disk. Errors are the agent's JSON bodies.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
import threading
from datetime import datetime, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, List, Optional, Tuple
from urllib.parse import parse_qs, unquote, urlsplit

Transform = Callable[[bytes, str], bytes]


class TransformError(Exception):
    """A transformer's failure of one object: the agent answers 502 with its message."""


class FakeAgent:
    def __init__(self, node: str = "node-a", namespace: str = "team-a") -> None:
        self.node = node
        self.namespace = namespace
        self.tokens = {"token-1"}
        self.objects: Dict[str, Tuple[bytes, str, datetime]] = {}
        self.transforms: Dict[str, Transform] = {}
        self.ws_transforms: set = set()
        self.forbidden: set = set()  # Transforms the caller may not use
        self.requests: List[Tuple[str, str]] = []  # (method, raw path with query)
        self.tokens_seen: List[str] = []
        self.throttle = False  # answer 429 to everything
        self.throttle_next = 0  # requests answered 429 before the agent answers again
        self.retry_after: Optional[str] = "3"  # the 429's Retry-After; None sends none
        self.revoke_stream_after: Optional[int] = None
        self.drop_next = 0  # requests whose connection is closed without an answer
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "FakeAgent":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def store(self, name: str, data: bytes, node: Optional[str] = None) -> None:
        self.objects[name] = (data, node or self.node, datetime(2026, 1, 2, 3, 4, 5, 123456789 // 1000, tzinfo=timezone.utc))


def _err(msg: str, node: str, obj: str = "", transform: str = "") -> bytes:
    body = {"error": msg, "node": node}
    if obj:
        body["object"] = obj
    if transform:
        body["transform"] = transform
    return json.dumps(body).encode()


def _handler(agent: FakeAgent):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def _answer(self, code: int, body: bytes = b"", headers: Optional[Dict[str, str]] = None,
                    content_type: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _fail(self, code: int, msg: str, obj: str = "", transform: str = "",
                  headers: Optional[Dict[str, str]] = None) -> None:
            self._answer(code, _err(msg, agent.node, obj, transform), headers)

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding") == "chunked":
                out = b""
                while True:
                    size = int(self.rfile.readline().strip(), 16)
                    chunk = self.rfile.read(size + 2)[:size]
                    if size == 0:
                        return out
                    out += chunk
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))

        def _authorized(self) -> bool:
            auth = self.headers.get("Authorization", "")
            token = auth[len("Bearer "):] if auth.startswith("Bearer ") else ""
            agent.tokens_seen.append(token)
            if agent.throttle or agent.throttle_next:
                agent.throttle_next = max(0, agent.throttle_next - 1)
                self._fail(429, "namespace team-a holds 4 of its share of 4 streams; raise --max-streams",
                           headers={"Retry-After": agent.retry_after} if agent.retry_after else None)
                return False
            if token not in agent.tokens:
                self._fail(401, 'unauthenticated: the token is not valid (it must be a live ServiceAccount '
                                'token for audience "mlkube-datapath")',
                           headers={"WWW-Authenticate": 'Bearer realm="mlkube-datapath"'})
                return False
            return True

        def do_GET(self) -> None:
            self._serve()

        def do_HEAD(self) -> None:
            self._serve()

        def do_PUT(self) -> None:
            self._serve()

        def do_DELETE(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            agent.requests.append((self.command, self.path))
            if agent.drop_next:
                agent.drop_next -= 1
                self._body()
                self.close_connection = True
                return
            u = urlsplit(self.path)
            q = {k: v[0] for k, v in parse_qs(u.query).items()}
            if not self._authorized():
                self._body()
                return
            if u.path.startswith("/v1/objects/"):
                self._objects(u.path[len("/v1/objects/"):], q)
            elif u.path.startswith("/v1/transform/"):
                self._transform(u.path[len("/v1/transform/"):], q)
            elif u.path.startswith("/v1/stream/"):
                self._stream(u.path[len("/v1/stream/"):])
            else:
                self._fail(404, f"no such path {u.path}")

        def _objects(self, rest: str, q: Dict[str, str]) -> None:
            ns, _, esc = rest.partition("/")
            name = unquote(esc)
            if unquote(ns) != agent.namespace:
                self._fail(403, f"forbidden: system:serviceaccount:{agent.namespace}:loader may not get "
                                f"objects.etl.mlkube.io in namespace {unquote(ns)}", obj=name)
                return
            if not name and self.command == "POST" and q.get("batch") == "true":
                return self._batch()
            if not name:
                return self._list(q)
            if ".." in name.split("/"):
                self._fail(400, f"object {name!r} contains .. as a path element", obj=name)
                return
            if self.command == "PUT":
                data = self._body()
                want = self.headers.get("X-Mlkube-Checksum-Sha256")
                got = hashlib.sha256(data).hexdigest()
                if want and want != got:
                    self._fail(400, f"checksum mismatch: the body's SHA-256 is {got}, the header says {want}", obj=name)
                    return
                agent.store(name, data, q.get("node"))
                data, node, modified = agent.objects[name]
                info = {"name": name, "size": len(data), "modified": "2026-01-02T03:04:05.123456789Z",
                        "checksum": got, "node": node}
                self._answer(201, json.dumps(info).encode(), {"X-Mlkube-Node": node})
                return
            if self.command == "DELETE":
                if q.get("recursive") == "true":
                    gone = [n for n in agent.objects if n.startswith(name)]
                else:
                    gone = [name] if name in agent.objects else []
                if not gone:
                    self._fail(404, f"object {name} not found on any ready node", obj=name)
                    return
                for n in gone:
                    del agent.objects[n]
                self._answer(200, json.dumps({"deleted": len(gone)}).encode())
                return
            if name not in agent.objects:
                self._fail(404, f"object {name} not found on any ready node", obj=name)
                return
            data, node, modified = agent.objects[name]
            headers = {"X-Mlkube-Node": node, "X-Mlkube-Checksum-Sha256": hashlib.sha256(data).hexdigest(),
                       "Last-Modified": format_datetime(modified.replace(microsecond=0), usegmt=True)}
            rng = self.headers.get("Range")
            if rng:
                first, last = (int(x) for x in rng[len("bytes="):].split("-"))
                self._answer(206, data[first:last + 1], headers, "application/octet-stream")
                return
            self._answer(200, data, headers, "application/octet-stream")

        def _batch(self) -> None:
            """A batch read, as the real agent answers it: this node's objects, 404 for others."""
            body = b""
            for name in json.loads(self._body())["objects"]:
                data, node, _ = agent.objects.get(name, (b"", "", None))
                status = 200
                if node != agent.node:
                    status, data = 404, f"object {name} not found".encode()
                body += struct.pack(">HHQ", status, len(name.encode()), len(data)) + name.encode() + data
            self._answer(200, body, {"X-Mlkube-Node": agent.node}, "application/x-mlkube-batch")

        def _list(self, q: Dict[str, str]) -> None:
            limit = int(q.get("limit", "1000"))
            prefix, after = q.get("prefix", ""), q.get("after", "")
            names = sorted(n for n in agent.objects if n.startswith(prefix) and n > after)
            page, rest = names[:limit], names[limit:]
            items = [{"name": n, "size": len(agent.objects[n][0]), "node": agent.objects[n][1],
                      "modified": "2026-01-02T03:04:05Z"} for n in page]
            body: Dict[str, object] = {"items": items}
            if rest:
                body["next"] = page[-1]
            self._answer(200, json.dumps(body).encode())

        def _pipeline(self, ns: str, esc: str) -> Optional[List[str]]:
            stages = unquote(esc).split(">>")
            for t in stages:
                if t in agent.forbidden:
                    self._fail(403, f"forbidden: system:serviceaccount:{ns}:loader may not use "
                                    f"transforms.etl.mlkube.io {t} in namespace {ns}",
                               transform=f"{ns}/{unquote(esc)}")
                    return None
            for t in stages:
                if t not in agent.transforms:
                    self._fail(404, f"transform {ns}/{t} not found", transform=f"{ns}/{unquote(esc)}")
                    return None
            return stages

        def _transform(self, rest: str, q: Dict[str, str]) -> None:
            ns, _, rest = rest.partition("/")
            esc, _, esc_obj = rest.partition("/")
            name = unquote(esc_obj)
            body = self._body() if self.command == "PUT" else None
            stages = self._pipeline(unquote(ns), esc)
            if stages is None:
                return
            if body is None:
                held = agent.objects.get(name)
                if held is None or held[1] != agent.node:
                    self._fail(404, f"object {name} not found", obj=name, transform=f"{ns}/{unquote(esc)}")
                    return
                body = held[0]
            try:
                for t in stages:
                    body = agent.transforms[t](body, q.get("args", ""))
            except TransformError as e:
                self._fail(502, str(e), obj=name, transform=f"{ns}/{unquote(esc)}")
                return
            self._answer(200, body, content_type="application/octet-stream")

        def _stream(self, rest: str) -> None:
            ns, _, esc = rest.partition("/")
            if self._pipeline(unquote(ns), esc) is None:
                return
            key = self.headers.get("Sec-WebSocket-Key")
            if self.headers.get("Upgrade", "").lower() != "websocket" or not key:
                self._fail(400, "not a websocket handshake")
                return
            accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", accept.decode())
            self.end_headers()
            self.wfile.flush()
            _serve_ws(agent, self.connection, unquote(esc))
            self.close_connection = True

    return Handler


def _read_exact(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise EOFError
        out += chunk
    return out


def _read_frame(sock: socket.socket) -> Tuple[int, bytes]:
    b0, b1 = _read_exact(sock, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", _read_exact(sock, 2))[0]
    elif n == 127:
        n = struct.unpack("!Q", _read_exact(sock, 8))[0]
    mask = _read_exact(sock, 4) if b1 & 0x80 else b"\0\0\0\0"
    data = bytes(c ^ mask[i % 4] for i, c in enumerate(_read_exact(sock, n)))
    return b0 & 0x0F, data


def _write_frame(sock: socket.socket, opcode: int, data: bytes) -> None:
    n = len(data)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    sock.sendall(head + data)


def _serve_ws(agent: FakeAgent, sock: socket.socket, transform: str) -> None:
    """Answers objects in order, as the agent's stream does."""
    fn = agent.transforms[transform]
    answered = 0
    try:
        while True:
            opcode, data = _read_frame(sock)
            if opcode == 8:
                _write_frame(sock, 8, data[:2])
                return
            ctrl = json.loads(data)
            _, body = _read_frame(sock)
            if agent.revoke_stream_after is not None and answered >= agent.revoke_stream_after:
                reason = (f"forbidden: RBAC no longer lets loader use Transform {agent.namespace}/{transform}; "
                          "reconnect once allowed")
                _write_frame(sock, 8, struct.pack("!H", 1008) + reason.encode())
                return
            try:
                _write_frame(sock, 2, fn(body, ctrl.get("args", "")))
            except TransformError as e:
                _write_frame(sock, 1, json.dumps({"error": str(e)}).encode())
            answered += 1
    except (EOFError, OSError):
        return
