"""Where a client finds the node agent, its token and its namespace, and a dataset its MxJob's.

Pure functions of an environment and a file system, so each rule has its own test.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

# What a pod reads (docs/python.md). The MxJob controller sets them on pods of a job that names a
# dataset; any other pod may set them itself.
ENV_URL = "MLKUBE_DATAPATH_URL"
ENV_TOKEN_FILE = "MLKUBE_DATAPATH_TOKEN_FILE"
ENV_NAMESPACE = "MLKUBE_NAMESPACE"
# An MxJob's spec.dataset, on its workers (api/wire/podenv.go): a prefix or a template, and the
# Transform and args its objects are read through.
ENV_DATASET_PREFIX = "MLKUBE_DATASET_PREFIX"
ENV_DATASET_TEMPLATE = "MLKUBE_DATASET_TEMPLATE"
ENV_DATASET_TRANSFORM = "MLKUBE_DATASET_TRANSFORM"
ENV_DATASET_ARGS = "MLKUBE_DATASET_ARGS"

# The node agents' Service (manifests/agent): internalTrafficPolicy Local keeps every client on
# its own node's agent, so a pod reads its node's objects from local disk.
AGENT_SERVICE_URL = "http://node-agent.mlkube-datapath.svc"
# api/wire.TokenFile: where a projected token volume of audience AUDIENCE is mounted.
TOKEN_FILE = "/var/run/secrets/mlkube.io/datapath/token"
AUDIENCE = "mlkube-datapath"
SERVICE_ACCOUNT_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


class ConfigError(ValueError):
    """The client cannot tell where the agent is, which token to send or which namespace to use."""


def in_pod(env: Mapping[str, str]) -> bool:
    """Says whether the process runs in a Kubernetes pod: the kubelet sets this in every one."""
    return bool(env.get("KUBERNETES_SERVICE_HOST"))


def agent_url(url: Optional[str], env: Mapping[str, str]) -> str:
    """The agent's base URL: url, else $MLKUBE_DATAPATH_URL, else the node-local Service in a pod."""
    chosen = url or env.get(ENV_URL)
    if not chosen:
        if not in_pod(env):
            raise ConfigError(
                "no agent URL: outside a pod, pass Client(url=...) or set " + ENV_URL + " (e.g. "
                "http://localhost:8080 with `kubectl -n mlkube-datapath port-forward "
                "pod/<agent on the node> 8080`)")
        chosen = AGENT_SERVICE_URL
    if not chosen.startswith(("http://", "https://")):
        raise ConfigError(f"agent URL {chosen!r} must start with http:// or https://")
    return chosen.rstrip("/")


def token_file(path: Optional[str], env: Mapping[str, str]) -> Optional[str]:
    """The token file to read: path, else $MLKUBE_DATAPATH_TOKEN_FILE, else the projected token's
    usual place in a pod; None outside a pod when neither is given."""
    if path:
        return path
    if env.get(ENV_TOKEN_FILE):
        return env[ENV_TOKEN_FILE]
    return TOKEN_FILE if in_pod(env) else None


def namespace(ns: Optional[str], env: Mapping[str, str],
              sa_file: str = SERVICE_ACCOUNT_NAMESPACE_FILE) -> str:
    """The namespace whose data requests name: ns, else $MLKUBE_NAMESPACE, else the pod's own."""
    if ns:
        return ns
    if env.get(ENV_NAMESPACE):
        return env[ENV_NAMESPACE]
    try:
        with open(sa_file, encoding="utf-8") as f:
            found = f.read().strip()
    except OSError:
        found = ""
    if not found:
        raise ConfigError(f"no namespace: pass Client(namespace=...) or set {ENV_NAMESPACE} ({sa_file} "
                          "is absent, as it is outside a pod or with automountServiceAccountToken: false)")
    return found


@dataclass(frozen=True)
class JobDataset:
    """An MxJob's spec.dataset as its workers see it: exactly one of prefix and template."""

    prefix: Optional[str]
    template: Optional[str]
    transform: Optional[str]
    args: str


def job_dataset(env: Mapping[str, str]) -> JobDataset:
    """The dataset of the MxJob this process is a worker of, from its environment."""
    prefix, template = env.get(ENV_DATASET_PREFIX) or None, env.get(ENV_DATASET_TEMPLATE) or None
    if prefix and template:
        raise ConfigError(f"both ${ENV_DATASET_PREFIX} ({prefix!r}) and ${ENV_DATASET_TEMPLATE} ({template!r}) "
                          "are set: an MxJob's dataset is one or the other; unset one, or name the objects "
                          "with prefix=, names= or template=")
    if not prefix and not template:
        raise ConfigError(f"no objects: name them with prefix=, names= or template=, or run as a worker of "
                          f"an MxJob with spec.dataset, which sets ${ENV_DATASET_PREFIX} or "
                          f"${ENV_DATASET_TEMPLATE}")
    return JobDataset(prefix=prefix, template=template, transform=env.get(ENV_DATASET_TRANSFORM) or None,
                      args=env.get(ENV_DATASET_ARGS, ""))


class TokenFile:
    """A token file the kubelet rewrites before the token expires.

    :meth:`read` stats the file on every call and reads it again only when its identity, size or
    modification time changed, so a rotated token is sent from the next request on while an
    unchanged one costs a ``stat``. The kubelet swaps the file through a symlink, which ``stat``
    follows.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: Optional[Tuple[int, int, int, int]] = None
        self._token = ""

    def read(self) -> str:
        try:
            st = os.stat(self.path)
            seen = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            with self._lock:
                if seen != self._seen:
                    with open(self.path, encoding="utf-8") as f:
                        token = f.read().strip()
                    if not token:
                        raise ConfigError(f"token file {self.path} is empty")
                    self._token, self._seen = token, seen
                return self._token
        except OSError as e:
            raise ConfigError(
                f"cannot read the data path token {self.path}: {e.strerror}; mount a projected "
                f"serviceAccountToken volume with audience {AUDIENCE} there (docs/python.md), or "
                "pass Client(token=...)") from e
