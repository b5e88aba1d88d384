#!/usr/bin/env bash
# hack/cluster/registry.sh start|stop: a real image registry for the release e2e: Debian's
# docker-registry (CNCF distribution), installed without starting its service, run by hand on
# plain HTTP with its PID recorded and its storage in $MLKUBE_REGISTRY_STATE (default
# _output/registry), and stopped by that PID with its storage removed.
#
# It listens on every address at $MLKUBE_REGISTRY_PORT (default 5000): `make release` pushes to it
# from this machine, and the test cluster's nodes pull from the address they reach this machine
# at (the local cluster declares the registry at its bridge address plain HTTP). Needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=hack/lib/debian.sh
. hack/lib/debian.sh
state=${MLKUBE_REGISTRY_STATE:-$PWD/_output/registry}
port=${MLKUBE_REGISTRY_PORT:-5000}
pidfile=$state/registry.pid

answers() { curl -fsS -o /dev/null "http://127.0.0.1:$port/v2/"; }

start() {
  if [ -f "$pidfile" ] && [ -d "/proc/$(cat "$pidfile")" ]; then
    echo "registry: already running as $(cat "$pidfile")" >&2
    return 0
  fi
  if answers 2>/dev/null; then
    echo "registry: something this script did not start already answers on port $port; stop it or set MLKUBE_REGISTRY_PORT" >&2
    exit 1
  fi
  apt_install_stopped docker-registry curl
  mkdir -p "$state/data"
  cat >"$state/config.yml" <<EOT
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $state/data
http:
  addr: :$port
EOT
  echo "registry: starting docker-registry on :$port (log: $state/registry.log)" >&2
  setsid docker-registry serve "$state/config.yml" >"$state/registry.log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  if wait_for_answer "$pidfile" 60 answers; then
    echo "registry: answers on :$port" >&2
    return 0
  fi
  echo "registry: did not answer; its log:" >&2
  tail -20 "$state/registry.log" >&2
  stop
  exit 1
}

stop() {
  stop_pidfile "$pidfile" docker-registry
  rm -rf "$state/data"
}

case "${1:-}" in
  start | stop) "$1" ;;
  *)
    echo "usage: hack/cluster/registry.sh start|stop" >&2
    exit 2
    ;;
esac
