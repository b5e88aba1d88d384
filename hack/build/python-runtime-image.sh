#!/usr/bin/env bash
# Builds the base layer of an image on Debian's python3.11, because this project's machines can
# pull no image. Two layers, by the first argument:
#
#   runtime (the default): the Python `code` runtime image (mlkube/runtime-python3.11:dev): the
#     files of python3.11-minimal, libpython3.11-minimal and libpython3.11-stdlib (without docs), a
#     /usr/bin/python3 link, the shared libraries of the interpreter and its extension modules,
#     with the loader; and Debian's pip (with setuptools, wheel and distutils), which the runtime
#     runs to install a Transform's spec.code.dependencies into a private directory.
#   torch: the e2e training image (mlkube/e2e-torch:dev): the same, plus Debian's python3-torch,
#     the Python packages it depends on, the shared libraries every extension module of those
#     packages loads (libtorch and its closure, as ldd reports it), and this repository's Python
#     client (python/mlkube) where Debian's python3 finds it. It is built for this machine's
#     architecture only: it is a test image, not a release's.
#
# The layer is for the Debian architecture MLKUBE_IMAGE_ARCH (amd64 or arm64; default this
# machine's, which is what make images builds):
#   - this machine's: the packages are installed with apt-get when missing (needs root), and the
#     libraries are the ones ldd reports; the collected interpreter is run in a chroot to check it;
#   - another (a release's arm64 image): that architecture's packages are downloaded
#     (dpkg --add-architecture and apt-get update on first use, as root) and unpacked with
#     dpkg-deb; their binaries cannot run here, so the libraries are the closure of the packages'
#     dependencies (apt-cache depends), and the check is that every ELF file of the layer is for
#     that architecture and finds its loader and every library it needs (readelf) in the layer.
#
# The layer, an uncompressed tar, is cached under
# $MLKUBE_CACHE/<layer>-python3.11-<arch>-<key>/layer.tar, the key hashing the packages' versions,
# this script and (torch) python/mlkube, so only the first run pays (seconds here for the runtime,
# a minute for torch, a download for another architecture).
#
# usage: [MLKUBE_IMAGE_ARCH=arm64] hack/build/python-runtime-image.sh [runtime|torch]
# prints the path of the layer tarball on stdout.
set -euo pipefail

PYTHON=python3.11
packages=("$PYTHON-minimal" "lib$PYTHON-minimal" "lib$PYTHON-stdlib"
  python3-pip python3-setuptools python3-wheel python3-pkg-resources python3-distutils python3-lib2to3)
CACHE=${MLKUBE_CACHE:-$HOME/.cache/mlkube}
HOST_ARCH=$(dpkg --print-architecture)
ARCH=${MLKUBE_IMAGE_ARCH:-$HOST_ARCH}
LAYER=${1:-runtime}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
case $LAYER in
  runtime) ;;
  torch)
    if [ "$ARCH" != "$HOST_ARCH" ]; then
      echo "python-runtime-image: the torch layer is this machine's architecture ($HOST_ARCH) only, not $ARCH: it is an e2e image" >&2
      exit 1
    fi
    packages+=(python3-torch) ;;
  *) echo "python-runtime-image: layer $LAYER: want runtime or torch" >&2; exit 1 ;;
esac
case $ARCH in
  amd64) TRIPLET=x86_64-linux-gnu MACHINE="X86-64" ;;
  arm64) TRIPLET=aarch64-linux-gnu MACHINE="AArch64" ;;
  *) echo "python-runtime-image: architecture $ARCH: want amd64 or arm64" >&2; exit 1 ;;
esac

as_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "python-runtime-image: $1; as root: $2" >&2
    exit 1
  fi
}

installed() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | grep -q '^ii'; }

