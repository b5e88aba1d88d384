#!/usr/bin/env bash
# hack/cluster/engine.sh install|start|stop|status: the container engine kind runs on, for machines that
# have none (this project's CI). Debian's docker.io is installed without starting it, started by
# hand with its PID recorded, and stopped by that PID with its bridges removed, so that no later
# command finds a daemon it did not start: e2e/cluster picks kind whenever `docker info` answers.
#
# A daemon this script did not start is never stopped by it. State (PID file, log, daemon.json)
# lives in $MLKUBE_ENGINE_STATE (default /run/mlkube-engine). Needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=hack/lib/debian.sh
. hack/lib/debian.sh
state=${MLKUBE_ENGINE_STATE:-/run/mlkube-engine}
pidfile=$state/dockerd.pid

# running: the PID of the dockerd this script started, if it is still alive.
running() {
  [ -f "$pidfile" ] || return 1
  local pid
  pid=$(cat "$pidfile")
  [ -n "$pid" ] && grep -q dockerd "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

# debootstrap and jq build the registry-free kind node image (hack/cluster/kind-node-image.sh).
install() { apt_install_stopped docker.io debootstrap jq; }

# lacks_cap N: the capability numbered N is missing from this process's bounding set.
lacks_cap() {
  local bnd
  bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  (( (16#$bnd >> $1 & 1) == 0 ))
}

start() {
  if pid=$(running); then echo "engine: dockerd already running as $pid (ours)" >&2; return 0; fi
  if docker info >/dev/null 2>&1; then
    echo "engine: a container engine this script did not start already answers; using it, and stop will leave it alone" >&2
    return 0
  fi
  install
  mkdir -p "$state"
  local runtime_conf=""
  # Some sandboxes run root without CAP_SYS_RESOURCE (capability 24) in its bounding set: runc
  # then fails every --privileged container (kind's nodes) with "unable to apply caps", and docker
  # ignores --cap-drop with --privileged. Only there, dockerd's default runtime is a wrapper that
  # drops the capabilities this process cannot grant before calling runc.
  if lacks_cap 24; then
    echo "engine: CAP_SYS_RESOURCE is outside the bounding set; runc runs through e2e/cmd/runc-bounded" >&2
    go build -o "$state/runc-bounded" ./e2e/cmd/runc-bounded
    runtime_conf=', "runtimes": {"bounded": {"path": "'"$state/runc-bounded"'"}}, "default-runtime": "bounded"'
  fi
  # No iptables: nothing on the host needs published ports beyond docker-proxy's loopback
  # forwarding (kind's API server port), and the local cluster's own rules stay untouched.
  echo '{"iptables": false, "ip-masq": false, "storage-driver": "overlay2"'"$runtime_conf"'}' >"$state/daemon.json"
  echo "engine: starting dockerd (log: $state/dockerd.log)" >&2
  setsid dockerd --config-file "$state/daemon.json" >"$state/dockerd.log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  if wait_for_answer "$pidfile" 120 docker info; then
    echo "engine: dockerd $(cat "$pidfile") answers" >&2
    return 0
  fi
  echo "engine: dockerd did not answer; its log:" >&2
  tail -30 "$state/dockerd.log" >&2
  stop
  exit 1
}

stop() {
  # Only what this script started is stopped, and only then are docker's bridges removed.
  [ -f "$pidfile" ] || return 0
  stop_pidfile "$pidfile" dockerd
  # The bridges docker made (docker0, and br-<id> for kind's network) outlive the daemon.
  for link in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//'); do
    case "$link" in docker0 | br-*) ip link del "$link" 2>/dev/null || true ;; esac
  done
}

status() {
  if pid=$(running); then echo "running: $pid"; else echo "stopped"; fi
}

case "${1:-}" in
  install | start | stop | status) "$1" ;;
  *)
    echo "usage: hack/cluster/engine.sh install|start|stop|status" >&2
    exit 2
    ;;
esac
