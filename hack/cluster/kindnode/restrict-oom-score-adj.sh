#!/bin/sh
# Runs before the node's containerd starts (containerd.service.d/10-mlkube.conf). Lowering a
# process's oom_score_adj needs CAP_SYS_RESOURCE; where the node runs without it (a sandbox whose
# root lacks it in the bounding set, so hack/cluster/engine.sh's runc wrapper removed it), every pod
# sandbox fails "can't get final child's PID from pipe" unless containerd leaves oom_score_adj
# alone, as kind's entrypoint has it do for rootless nodes. Elsewhere the config is left as kind
# ships it.
set -eu
bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
if [ $(( (0x$bnd >> 24) & 1 )) -eq 0 ]; then
  sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' /etc/containerd/config.toml
fi
