package local

import (
	"bytes"
	"text/template"
)

// containerdTemplate is a containerd 1.6 (Debian bookworm) config for one node. Every path is the
// node's own, so several containerds share the host without seeing each other's containers.
var containerdTemplate = template.Must(template.New("containerd").Parse(`version = 2
root = {{printf "%q" .Files.ContainerdRoot}}
state = {{printf "%q" .Files.ContainerdState}}

[grpc]
  address = {{printf "%q" .Files.ContainerdSock}}

[plugins."io.containerd.internal.v1.opt"]
  path = {{printf "%q" (print .Files.Dir "/opt")}}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = {{printf "%q" .SandboxImage}}
  # This VM forbids lowering oom_score_adj; without this every sandbox fails in runc with
  # "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = {{printf "%q" .Files.RuncRoot}}

  # The e2e harness's image registry (hack/cluster/registry.sh) on this machine, at the bridge address the
  # nodes reach it by, speaks plain HTTP; a release installed from it is pulled from there.
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors.{{printf "%q" .Registry}}]
    endpoint = [{{printf "%q" (print "http://" .Registry)}}]

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = {{printf "%q" .Files.CNIConfDir}}
    max_conf_num = 1
`))

// containerdConfig is node f's containerd config; registry is host:port of the harness's plain-HTTP
// registry as the node reaches it.
func containerdConfig(f nodeFiles, sandboxImage, registry string) ([]byte, error) {
	var buf bytes.Buffer
	err := containerdTemplate.Execute(&buf, struct {
		Files        nodeFiles
		SandboxImage string
		Registry     string
	}{f, sandboxImage, registry})
	return buf.Bytes(), err
}
