// Command modproxy writes a Go module proxy directory holding one version of the module in a source
// tree, laid out as the module proxy protocol says (<module>/@v/list, .info, .mod, .zip), for
// GOPROXY=file://OUT. go-install-check.sh serves the tree under test with it, so that `go install
// github.com/mlkube/mlkube/cmd/kubectl-etl@VERSION` is tested before VERSION is tagged and
// published. The zip is made by golang.org/x/mod/zip, the code the go command checks zips with:
// nested modules, vendor directories and files a module cannot hold are left out, as the real
// proxy leaves them out.
//
// usage: go run ./hack/release/krew/modproxy -src DIR -version vX.Y.Z -out DIR
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func main() {
	src := flag.String("src", "", "the module's root directory (holds go.mod)")
	version := flag.String("version", "", "the version the proxy offers the module as, vX.Y.Z")
	out := flag.String("out", "", "the proxy directory to write (GOPROXY=file://OUT)")
	flag.Parse()
	if err := write(*src, *version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

// write puts the module in src into out as version.
func write(src, version, out string) error {
	if src == "" || version == "" || out == "" {
		return errors.New("-src, -version and -out are all required")
	}
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return fmt.Errorf("the module's go.mod: %w", err)
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return fmt.Errorf("%s/go.mod names no module", src)
	}
	mv := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return err
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, escaped, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	z, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		return err
	}
	if err := modzip.CreateFromDir(z, mv, src); err != nil {
		z.Close()
		return fmt.Errorf("zipping %s as %s@%s: %w", src, path, version, err)
	}
	if err := z.Close(); err != nil {
		return err
	}
	info, err := json.Marshal(struct{ Version string }{version})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  gomod,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
