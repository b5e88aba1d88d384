// Package version holds mlkube's release, the one version every binary of a build reports: the
// plugins' `version` command, the manager's and the node agent's --version and startup log.
// The Makefile stamps it (VERSION, see there) into every binary it builds, images included:
//
//	go build -ldflags "-X github.com/mlkube/mlkube/internal/version.Version=v0.1.0" ./cmd/...
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is the release this binary was built as; "dev" unless stamped or installed with
// `go install …@version` (see Get).
var Version = "dev"

// Get returns the binary's version: the stamped Version, else the module version `go install
// github.com/mlkube/mlkube/cmd/…@v0.1.0` records in the binary, else "dev".
func Get() string {
	info, _ := debug.ReadBuildInfo()
	return resolve(Version, info)
}

// resolve prefers a stamped version to the module's: a build from a checkout records "(devel)" or
// a pseudo-version of the checkout, which says less than the Makefile's VERSION.
func resolve(stamped string, info *debug.BuildInfo) string {
	if stamped != "dev" && stamped != "" {
		return stamped
	}
	if info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// String is what a binary's --version prints: its name, version, Go release and platform, e.g.
// "manager v0.1.0 (go1.26.8 linux/amd64)".
func String(name string) string {
	return fmt.Sprintf("%s %s (%s %s/%s)", name, Get(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// Asked reports whether args ask for the version alone (--version or -version): io-shim and
// runtime-python answer it before their own flags, whose parsing they leave to their packages.
func Asked(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-version")
}
