package csi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/panics"
	"github.com/mlkube/mlkube/internal/version"
)

// SocketPath is the CSI socket under the kubelet directory kubeletDir, where the kubelet calls
// the Identity and Node services.
func SocketPath(kubeletDir string) string {
	return filepath.Join(kubeletDir, "plugins", wire.DataDriver, "csi.sock")
}

// RegistrationSocketPath is the registration socket under kubeletDir: the kubelet watches
// plugins_registry and registers each plugin whose socket appears there.
func RegistrationSocketPath(kubeletDir string) string {
	return filepath.Join(kubeletDir, "plugins_registry", wire.DataDriver+"-reg.sock")
}

// maxSocketPath is the longest path a Unix socket can be bound to (sun_path, less its NUL).
const maxSocketPath = 107

// CheckKubeletDir refuses a kubelet directory that is not a clean absolute path, or under which
// the sockets' paths would be too long to bind.
func CheckKubeletDir(dir string) error {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return fmt.Errorf("kubelet directory %q: give the clean absolute path of the kubelet's --root-dir, such as /var/lib/kubelet", dir)
	}
	for _, p := range []string{SocketPath(dir), RegistrationSocketPath(dir)} {
		if len(p) > maxSocketPath {
			return fmt.Errorf("kubelet directory %q: the socket %s would be longer than the %d bytes of a Unix socket's path", dir, p, maxSocketPath)
		}
	}
	return nil
}

// Server is the driver listening on its two sockets.
type Server struct {
	opts                      Options
	csi, registration         *grpc.Server
	csiListen, registerListen net.Listener
	panics                    *panics.Reporter
}

// newPanics reports the driver's recovered panics in its log; the count is for tests.
func newPanics() *panics.Reporter {
	return &panics.Reporter{Log: slog.Default(), Count: prometheus.NewCounterVec(
		prometheus.CounterOpts{Name: "mlkube_csi_panics_total", Help: "panics the data.mlkube.io driver recovered, by call"}, []string{"goroutine"})}
}

// recovering answers a call whose handler panicked with Internal, the panic logged: gRPC does not
// recover handlers' panics, and one would end the driver and every mount the kubelet asks of it
// on the node.
func recovering(p *panics.Reporter) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		if perr := p.Call(info.FullMethod, func() { resp, err = handler(ctx, req) }); perr != nil {
			return nil, status.Errorf(codes.Internal, "data.mlkube.io: %s: %v", info.FullMethod, perr)
		}
		return resp, err
	}
}

// Listen makes the driver for opts and binds its sockets: the CSI socket first, so that it is
// there when the kubelet, seeing the registration socket, calls it. Stale sockets of an earlier
// run are removed.
func Listen(opts Options) (*Server, error) {
	d, err := New(opts)
	if err != nil {
		return nil, err
	}
	p := newPanics()
	s := &Server{opts: opts, panics: p,
		csi: grpc.NewServer(grpc.UnaryInterceptor(recovering(p))), registration: grpc.NewServer(grpc.UnaryInterceptor(recovering(p)))}
	csi.RegisterIdentityServer(s.csi, d)
	csi.RegisterNodeServer(s.csi, d)
	registerapi.RegisterRegistrationServer(s.registration, d)
	if s.csiListen, err = listen(SocketPath(opts.KubeletDir)); err != nil {
		return nil, err
	}
	if s.registerListen, err = listen(RegistrationSocketPath(opts.KubeletDir)); err != nil {
		s.csiListen.Close()
		return nil, err
	}
	return s, nil
}

// listen binds the Unix socket path, only root may connect: the kubelet. It makes the socket's
// directory, and removes a socket left by a run that did not close it; anything else there is
// refused, not removed.
func listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("data.mlkube.io socket directory: %w", err)
	}
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.Mode().Type() != fs.ModeSocket:
		return nil, fmt.Errorf("data.mlkube.io socket %s: something else than a socket is there (%s); remove it", path, fi.Mode().Type())
	case err == nil:
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("data.mlkube.io socket %s, left by an earlier run: %w", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("data.mlkube.io socket %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("data.mlkube.io socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("data.mlkube.io socket %s: %w", path, err)
	}
	return l, nil
}

// Serve serves until ctx ends, then stops, letting calls in progress finish, and removes the
// sockets: the kubelet unregisters the driver when its registration socket goes.
func (s *Server) Serve(ctx context.Context) error {
	slog.Info("data.mlkube.io serving", "version", version.Get(), "node", s.opts.Node, "dataRoot", s.opts.DataRoot,
		"csiSocket", s.csiListen.Addr().String(), "registrationSocket", s.registerListen.Addr().String())
	served := make(chan error, 2)
	for name, serve := range map[string]func() error{
		"csi server":          func() error { return s.csi.Serve(s.csiListen) },
		"registration server": func() error { return s.registration.Serve(s.registerListen) },
	} {
		s.panics.GoSafe(name, func() {
			err := errors.New(name + " panicked (logged)")
			defer func() { served <- err }() // runs before the panic is recovered, so Serve ends
			err = serve()
		})
	}
	var err error
	pending := 2
	select {
	case err = <-served:
		err = fmt.Errorf("data.mlkube.io stopped serving: %w", err)
		pending--
	case <-ctx.Done():
	}
	s.registration.GracefulStop()
	s.csi.GracefulStop()
	// Both servers must have returned: one whose goroutine had not yet called Serve when ctx
	// ended does so now, finds the server stopped and only then closes its listener, which
	// removes its socket.
	for ; pending > 0; pending-- {
		// After the stop a server returns nil, or ErrServerStopped if it started late.
		if e := <-served; err == nil && e != nil && !errors.Is(e, grpc.ErrServerStopped) {
			err = fmt.Errorf("data.mlkube.io stopped serving: %w", e)
		}
	}
	return err
}
