"""pip installs the package from its directory with what Debian packages, no index needed."""

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_pip_install(tmp_path):
    src = tmp_path / "src"  # a copy: pip builds in the source directory
    shutil.copytree(os.path.join(ROOT, "mlkube"), src / "mlkube", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(ROOT, "setup.py"), src)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-build-isolation",
                    "--target", str(target), str(src)], check=True, capture_output=True)
    assert (target / "mlkube" / "py.typed").exists()
    code = "import mlkube, mlkube.torch, mlkube.split; print(mlkube.__file__)"
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(target)),
                         cwd=tmp_path, check=True, capture_output=True, text=True)
    assert out.stdout.startswith(str(target))
