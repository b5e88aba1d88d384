#!/usr/bin/env bash
# Installs what building and testing mlkube needs on a fresh Debian machine with Go: Debian's
# etcd for the integration tests' API server, and the Go modules. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(etcd-server git make)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "== go mod download"
go mod download
go mod download -modfile=hack/tools/go.mod
