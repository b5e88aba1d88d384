"""mlkube Python runtime worker: runs the user's transform function for the Go
server (package runtimes/python) that started it.

The protocol runs on the process's original stdin and stdout; user code's
print() goes to stderr instead, so that it cannot corrupt the framing. Every
frame is a status byte, a 4-byte big-endian length and that many bytes.

  worker -> server, once at start:  OK b"ready", or LOAD_ERROR message
  server -> worker, per call:       NAME object name, ARGS args, CALL data
  worker -> server, per call:       OK result, or ERROR message

The function is called as its signature asks (plan): with the object's bytes,
and its name (path) and the request's args (etl_args) when it has parameters
for them, as AIStore's transform(data, path, etl_args) does.

The configuration comes from the environment (MLKUBE_CODE_SOURCE,
MLKUBE_CODE_FUNCTION); argv[1:] are directories to put first on sys.path
(where the dependencies were installed).
"""

import inspect
import linecache
import os
import struct
import sys
import traceback
import types

OK, ERROR, LOAD_ERROR, CALL, NAME, ARGS = b"0", b"1", b"2", b"c", b"n", b"a"
HEADER = struct.Struct(">cI")
FILENAME = "<MLKUBE_CODE_SOURCE>"
TRACEBACK_TAIL = 2048


def main():
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb")
    # User code's stdout goes to stderr, its stdin is empty.
    os.dup2(2, 1)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    # An empty stdin: a pipe whose writer is closed (no need for /dev/null).
    r, w = os.pipe()
    os.close(w)
    os.dup2(r, 0)
    os.close(r)

    sys.path[:0] = sys.argv[1:]
    try:
        name = os.environ.get("MLKUBE_CODE_FUNCTION") or "transform"
        fn = plan(load(os.environ.get("MLKUBE_CODE_SOURCE", ""), name), name)
    except LoadError as e:
        send(proto_out, LOAD_ERROR, str(e).encode())
        return 1
    send(proto_out, OK, b"ready")

    path, args = "", ""
    while True:
        header = read_exactly(proto_in, HEADER.size)
        if header is None:
            return 0  # the server closed our stdin: time to go
        kind, size = HEADER.unpack(header)
        data = read_exactly(proto_in, size)
        if data is None or kind not in (CALL, NAME, ARGS):
            print(f"mlkube worker: bad frame {kind!r}", file=sys.stderr)
            return 2
        if kind == NAME:
            path = data.decode("utf-8", "replace")
        elif kind == ARGS:
            args = data.decode("utf-8", "replace")
        else:
            status, out = call(fn, data, path, args)
            send(proto_out, status, out)
            path, args = "", ""


class LoadError(Exception):
    pass


def load(source, name):
    """Runs the source as a module and returns its function called name."""
    # Tracebacks quote the source's lines from the cache: it has no file.
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)
    try:
        code = compile(source, FILENAME, "exec")
    except SyntaxError as e:
        raise LoadError("MLKUBE_CODE_SOURCE does not compile: " + describe(e, None)) from None
    module = types.ModuleType("mlkube_code")
    module.__file__ = FILENAME
    sys.modules["mlkube_code"] = module
    try:
        exec(code, module.__dict__)
    except BaseException as e:
        raise LoadError("MLKUBE_CODE_SOURCE failed to load: " +
                        describe(e, e.__traceback__.tb_next)) from None
    fn = getattr(module, name, None)
    if fn is None:
        raise LoadError(f"MLKUBE_CODE_SOURCE defines no {name!r} "
                        f"(the function named by MLKUBE_CODE_FUNCTION)")
    if not callable(fn):
        raise LoadError(f"MLKUBE_CODE_SOURCE: {name!r} (MLKUBE_CODE_FUNCTION) is a "
                        f"{type(fn).__name__}, not a function")
    return fn


SIGNATURES = ("the accepted signatures: f(data), f(data, path), f(data, path, etl_args), "
              "f(data, *rest), and keyword-only parameters named path and etl_args")


def plan(fn, name):
    """Returns call(data, path, args) calling fn as its signature asks: the
    bytes first; the object's name and the args as the second and third
    positional parameters, to *rest, or to keyword-only parameters named path
    and etl_args. A signature the runtime cannot fill is a LoadError."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        def bytes_only(data, path, args):
            return fn(data)  # no signature to read: the bytes only
        bytes_only.__name__ = name
        return bytes_only
    P = inspect.Parameter
    positional = [p for p in params if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    rest = any(p.kind == P.VAR_POSITIONAL for p in params)
    if not positional and not rest:
        raise LoadError(f"MLKUBE_CODE_SOURCE: {name}() takes no parameter for the object's bytes; "
                        + SIGNATURES)
    for p in positional[3:]:
        if p.default is P.empty:
            raise LoadError(f"MLKUBE_CODE_SOURCE: {name}()'s parameter {p.name!r} comes after data, path "
                            f"and etl_args and has no default, so the runtime cannot fill it; " + SIGNATURES)
    keywords = {}
    for p in params:
        if p.kind != P.KEYWORD_ONLY:
            continue
        if p.name in ("path", "etl_args"):
            keywords[p.name] = True
        elif p.default is P.empty:
            raise LoadError(f"MLKUBE_CODE_SOURCE: {name}()'s keyword-only parameter {p.name!r} is neither "
                            f"path nor etl_args, so the runtime cannot fill it; " + SIGNATURES)
    n = 3 if rest else min(len(positional), 3)

    def planned(data, path, args):
        kw = {}
        if "path" in keywords:
            kw["path"] = path
        if "etl_args" in keywords:
            kw["etl_args"] = args
        return fn(data, *(path, args)[:n - 1], **kw)
    planned.__name__ = name
    return planned


def call(fn, data, path, args):
    """Calls fn as planned; returns (OK, result) or (ERROR, message)."""
    try:
        out = fn(data, path, args)
        if isinstance(out, (bytearray, memoryview)):
            out = bytes(out)
        if not isinstance(out, bytes):
            raise TypeError(f"{getattr(fn, '__name__', 'transform')} must return bytes, "
                            f"not {type(out).__name__}")
        return OK, out
    except Exception as e:
        # Skips this function's frame and plan's: the traceback starts in user code.
        tb = e.__traceback__.tb_next
        return ERROR, describe(e, tb.tb_next if tb else None).encode("utf-8", "replace")


def describe(e, tb):
    """The exception's type and message, then the end of its traceback from tb
    on (none when tb is None)."""
    head = "".join(traceback.format_exception_only(type(e), e)).strip()
    if tb is None:
        return head
    text = "".join(traceback.format_tb(tb)).rstrip()
    if len(text) > TRACEBACK_TAIL:
        text = "…" + text[-TRACEBACK_TAIL:]
    return f"{head}\nTraceback (most recent call last):\n{text}"


def send(out, status, payload):
    out.write(HEADER.pack(status, len(payload)))
    out.write(payload)
    out.flush()


def read_exactly(f, n):
    """Reads n bytes; None at the end of the input."""
    chunks = []
    while n > 0:
        b = f.read(min(n, 1 << 20))
        if not b:
            return None
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


if __name__ == "__main__":
    sys.exit(main())
