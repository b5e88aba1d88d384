"""`pip install ./python` works as docs/python.md says: in a venv that sees Debian's packages, with
no package index, and the venv's python then imports the package from the venv."""

import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Debian's python3, whose python3-urllib3, -websockets (and -torch) the venv sees; this one
# when the tests run under another.
SYSTEM_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def test_pip_install_into_a_venv(tmp_path):
    src = tmp_path / "python"  # a copy: pip builds in the source directory
    shutil.copytree(os.path.join(ROOT, "mlkube"), src / "mlkube", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(ROOT, "setup.py"), src)
    venv = tmp_path / "venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", str(venv)], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    install = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index", "--no-build-isolation",
                              str(src)], env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stderr

    code = ("import mlkube, mlkube.torch, mlkube.split, sysconfig; "
            "print(mlkube.__file__); print(sysconfig.get_paths()['purelib']); "
            "print(mlkube.torch._data is not None)")
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    module, site, has_torch = out.stdout.splitlines()
    assert module.startswith(site + os.sep) and site.startswith(str(venv))
    assert os.path.exists(os.path.join(site, "mlkube", "py.typed"))
    # The system's PyTorch, where it is installed, is the venv's too.
    assert has_torch == str(_system_has_torch())


def _system_has_torch() -> bool:
    return subprocess.run([SYSTEM_PYTHON, "-c", "import torch"], capture_output=True).returncode == 0
