package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/mlkube/mlkube/internal/repo"
)

// Envtest is the API server of the integration suites (a real kube-apiserver and etcd) with
// mlkube's CRDs and its webhook configurations, found under the repository root root. The
// webhooks point at envtest's local serving port by the name localhost: the rotator's
// certificates carry DNS names only.
func Envtest(root string) *envtest.Environment {
	return &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "manifests", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths:                        []string{filepath.Join(root, "manifests", "webhook", "manifests.yaml")},
			LocalServingHost:             "localhost",
			LocalServingHostExternalName: "localhost",
		},
	}
}

// HaveEnvtest reports whether the integration tests can run (KUBEBUILDER_ASSETS names the API
// server's binaries). Without it they are skipped, unless MLKUBE_REQUIRE_ENVTEST is set (`make
// test`), which makes it exit the test binary with an error rather than pass without testing.
func HaveEnvtest() bool {
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		return true
	}
	if os.Getenv("MLKUBE_REQUIRE_ENVTEST") != "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set; run `make test`")
		os.Exit(1)
	}
	fmt.Println("skipping the integration tests: KUBEBUILDER_ASSETS is not set (`make test` sets it)")
	return false
}

// RunWithEnvtest is the body of an integration suite's TestMain: it starts env, runs setup (with
// a context that ends after the tests) and then the tests, stops env, and returns the exit code.
// Without envtest's binaries it returns 0 at once (see HaveEnvtest).
func RunWithEnvtest(m *testing.M, env *envtest.Environment, setup func(ctx context.Context, env *envtest.Environment) error) int {
	if !HaveEnvtest() {
		return 0
	}
	if _, err := env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "starting envtest: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := setup(ctx, env); err != nil {
		fmt.Fprintf(os.Stderr, "setting up the suite: %v\n", err)
		return 1
	}
	return m.Run()
}

// KueueCRDs are the files of Kueue's CRDs that the MxJob integration needs (Workloads,
// ResourceFlavors, WorkloadPriorityClasses), from the Kueue module go.mod pins, so that the
// integration suite's API server serves Kueue's API as the version mlkube builds with.
func KueueCRDs() ([]string, error) {
	dir, err := repo.ModuleDir(context.Background(), "sigs.k8s.io/kueue")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, kind := range []string{"workloads", "resourceflavors", "workloadpriorityclasses"} {
		files = append(files, filepath.Join(dir, "config", "components", "crd", "bases", "kueue.x-k8s.io_"+kind+".yaml"))
	}
	return files, nil
}
