package csi

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/api/wire"
)

// serve serves the driver on opts's sockets until the test ends, then checks that it stopped
// cleanly and removed its sockets.
func serve(t *testing.T, opts Options) {
	t.Helper()
	s, err := Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		for _, p := range []string{SocketPath(opts.KubeletDir), RegistrationSocketPath(opts.KubeletDir)} {
			if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("socket %s left behind after Serve returned: %v", p, err)
			}
		}
	})
}

// dial connects to the Unix socket path as the kubelet does.
func dial(t *testing.T, path string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestKubeletRoundTrip: the kubelet finds the driver through its registration socket, reaches the
// CSI socket it names, and publishes and unpublishes the fqn transformer's volume over gRPC; the
// driver mounts the namespace's directory, which it makes for the agent's user.
func TestKubeletRoundTrip(t *testing.T) {
	m := newFakeMounter()
	opts := testOptions(t, m, testPod(), testTransformObj())
	if os.Geteuid() == 0 {
		opts.UID, opts.GID = 65532, 65532
	}
	serve(t, opts)
	ctx := context.Background()

	info, err := registerapi.NewRegistrationClient(dial(t, RegistrationSocketPath(opts.KubeletDir))).GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	if info.Type != registerapi.CSIPlugin || info.Name != wire.DataDriver || info.Endpoint != SocketPath(opts.KubeletDir) || strings.Join(info.SupportedVersions, ",") != "1.0.0" {
		t.Fatalf("GetInfo: %+v, want a CSIPlugin %s at %s supporting 1.0.0", info, wire.DataDriver, SocketPath(opts.KubeletDir))
	}

	conn := dial(t, info.Endpoint)
	id, node := csi.NewIdentityClient(conn), csi.NewNodeClient(conn)
	if pi, err := id.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{}); err != nil || pi.Name != wire.DataDriver || pi.VendorVersion == "" {
		t.Errorf("GetPluginInfo: %+v, %v", pi, err)
	}
	if caps, err := id.GetPluginCapabilities(ctx, &csi.GetPluginCapabilitiesRequest{}); err != nil || len(caps.Capabilities) != 0 {
		t.Errorf("GetPluginCapabilities: %+v, %v; want none (no controller service)", caps, err)
	}
	if _, err := id.Probe(ctx, &csi.ProbeRequest{}); err != nil {
		t.Errorf("Probe: %v", err)
	}
	if ni, err := node.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{}); err != nil || ni.NodeId != testNode {
		t.Errorf("NodeGetInfo: %+v, %v; want node %s", ni, err, testNode)
	}
	if nc, err := node.NodeGetCapabilities(ctx, &csi.NodeGetCapabilitiesRequest{}); err != nil || len(nc.Capabilities) != 0 {
		t.Errorf("NodeGetCapabilities: %+v, %v; want none", nc, err)
	}
	if _, err := node.NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("NodeStageVolume: %v, want Unimplemented", err)
	}

	req := publishRequest(opts.KubeletDir, testPod())
	makeParent(t, req.TargetPath)
	for range 2 { // the kubelet may publish again, after its restart
		if _, err := node.NodePublishVolume(ctx, req); err != nil {
			t.Fatalf("NodePublishVolume: %v", err)
		}
	}
	nsDir := filepath.Join(opts.DataRoot, testNS)
	if got := m.mounts[req.TargetPath]; got != nsDir || m.binds != 1 {
		t.Fatalf("mounted %q on the target in %d binds, want %s once", got, m.binds, nsDir)
	}
	fi, err := os.Stat(nsDir)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); fi.Mode() != fs.ModeDir|0o755 || int(st.Uid) != opts.UID || int(st.Gid) != opts.GID {
		t.Errorf("namespace directory %v owned by %d:%d, want drwxr-xr-x owned by %d:%d", fi.Mode(), st.Uid, st.Gid, opts.UID, opts.GID)
	}

	other := publishRequest(opts.KubeletDir, testPod())
	other.VolumeContext[keyPodName] = "someone-else"
	if _, err := node.NodePublishVolume(ctx, other); status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("NodePublishVolume of a pod the API server does not know: %v, want PermissionDenied", err)
	}

	for range 2 { // idempotent: the second finds nothing to do
		if _, err := node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: req.VolumeId, TargetPath: req.TargetPath}); err != nil {
			t.Fatalf("NodeUnpublishVolume: %v", err)
		}
	}
	if _, ok := m.mounts[req.TargetPath]; ok {
		t.Error("the target is still mounted")
	}
	if _, err := os.Lstat(req.TargetPath); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the target is still there: %v", err)
	}
	if _, err := node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: req.VolumeId, TargetPath: "/etc"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("NodeUnpublishVolume of /etc: %v, want InvalidArgument", err)
	}
}

