#!/usr/bin/env bash
# Builds the base layer of the Python `code` runtime image (mlkube/runtime-python3.11:dev) from
# Debian's packages, because this project's machines can pull no image: the files of
# python3.11-minimal, libpython3.11-minimal and libpython3.11-stdlib (without docs), a
# /usr/bin/python3 link, and the shared libraries that ldd reports for the interpreter and its
# extension modules, with the loader; and Debian's pip (with setuptools, wheel and distutils), which
# the runtime runs to install a Transform's spec.code.dependencies into a private directory.
#
# Installs the packages with apt-get when they are missing (needs root). The layer, an
# uncompressed tar, is cached under $MLKUBE_CACHE/runtime-python3.11-<key>/layer.tar, the key
# hashing the packages' versions and this script, so only the first run pays (a few seconds).
#
# usage: hack/python-runtime-image.sh
# prints the path of the layer tarball on stdout.
set -euo pipefail

PYTHON=python3.11
packages=("$PYTHON-minimal" "lib$PYTHON-minimal" "lib$PYTHON-stdlib"
  python3-pip python3-setuptools python3-wheel python3-pkg-resources python3-distutils python3-lib2to3)
CACHE=${MLKUBE_CACHE:-$HOME/.cache/mlkube}

installed() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | grep -q '^ii'; }

missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "python-runtime-image: missing Debian packages ${missing[*]}; as root: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "python-runtime-image: installing ${missing[*]}" >&2
  apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
    { apt-get update >&2 && apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
fi

versions=$(dpkg-query -W -f='${Package}=${Version}:${Architecture}\n' "${packages[@]}")
key=$( { echo "$versions"; cat "$0"; } | sha256sum | cut -c1-16)
dir="$CACHE/runtime-$PYTHON-$key"
layer="$dir/layer.tar"
if [ -f "$layer" ]; then echo "$layer"; exit 0; fi

echo "python-runtime-image: collecting $PYTHON into $layer" >&2
mkdir -p "$dir"
root=$(mktemp -d "$dir/rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

# Debian is usr-merged: keep /bin, /lib, /lib64 as links, so that the loader path compiled into
# every binary (/lib64/ld-linux-x86-64.so.2) resolves as on the host.
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

dpkg -L "${packages[@]}" | sort -u | while read -r f; do
  case "$f" in /usr/share/doc/* | /usr/share/man/* | /usr/share/lintian/* | /usr/share/binfmts/*) continue ;; esac
  if [ -L "$f" ] || [ -f "$f" ]; then copy "$f"; fi
done
ln -sf "$PYTHON" "$root/usr/bin/python3"

# Shared libraries of the interpreter and of every extension module, and the loader.
libs=$(find "/usr/bin/$PYTHON" "/usr/lib/$PYTHON/lib-dynload" -type f \( -name '*.so' -o -perm -u+x \) \
  -exec ldd {} + 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' | sort -u)
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

# Sanity check before caching: the collected interpreter runs on its own.
if [ "$(id -u)" = 0 ]; then
  chroot "$root" /usr/bin/python3 -c 'import hashlib, json, zlib, ssl, sqlite3, encodings.idna' >&2
  chroot "$root" /usr/bin/python3 -m pip --version >&2
fi

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$layer.tmp" \
  $(cd "$root" && ls -A)
mv "$layer.tmp" "$layer"
echo "$layer"
