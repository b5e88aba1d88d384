#!/usr/bin/env bash
# Installs what building, testing and running mlkube's e2e cluster needs on a fresh Debian machine
# with Go: Debian packages (etcd for the integration tests; containerd, runc, CNI plugins and
# networking tools for the local cluster), the Go modules, and the Kubernetes and CoreDNS builds
# (cached by version under $MLKUBE_CACHE). Idempotent; needs root.
set -euo pipefail
cd "$(dirname "$0")/../.."
# python3.11 from Debian: the code runtime image is built from these packages, and its tests run
# them; python3-pip for the tests of MLKUBE_CODE_DEPENDENCIES, which install a wheel they build.
# The Python client (python/) needs urllib3 and websockets, pytest to test it and setuptools and
# wheel to build its wheel; python3-torch for its datasets' tests with a real DataLoader (about
# four minutes on a fresh machine, once: make test-python refuses to skip them).
packages=(git make python3.11-minimal libpython3.11-minimal libpython3.11-stdlib python3-pip
  python3-urllib3 python3-websockets python3-pytest python3-setuptools python3-wheel python3-torch)
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
echo "== cluster dependencies (Debian packages, Kubernetes and CoreDNS builds)"
hack/cluster/deps.sh
