"""Builds the mlkube Python package with Debian's setuptools, from the files alone.

There is deliberately no pyproject.toml: with one, pip would build in an isolated environment it
fills from the Python package index, which the machines here do not reach. Without it, pip builds
with the setuptools and wheel already installed (Debian's python3-setuptools, python3-wheel).
"""

from setuptools import setup

setup(
    name="mlkube",
    version="0.1.0",
    description="Read and transform a namespace's data through the node-local mlkube agent",
    packages=["mlkube"],
    package_data={"mlkube": ["py.typed"]},
    python_requires=">=3.9",
    # Debian 12's versions; PyTorch is optional (mlkube.torch's datasets).
    install_requires=["urllib3>=1.26", "websockets>=10.4"],
    extras_require={"torch": ["torch>=1.13"]},
    license="Apache-2.0",
)