# host_versions installs what is missing and prints the installed packages' versions.
host_versions() {
  local p missing=()
  for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    as_root "missing Debian packages ${missing[*]}" "apt-get install -y ${missing[*]}"
    echo "python-runtime-image: installing ${missing[*]}" >&2
    apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
      { apt-get update >&2 && apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
  fi
  dpkg-query -W -f='${Package}=${Version}:${Architecture}\n' "${packages[@]}"
}

# torch_deps adds to packages the installed Python packages python3-torch needs, directly or not
# (numpy, typing-extensions, yaml, ...), whose modules are files ldd cannot find; and libtorch,
# whose libraries torch also dlopens by the links in torch/lib (libtorch_global_deps.so).
torch_deps() {
  local p
  for p in $(apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances python3-torch | grep -E '^(python3-[a-z0-9.+-]+|libtorch[0-9.]+)$' | sort -u); do
    if installed "$p" && [[ ! " ${packages[*]} " == *" $p "* ]]; then packages+=("$p"); fi
  done
}

# foreign_apt makes ARCH's package lists known to apt, once (root).
foreign_apt() {
  if ! dpkg --print-foreign-architectures | grep -qx "$ARCH"; then
    as_root "Debian's $ARCH packages are not known to apt" "dpkg --add-architecture $ARCH && apt-get update"
    dpkg --add-architecture "$ARCH"
  fi
  if ! apt-cache show --no-all-versions "${packages[0]}:$ARCH" >/dev/null 2>&1; then
    as_root "apt has no $ARCH package lists" "apt-get update"
    apt-get update >&2
  fi
}

# qualified prints the packages as apt names them for ARCH: name:ARCH, or the bare name of an
# Architecture: all package (pip and the pure-Python modules).
qualified() {
  apt-cache show --no-all-versions "$@" | awk -v arch="$ARCH" '
    /^Package:/ {p = $2} /^Architecture:/ {print ($2 == "all" ? p : p ":" arch)}'
}

# stanza_versions prints name=version:architecture of each package apt would download.
stanza_versions() {
  apt-cache show --no-all-versions "$@" | awk '
    /^Package:/ {p = $2} /^Version:/ {v = $2} /^Architecture:/ {a = $2} /^$/ && p != "" {print p "=" v ":" a; p = ""}
    END {if (p != "") print p "=" v ":" a}'
}

if [ "$ARCH" = "$HOST_ARCH" ]; then
  # Not in host_versions: that runs in a subshell, and packages must grow here.
  if [ "$LAYER" = torch ]; then host_versions >/dev/null && torch_deps; fi
  versions=$(host_versions)
else
  foreign_apt
  mapfile -t apt_packages < <(qualified "${packages[@]}")
  versions=$(stanza_versions "${apt_packages[@]}")
fi
# The client's files are part of the torch layer, so part of its key.
client_files() {
  if [ "$LAYER" = torch ]; then (cd "$REPO/python" && find mlkube -name '*.py' -o -name py.typed | sort); fi
}
key=$( { echo "$versions"; cat "$0"; client_files | while read -r f; do echo "$f"; cat "$REPO/python/$f"; done; } |
  sha256sum | cut -c1-16)
dir="$CACHE/$LAYER-$PYTHON-$ARCH-$key"
layer="$dir/layer.tar"
if [ -f "$layer" ]; then echo "$layer"; exit 0; fi

echo "python-runtime-image: collecting $PYTHON for $ARCH into $layer" >&2
mkdir -p "$dir"
root=$(mktemp -d "$dir/rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

# Debian is usr-merged: keep /bin, /lib, /lib64 as links, so that the loader path compiled into
# every binary (/lib64/ld-linux-x86-64.so.2, /lib/ld-linux-aarch64.so.1) resolves as on the host.
mkdir -p "$root/usr/bin" "$root/usr/lib" "$root/usr/lib64"
for d in bin lib lib64; do
  if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$root/$d"; fi
done

# copy FILE puts FILE (a link as a link) at the same path in the root.
copy() {
  local f=$1
  mkdir -p "$root$(dirname "$f")"
  cp -a "$f" "$root$f"
}

# collect_host copies the installed packages' files, and the libraries ldd finds for the
# interpreter and every extension module, with the loader.
collect_host() {
  # One tar for every file and link (thousands for torch's packages), not a cp each.
  dpkg -L "${packages[@]}" | sort -u | grep -vE '^/usr/share/(doc|man|lintian|binfmts)/' |
    while read -r f; do if [ -L "$f" ] || [ -f "$f" ]; then echo "$f"; fi; done |
    tar -C / -cf - --no-recursion -T - | tar -C "$root" -xf - --keep-directory-symlink
  local libs lib real
  # The interpreter, its extension modules, and (torch) every shared object of the packages.
  libs=$( { find "/usr/bin/$PYTHON" "/usr/lib/$PYTHON/lib-dynload" -type f \( -name '*.so' -o -perm -u+x \);
    [ "$LAYER" = runtime ] || dpkg -L "${packages[@]}" | grep -E '\.so(\.[0-9.]+)?$' | sort -u; } |
    { xargs ldd 2>/dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' | sort -u)
  for lib in $libs; do
    [ -e "$root$lib" ] && continue
    # The library itself (a link's target included) and the link under the name ldd found.
    real=$(readlink -f "$lib")
    [ -e "$root$real" ] || copy "$real"
    if [ "$real" != "$lib" ] && [ ! -e "$root$lib" ]; then
      mkdir -p "$root$(dirname "$lib")"
      ln -s "$real" "$root$lib"
    fi
  done
}

# collect_foreign unpacks ARCH's packages and the libraries they depend on, transitively: the
# lib* and zlib1g packages of ARCH in apt's dependency closure of the interpreter's packages
# (a superset of what ldd would list, as dependencies of tools like dpkg come along).
collect_foreign() {
  local arch_specific=() p libs debs deb
  for p in "${apt_packages[@]}"; do [[ $p == *:* ]] && arch_specific+=("$p"); done
  libs=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "${arch_specific[@]}" | grep -E "^(lib[a-z0-9.+-]+|zlib1g):$ARCH\$" | sort -u)
  debs=$(mktemp -d "$dir/debs.XXXXXX")
  # shellcheck disable=SC2046,SC2086 # one word per package
  (cd "$debs" && apt-get download -q "${apt_packages[@]}" $libs >&2)
  for deb in "$debs"/*.deb; do
    # Keep the root's /lib and /bin links: the packages still ship files under /lib.
    dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$root"
  done
  rm -rf "$debs" "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/lintian" "$root/usr/share/binfmts"
}

# check_foreign fails unless every ELF file of the layer is for ARCH and finds its loader and each
# library it needs in the layer: what running it would prove, were it runnable here.
check_foreign() {
  local f needed lib interp found=0 bad=0 d
  while read -r f; do
    readelf -h "$f" >/dev/null 2>&1 || continue
    found=$((found + 1))
    if ! readelf -h "$f" | grep -q "Machine:.*$MACHINE"; then echo "python-runtime-image: ${f#"$root"} is not $ARCH" >&2; bad=1; fi
    interp=$(readelf -l "$f" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
    if [ -n "$interp" ] && [ ! -e "$root$interp" ]; then echo "python-runtime-image: ${f#"$root"}: no loader $interp" >&2; bad=1; fi
    needed=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    # The loader's directories, and the file's own (glibc's gconv modules find theirs by $ORIGIN).
    for lib in $needed; do
      for d in "$root/lib/$TRIPLET" "$root/usr/lib/$TRIPLET" "$root/lib" "$root/usr/lib" "$(dirname "$f")"; do
        [ -e "$d/$lib" ] && continue 2
      done
      echo "python-runtime-image: ${f#"$root"} needs $lib, which no package brought" >&2
      bad=1
    done
  done < <(find "$root/usr" -type f \( -name '*.so*' -o -perm -u+x \))
  [ -x "$root/usr/bin/$PYTHON" ] || { echo "python-runtime-image: no /usr/bin/$PYTHON" >&2; bad=1; }
  [ "$bad" = 0 ] || exit 1
  echo "python-runtime-image: $found ELF files for $ARCH, each with its loader and libraries" >&2
}

if [ "$ARCH" = "$HOST_ARCH" ]; then collect_host; else collect_foreign; fi
ln -sf "$PYTHON" "$root/usr/bin/python3"
if [ "$LAYER" = torch ]; then
  mkdir -p "$root/usr/lib/python3/dist-packages"
  client_files | tar -C "$REPO/python" -cf - -T - | tar -C "$root/usr/lib/python3/dist-packages" -xf -
fi

# Sanity check before caching: the collected interpreter runs on its own, or, for another
# architecture, finds everything it would load.
if [ "$ARCH" != "$HOST_ARCH" ]; then
  check_foreign
elif [ "$(id -u)" = 0 ]; then
  chroot "$root" /usr/bin/python3 -c 'import hashlib, json, zlib, ssl, sqlite3, encodings.idna' >&2
  chroot "$root" /usr/bin/python3 -m pip --version >&2
  if [ "$LAYER" = torch ]; then
    # torch reads /dev/urandom on import, which a container has and this root does not.
    mkdir -p "$root/dev" && mknod -m 444 "$root/dev/urandom" c 1 9
    chroot "$root" /usr/bin/python3 -c 'import torch, mlkube.torch; from torch.utils.data import DataLoader; print("torch", torch.__version__)' >&2
    rm -rf "$root/dev"
  fi
fi

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$layer.tmp" \
  $(cd "$root" && ls -A)
mv "$layer.tmp" "$layer"
echo "$layer"
