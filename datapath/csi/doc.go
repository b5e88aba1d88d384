// Package csi serves the CSI node plugin data.mlkube.io (wire.DataDriver): it mounts an fqn
// transformer's namespace directory of the node's data root, read-only, into the transformer's pod.
//
// Why a CSI volume: an fqn transformer reads the objects of its namespace from the node's disk, so
// its pod needs that directory. A hostPath volume would give it, but the baseline and restricted
// Pod Security Standards forbid hostPath, so a namespace running fqn would have to be privileged,
// where its users could run any pod as root on the node. restricted allows csi volumes: with this
// driver the transformer pod stays in its tenant's namespace, which keeps enforcing restricted at
// the API server, and the privilege is in the driver's container, in mlkube's own namespace, where
// no tenant code runs (docs/design/tenant-isolation.md, option B).
//
// Any pod may name the driver in a csi volume, so the driver decides who gets what, from what the
// kubelet tells it and the API server, never from what the pod's author wrote. NodePublishVolume
// mounts only when all of these hold (decide, a pure function):
//
//   - the volume is an inline ephemeral one (csi.storage.k8s.io/ephemeral) and read-only;
//   - the volume context carries nothing but the kubelet's csi.storage.k8s.io/* keys, so users
//     cannot steer the driver;
//   - the pod the kubelet names (namespace, name) exists with the UID the kubelet gave, on this
//     node;
//   - its controller is a Transform of etl.mlkube.io with that UID and spec.argument fqn, and the
//     pod's name is the Transform's transformer pod name on this node
//     (v1alpha1.TransformerPodName).
//
// Then it mounts <data root>/<pod namespace>, the namespace taken from the kubelet. The directory is
// made when missing (0755, owned by the agent's user, as the agent makes it) and opened with
// O_PATH|O_NOFOLLOW under the data root; the open descriptor (/proc/self/fd/<n>) is bind-mounted,
// so no symlink or rename can swap the directory between the check and the mount. The mount is
// then made read-only, nosuid, nodev and noexec, without the data root's submounts.
//
// The driver registers itself with the kubelet through the plugin registration API (no
// node-driver-registrar sidecar): a Registration server on
// <kubelet dir>/plugins_registry/data.mlkube.io-reg.sock points the kubelet at the CSI socket
// <kubelet dir>/plugins/data.mlkube.io/csi.sock. Both are host paths: the DaemonSet mounts the
// kubelet directory at the same path in the driver's container.
package csi
