package kind

import (
	"fmt"
	"os"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
)

// loadArchives loads every tarball into every node. kind has no public image-load API; this is
// what `kind load image-archive` does: stream the archive into `ctr images import` on the node.
func loadArchives(ns []nodes.Node, tarballs []string) error {
	for _, n := range ns {
		for _, t := range tarballs {
			if err := loadArchive(n, t); err != nil {
				return fmt.Errorf("loading %s into %s: %w", t, n, err)
			}
		}
	}
	return nil
}

func loadArchive(n nodes.Node, tarball string) error {
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	return nodeutils.LoadImageArchive(n, f)
}
