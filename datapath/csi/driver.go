package csi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/version"
)

// The driver reads the pod a mount is for, and its Transform (datapath/agent's marker), by name.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get

// Options configure the driver.
type Options struct {
	// Node is this node's name: the node id, and the node the pods served must run on.
	Node string
	// KubeletDir is the kubelet's directory on the host (its --root-dir), mounted at the same
	// path in the driver's container: the sockets live under it, and every target path.
	KubeletDir string
	// DataRoot is the node's data directory, <data root>/<node> on the host.
	DataRoot string
	// UID and GID own the namespace directories the driver makes: the agent's user, which stores
	// the namespace's objects in them.
	UID, GID int
	// Reader gets pods and Transforms by name from the API server.
	Reader client.Reader
	// Mounter makes and removes the mounts.
	Mounter Mounter
}

// Mounter makes and removes the driver's mounts; the real one is SystemMounter.
type Mounter interface {
	// BindReadOnly bind-mounts the directory source onto target, read-only, nosuid, nodev and
	// noexec, without the mounts under source; on failure it leaves no mount on target.
	BindReadOnly(source, target string) error
	// Unmount removes the mounts on target; a target that is no mount point, or missing, is no
	// error.
	Unmount(target string) error
	// Mounted tells whether target is a mount point.
	Mounted(target string) (bool, error)
}

// Driver serves the CSI Identity and Node services of data.mlkube.io, and the kubelet's plugin
// Registration service that points the kubelet at them.
type Driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedNodeServer
	registerapi.UnimplementedRegistrationServer

	opts Options
	// mu keeps one mount or unmount at a time, so that two publishes of a target cannot both
	// find it unmounted and stack two mounts.
	mu sync.Mutex
}

// New returns the driver for opts.
func New(opts Options) (*Driver, error) {
	switch {
	case opts.Node == "":
		return nil, errors.New("data.mlkube.io: no node name (NODE_NAME)")
	case opts.Reader == nil || opts.Mounter == nil:
		return nil, errors.New("data.mlkube.io: no API reader or mounter")
	}
	if err := CheckKubeletDir(opts.KubeletDir); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(opts.DataRoot) {
		return nil, fmt.Errorf("data.mlkube.io: data root %q is not an absolute path", opts.DataRoot)
	}
	return &Driver{opts: opts}, nil
}

// GetPluginInfo implements csi.IdentityServer.
func (d *Driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: wire.DataDriver, VendorVersion: version.Get()}, nil
}

// GetPluginCapabilities implements csi.IdentityServer: none, as a node-only driver of inline
// ephemeral volumes has no controller service and no topology.
func (d *Driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{}, nil
}

// Probe implements csi.IdentityServer: the driver is ready once it serves.
func (d *Driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// NodeGetInfo implements csi.NodeServer.
func (d *Driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: d.opts.Node}, nil
}

// NodeGetCapabilities implements csi.NodeServer: none, no staging, no stats.
func (d *Driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}

// NodePublishVolume implements csi.NodeServer: it mounts the pod's namespace directory onto the
// target path when decide allows it. A target mounted already is published.
func (d *Driver) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	v, err := parsePublish(req, d.opts.KubeletDir)
	if err != nil {
		return nil, err
	}
	pod, err := get(ctx, d.opts.Reader, "pod", v.namespace, v.pod, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	var t *v1alpha1.Transform
	if ref := transformOf(pod); ref != nil {
		if t, err = get(ctx, d.opts.Reader, "Transform", v.namespace, ref.Name, &v1alpha1.Transform{}); err != nil {
			return nil, err
		}
	}
	if _, err := decide(req, pod, t, d.opts.Node, d.opts.KubeletDir); err != nil {
		slog.Warn("data.mlkube.io refused a mount", "pod", v.namespace+"/"+v.pod, "error", err)
		return nil, err
	}
	if err := d.publish(v); err != nil {
		slog.Error("data.mlkube.io mount failed", "pod", v.namespace+"/"+v.pod, "target", v.target, "error", err)
		return nil, err
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

// get reads the object namespace/name, of kind, into obj: nil when it does not exist, Unavailable when the
// API server does not answer, which the kubelet retries.
func get[T client.Object](ctx context.Context, r client.Reader, kind, namespace, name string, obj T) (T, error) {
	var none T
	err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return none, nil
	case err != nil:
		return none, refuse(codes.Unavailable, "reading %s %s/%s: %v", kind, namespace, name, err)
	}
	return obj, nil
}

// publish mounts v's namespace directory onto v.target.
func (d *Driver) publish(v volume) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	mounted, err := d.opts.Mounter.Mounted(v.target)
	if err != nil {
		return refuse(codes.Internal, "target path %s: %v", v.target, err)
	}
	if mounted {
		return nil
	}
	// The kubelet makes the target's parent only.
	if err := os.Mkdir(v.target, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
		return refuse(codes.Internal, "making target path %s: %v", v.target, err)
	}
	if fi, err := os.Lstat(v.target); err != nil || !fi.IsDir() {
		return refuse(codes.Internal, "target path %s is not a directory (%v)", v.target, err)
	}
	dir, err := openNamespace(d.opts.DataRoot, v.namespace, d.opts.UID, d.opts.GID)
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := d.opts.Mounter.BindReadOnly(dir.path(), v.target); err != nil {
		return refuse(codes.Internal, "mounting the data of namespace %s on %s: %v", v.namespace, v.target, err)
	}
	slog.Info("data.mlkube.io mounted", "pod", v.namespace+"/"+v.pod, "target", v.target)
	return nil
}

// NodeUnpublishVolume implements csi.NodeServer: it unmounts the target and removes it. A target
// that is not mounted, or is gone, is unpublished.
func (d *Driver) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, refuse(codes.InvalidArgument, "the request has no volume ID")
	}
	target := req.GetTargetPath()
	if err := checkTarget(target, filepath.Join(d.opts.KubeletDir, "pods")); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.opts.Mounter.Unmount(target); err != nil {
		return nil, refuse(codes.Internal, "unmounting %s: %v", target, err)
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, refuse(codes.Internal, "removing target path %s: %v", target, err)
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// GetInfo implements the kubelet's registration service: the kubelet finds the driver's
// registration socket and asks it where the CSI socket is.
func (d *Driver) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              wire.DataDriver,
		Endpoint:          SocketPath(d.opts.KubeletDir),
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

// NotifyRegistrationStatus implements the kubelet's registration service: a refusal is the
// kubelet's, logged for the operator; the kubelet tries again when the socket is made again.
func (d *Driver) NotifyRegistrationStatus(_ context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if s.GetPluginRegistered() {
		slog.Info("data.mlkube.io registered with the kubelet")
	} else {
		slog.Error("the kubelet refused to register data.mlkube.io; restart the data-csi container once fixed", "error", s.GetError())
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}
