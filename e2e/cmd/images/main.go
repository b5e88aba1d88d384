// Command images builds the project's image tarballs into _output/images, without a container
// engine (see package images). With arguments it builds only the images whose references are
// given; it prints one tarball path per line. -version stamps the release into the Go binaries
// (make images passes VERSION). With -binary it builds one image outside the table from a prebuilt
// binary (hack/cluster/kind-node-image.sh makes the control plane's images so).
//
//	go run ./e2e/cmd/images [-out DIR] [-version v0.1.0] [ref...]
//	go run ./e2e/cmd/images [-out DIR] -binary PATH [-dir DIR] [-base-script SCRIPT] REF
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mlkube/mlkube/internal/images"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	out := fs.String("out", "", "directory for the tarballs (default: the repository's _output/images)")
	version := fs.String("version", "", "release stamped into the images' Go binaries (internal/version); empty leaves them dev")
	var adhoc images.Spec
	fs.StringVar(&adhoc.Binary, "binary", "", "build one image, REF, from this prebuilt static binary")
	fs.StringVar(&adhoc.Dir, "dir", "", "with -binary: the directory the binary goes in (default /)")
	fs.StringVar(&adhoc.BaseLayerScript, "base-script", "", "with -binary: a script printing the path of a base layer tarball")
	if err := fs.Parse(args); err != nil {
		return err
	}
	specs, err := chooseSpecs(images.All(), adhoc, fs.Args())
	if err != nil {
		return err
	}
	b, err := images.RepoBuilder()
	if err != nil {
		return err
	}
	if *out != "" {
		b.OutDir = *out
	}
	b.Version = *version
	for _, s := range specs {
		path, err := b.Build(ctx, s)
		if err != nil {
			return err
		}
		fmt.Println(path)
	}
	return nil
}

// chooseSpecs is the one ad hoc image when adhoc names a binary, else the table's images refs name.
func chooseSpecs(all []images.Spec, adhoc images.Spec, refs []string) ([]images.Spec, error) {
	if adhoc.Binary == "" {
		if adhoc.Dir != "" || adhoc.BaseLayerScript != "" {
			return nil, errors.New("-dir and -base-script go with -binary")
		}
		return selectSpecs(all, refs)
	}
	if len(refs) != 1 {
		return nil, fmt.Errorf("-binary builds one image: give exactly one reference, not %d", len(refs))
	}
	adhoc.Ref = refs[0]
	return []images.Spec{adhoc}, nil
}

// selectSpecs keeps the specs named by refs, in the order given; no refs means all of them.
func selectSpecs(all []images.Spec, refs []string) ([]images.Spec, error) {
	if len(refs) == 0 {
		return all, nil
	}
	byRef := map[string]images.Spec{}
	for _, s := range all {
		byRef[s.Ref] = s
	}
	var out []images.Spec
	for _, r := range refs {
		s, ok := byRef[r]
		if !ok {
			return nil, fmt.Errorf("no image %q in the table", r)
		}
		out = append(out, s)
	}
	return out, nil
}
