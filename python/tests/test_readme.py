"""The README's Python snippet runs as written, as an MxJob worker, against the fake agent: the
README cannot promise code that does not work."""

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
SECTION = "## Training code in Python"


def readme_snippet() -> str:
    """The first ```python block of the README's Python section."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    assert SECTION in text, f"README.md has no section {SECTION!r}: keep the name in step with this test"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    m = re.search(r"^```python\n(.*?)^```$", section, re.S | re.M)
    assert m, f"README.md's {SECTION!r} has no ```python block"
    return m.group(1)


def test_readme_snippet_trains_on_the_mxjobs_dataset(agent, worker_env, tmp_path):
    script = tmp_path / "snippet.py"
    script.write_text(readme_snippet())
    out = subprocess.run([sys.executable, str(script)], env=worker_env, cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(r"rank 0: loss \d+\.\d{4}\n", out.stdout), out.stdout
    read = {p for m, p in agent.requests if m == "GET" and p.startswith("/v1/transform/team-a/decode/")}
    assert read == {f"/v1/transform/team-a/decode/train/{i:03d}" for i in range(64)}
