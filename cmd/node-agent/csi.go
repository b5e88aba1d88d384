package main

import (
	"errors"
	"fmt"
	"path/filepath"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/datapath/agent"
	datacsi "github.com/mlkube/mlkube/datapath/csi"
)

// checkCSI refuses flags --csi cannot serve with: a kubelet directory that is not an absolute
// path, and a relative data root, since the mounts are made from and onto fixed paths whatever the
// working directory.
func checkCSI(s serving, dataRoot string) error {
	if !s.csi {
		return nil
	}
	if s.prepare {
		return errors.New("--csi and --prepare-data-root: give one; each is a container of its own in the DaemonSet")
	}
	if err := datacsi.CheckKubeletDir(s.kubeletDir); err != nil {
		return fmt.Errorf("--kubelet-dir: %w", err)
	}
	if !filepath.IsAbs(dataRoot) {
		return fmt.Errorf("--data-root=%q: give an absolute path with --csi", dataRoot)
	}
	return nil
}

// runCSI serves the CSI driver data.mlkube.io on the node until SIGTERM. It reads pods and
// Transforms from the API server directly, one GET each per mount, not through a cache: mounts
// are rare, and a watch of every pod would cost the API server and the driver far more.
func runCSI(s serving, opts agent.Options) error {
	ctx, stop, err := start(opts.Node)
	if err != nil {
		return err
	}
	defer stop()
	c, err := client.New(ctrl.GetConfigOrDie(), client.Options{Scheme: scheme.New()})
	if err != nil {
		return fmt.Errorf("API client: %w", err)
	}
	srv, err := datacsi.Listen(datacsi.Options{
		Node:       opts.Node,
		KubeletDir: s.kubeletDir,
		DataRoot:   opts.DataRoot,
		UID:        s.uid,
		GID:        s.gid,
		Reader:     c,
		Mounter:    datacsi.SystemMounter{},
	})
	if err != nil {
		return err
	}
	return srv.Serve(ctx)
}