// TestListenSockets: a socket an earlier run left is replaced; anything else on a socket's path
// is refused and left alone; a kubelet directory too deep for a socket's path is refused.
func TestListenSockets(t *testing.T) {
	opts := testOptions(t, newFakeMounter())
	reg := RegistrationSocketPath(opts.KubeletDir)
	if err := os.MkdirAll(filepath.Dir(reg), 0o750); err != nil {
		t.Fatal(err)
	}
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: reg, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	serve(t, opts)

	opts = testOptions(t, newFakeMounter())
	sock := SocketPath(opts.KubeletDir)
	if err := os.MkdirAll(sock, 0o750); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(opts); err == nil || !strings.Contains(err.Error(), sock) {
		t.Errorf("Listen with a directory at %s: %v, want an error naming it", sock, err)
	}
	if _, err := os.Stat(sock); err != nil {
		t.Errorf("the directory in the socket's way was removed: %v", err)
	}

	opts.KubeletDir = "/" + strings.Repeat("k", 80)
	if _, err := Listen(opts); err == nil || !strings.Contains(err.Error(), "longer than the 107 bytes") {
		t.Errorf("Listen under a deep kubelet directory: %v, want the socket path's limit", err)
	}
}

// TestPublishWithoutTheAPIServer: an API server that does not answer is Unavailable, which the
// kubelet retries, not a refusal of the pod; nothing is mounted.
func TestPublishWithoutTheAPIServer(t *testing.T) {
	m := newFakeMounter()
	opts := testOptions(t, m)
	opts.Reader = fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("connection refused")
		},
	}).Build()
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	req := publishRequest(opts.KubeletDir, testPod())
	makeParent(t, req.TargetPath)
	_, err = d.NodePublishVolume(context.Background(), req)
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "reading pod tenant-a/") {
		t.Errorf("NodePublishVolume: %v, want Unavailable naming the pod", err)
	}
	if m.binds != 0 {
		t.Errorf("%d mounts", m.binds)
	}
}

// TestAPanicIsAnInternalError: a handler that panics answers Internal and the driver goes on,
// with the panic counted; gRPC itself would let it end the process.
func TestAPanicIsAnInternalError(t *testing.T) {
	p := newPanics()
	_, err := recovering(p)(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/csi.v1.Node/NodePublishVolume"},
		func(context.Context, any) (any, error) { panic("boom") })
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "NodePublishVolume") {
		t.Errorf("err = %v, want Internal naming the call", err)
	}
	var m dto.Metric
	if err := p.Count.WithLabelValues("/csi.v1.Node/NodePublishVolume").Write(&m); err != nil || m.GetCounter().GetValue() != 1 {
		t.Errorf("panics counted: %v, %v; want 1", m.GetCounter().GetValue(), err)
	}
	resp, err := recovering(p)(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/x"},
		func(context.Context, any) (any, error) { return "ok", nil })
	if resp != "ok" || err != nil {
		t.Errorf("a call that does not panic: %v, %v", resp, err)
	}
}
