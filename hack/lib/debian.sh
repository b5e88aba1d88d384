# Shared by the scripts that install Debian's daemons for the e2e harness (hack/cluster/engine.sh,
# hack/cluster/registry.sh): the packages go in, but their services do not start, because each daemon
# must run only while the script that owns it runs it.
# shellcheck shell=bash

# apt_install_stopped PACKAGE...: installs the PACKAGEs that are missing, with Debian's
# maintainer scripts told (policy-rc.d) not to start their services. A policy-rc.d already there
# is kept as it is; ours is removed again.
apt_install_stopped() {
  local missing=() p policy=""
  for p in "$@"; do
    dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing ${missing[*]} (services not started)" >&2
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
  fi
  local rc=0
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || rc=$?
  [ -z "$policy" ] || rm -f "$policy"
  return "$rc"
}

# wait_for_answer PIDFILE TRIES COMMAND...: polls COMMAND every half second until it succeeds
# (ready is when the daemon answers, not when its process exists); fails once the process of
# PIDFILE is gone or TRIES polls passed.
wait_for_answer() {
  local pidfile=$1 tries=$2
  shift 2
  for _ in $(seq "$tries"); do
    "$@" >/dev/null 2>&1 && return 0
    [ -d "/proc/$(cat "$pidfile")" ] || return 1
    sleep 0.5
  done
  return 1
}

# stop_pidfile PIDFILE NAME: stops the process PIDFILE records if it is still NAME (a reused PID
# is left alone), waiting up to 30 s before SIGKILL, and removes PIDFILE.
stop_pidfile() {
  local pidfile=$1 name=$2 pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if [ -n "$pid" ] && grep -q "$name" "/proc/$pid/cmdline" 2>/dev/null; then
    echo "stopping $name $pid" >&2
    kill "$pid"
    for _ in $(seq 60); do [ -d "/proc/$pid" ] || break; sleep 0.5; done
    [ ! -d "/proc/$pid" ] || kill -9 "$pid"
  fi
  rm -f "$pidfile"
}
