"""How Client() finds the agent, the token and the namespace, and follows a rotated token."""

import os

import pytest

import mlkube
from mlkube import _config

POD = {"KUBERNETES_SERVICE_HOST": "10.96.0.1"}


def test_in_a_pod_everything_is_found(tmp_path):
    ns = tmp_path / "namespace"
    ns.write_text("team-a\n")
    assert _config.agent_url(None, POD) == "http://node-agent.mlkube-datapath.svc"
    assert _config.token_file(None, POD) == "/var/run/secrets/mlkube.io/datapath/token"
    assert _config.namespace(None, POD, sa_file=str(ns)) == "team-a"


def test_environment_overrides():
    env = dict(POD, MLKUBE_DATAPATH_URL="http://10.0.0.7:8080/", MLKUBE_DATAPATH_TOKEN_FILE="/t",
               MLKUBE_NAMESPACE="team-b")
    assert _config.agent_url(None, env) == "http://10.0.0.7:8080"
    assert _config.token_file(None, env) == "/t"
    assert _config.namespace(None, env, sa_file="/nonexistent") == "team-b"
    assert _config.agent_url("http://x:1", env) == "http://x:1"


def test_outside_a_pod_url_token_and_namespace_are_needed():
    with pytest.raises(mlkube.ConfigError, match="no agent URL: outside a pod, pass Client"):
        mlkube.Client(token="t", namespace="n", env={})
    with pytest.raises(mlkube.ConfigError, match="no token: outside a pod"):
        mlkube.Client("http://x", namespace="n", env={})
    with pytest.raises(mlkube.ConfigError, match="no namespace: pass Client"):
        _config.namespace(None, {}, sa_file="/nonexistent")
    with pytest.raises(mlkube.ConfigError, match="must start with http"):
        mlkube.Client("x:80", token="t", namespace="n", env={})


def test_a_missing_token_file_says_how_to_mount_one(tmp_path):
    c = mlkube.Client("http://x", token_file=str(tmp_path / "none"), namespace="n", env={})
    with pytest.raises(mlkube.ConfigError, match="mount a projected serviceAccountToken volume with audience mlkube-datapath"):
        c.token()


def test_rotated_token_is_sent_from_the_next_request(agent, tmp_path):
    f = tmp_path / "token"
    f.write_text("token-1\n")
    c = mlkube.Client(agent.url, namespace="team-a", env={"MLKUBE_DATAPATH_TOKEN_FILE": str(f)})
    agent.store("x", b"1")
    c.get("x")
    # The kubelet writes a new file and swaps a symlink to it; here a rename over the old one.
    agent.tokens = {"token-2"}
    new = tmp_path / "token.new"
    new.write_text("token-2")
    os.replace(new, f)
    assert c.get("x") == b"1"
    assert agent.tokens_seen == ["token-1", "token-2"]


def test_token_file_is_read_again_only_when_it_changed(tmp_path, monkeypatch):
    f = tmp_path / "token"
    f.write_text("a")
    opened = []

    def counting_open(path, *args, **kwargs):
        opened.append(path)
        return open(path, *args, **kwargs)
    monkeypatch.setattr(_config, "open", counting_open, raising=False)
    t = _config.TokenFile(str(f))
    assert [t.read(), t.read()] == ["a", "a"]
    assert len(opened) == 1  # the second read was a stat only
    st = os.stat(f)
    f.write_text("b")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert t.read() == "b" and len(opened) == 2


def test_a_client_pickles_for_spawned_workers(agent, tmp_path):
    import pickle
    f = tmp_path / "token"
    f.write_text("token-1")
    agent.store("x", b"1")
    c = pickle.loads(pickle.dumps(mlkube.Client(agent.url, token_file=str(f), namespace="team-a", env={})))
    assert c.get("x") == b"1"
    f.write_text("token-2")
    agent.tokens = {"token-2"}
    os.utime(f, ns=(1, 1))
    assert c.get("x") == b"1"  # the token file came along, not a copy of the token


def test_an_mxjobs_dataset_from_its_workers_environment():
    env = {"MLKUBE_DATASET_PREFIX": "train/", "MLKUBE_DATASET_TRANSFORM": "decode>>crop",
           "MLKUBE_DATASET_ARGS": "size=224"}
    assert _config.job_dataset(env) == _config.JobDataset("train/", None, "decode>>crop", "size=224")
    env = {"MLKUBE_DATASET_TEMPLATE": "shard-{0..9}.tar"}
    assert _config.job_dataset(env) == _config.JobDataset(None, "shard-{0..9}.tar", None, "")


def test_no_dataset_names_the_variables_to_set():
    with pytest.raises(ValueError, match=r"prefix=, names= or template=, or run as a worker of an MxJob "
                                         r"with spec.dataset, which sets \$MLKUBE_DATASET_PREFIX or "
                                         r"\$MLKUBE_DATASET_TEMPLATE"):
        _config.job_dataset({"MLKUBE_DATASET_TRANSFORM": "decode"})
    with pytest.raises(mlkube.ConfigError, match="both .MLKUBE_DATASET_PREFIX .'a/'. and .MLKUBE_DATASET_TEMPLATE"):
        _config.job_dataset({"MLKUBE_DATASET_PREFIX": "a/", "MLKUBE_DATASET_TEMPLATE": "b{0..1}"})
