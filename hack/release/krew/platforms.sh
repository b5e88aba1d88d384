# Sourced by archives.sh and check.sh: in $all the platforms the plugins' krew archives are built
# for, and in $platforms those KREW_PLATFORMS names (all of them when it is unset or empty).
# shellcheck disable=SC2034 # used by the scripts that source it
all=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)
read -r -a platforms <<<"${KREW_PLATFORMS:-${all[*]}}"
for pl in "${platforms[@]}"; do
  [[ " ${all[*]} " == *" $pl "* ]] || { echo "krew: KREW_PLATFORMS names $pl, which is none of ${all[*]}" >&2; exit 2; }
done
