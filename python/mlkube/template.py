"""Brace templates of object names, as bash expands them and TransformRuns take them:
``shard-{0000..0999}.tar`` (zero padding kept from the wider bound when a bound has a leading
zero), lists ``{train,val}``, several groups multiplying in order (the leftmost varies slowest).
Names are made on demand, so a template of a million names costs nothing until indexed."""

from __future__ import annotations

import re
from typing import Iterator, List, Sequence, Union

_GROUP = re.compile(r"\{([^{}]*)\}")
_RANGE = re.compile(r"^(-?\d+)\.\.(-?\d+)$")


class _Range:
    def __init__(self, lo: str, hi: str) -> None:
        self.lo, self.hi = int(lo), int(hi)
        if self.hi < self.lo:
            raise ValueError(f"range {{{lo}..{hi}}} ends before it starts")
        padded = any(len(b.lstrip("-")) > 1 and b.lstrip("-").startswith("0") for b in (lo, hi))
        self.width = max(len(lo), len(hi)) if padded else 0

    def __len__(self) -> int:
        return self.hi - self.lo + 1

    def __getitem__(self, i: int) -> str:
        return str(self.lo + i).zfill(self.width)


class Template(Sequence[str]):
    """The names a brace template expands to, indexable and of known length."""

    def __init__(self, template: str) -> None:
        self.template = template
        self._fixed: List[str] = []
        self._groups: List[Union[_Range, List[str]]] = []
        depth = 0
        for c in template:
            depth += {"{": 1, "}": -1}.get(c, 0)
            if depth not in (0, 1):
                raise ValueError(f"template {template!r}: unbalanced or nested braces")
        if depth:
            raise ValueError(f"template {template!r}: unbalanced or nested braces")
        pos = 0
        for m in _GROUP.finditer(template):
            self._fixed.append(template[pos:m.start()])
            body = m.group(1)
            r = _RANGE.match(body)
            if r:
                self._groups.append(_Range(r.group(1), r.group(2)))
            elif "," in body:
                self._groups.append(body.split(","))
            else:
                raise ValueError(f"template {template!r}: group {{{body}}} is neither a range "
                                 "{0..9} nor a list {a,b}")
            pos = m.end()
        self._fixed.append(template[pos:])
        self._len = 1
        for g in self._groups:
            self._len *= len(g)

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(f"template index {i} out of range")
        parts: List[str] = []
        for g in reversed(self._groups):  # the rightmost group varies fastest
            i, k = divmod(i, len(g))
            parts.append(g[k])
        out = [self._fixed[0]]
        for j, p in enumerate(reversed(parts)):
            out += [p, self._fixed[j + 1]]
        return "".join(out)

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(self._len))
