// Command images builds the project's image tarballs into _output/images, without a container
// engine (see package images). With arguments it builds only the images whose references are
// given; it prints one tarball path per line. -version stamps the release into the Go binaries
// (make images passes VERSION).
//
//	go run ./e2e/cmd/images [-version v0.1.0] [ref...]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mlkube/mlkube/e2e/images"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	version := flag.String("version", "", "release stamped into the images' Go binaries (internal/version); empty leaves them dev")
	flag.Parse()
	if err := run(ctx, *version, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, version string, refs []string) error {
	specs, err := selectSpecs(images.All(), refs)
	if err != nil {
		return err
	}
	b, err := images.RepoBuilder()
	if err != nil {
		return err
	}
	b.Version = version
	for _, s := range specs {
		path, err := b.Build(ctx, s)
		if err != nil {
			return err
		}
		fmt.Println(path)
	}
	return nil
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
