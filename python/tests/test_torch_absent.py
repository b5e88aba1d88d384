"""mlkube.torch imports without PyTorch: its split functions work, its datasets say what to install."""

import subprocess
import sys
import textwrap


def test_without_torch():
    code = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None  # as if PyTorch were not installed
        import mlkube.torch as mt
        assert list(mt.share(4, 1, 2)) == [2, 3]
        try:
            mt.ObjectDataset("p", client=object())
        except ImportError as e:
            assert "apt-get install python3-torch" in str(e), e
        else:
            raise AssertionError("no ImportError")
    """)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=__file__.rsplit("/tests/", 1)[0])
