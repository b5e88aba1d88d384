package suite

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The whole suite runs once, on the local cluster (make e2e). Another cluster provider (make
// e2e-kind) or another way of installing (make e2e-release: the release's bundle, then its chart)
// changes only some of what the suite exercises, so those runs repeat the tests that exercise what
// they change: MLKUBE_E2E_SCOPE names one of these lists. Repeating all 34 tests three more times
// took CI past its hour without testing anything new. No scope trains the PyTorch model: its
// image is most of what a cluster loads, and what it exercises of a provider (pods reaching each
// other across nodes, workers reading their node's agent) the scoped MxJob tests cover.
var scopes = map[string][]string{
	// What a provider changes: the node image and container runtime, the pod network and Services,
	// node names and addresses, hostPath data roots, port-forwarding through its API server.
	"provider": {
		"TestManagerReadyWithCertControllerCertificates", // the API server reaches the webhooks' Service
		"TestWebhooksThroughTheAPIServer",
		"TestWalkthroughAsNamespaceEditor",                       // objects on every node's data root, forwarded between agents, port-forwarded, restricted pods
		"TestDataPathAccessFollowsRBAC",                          // TokenReview and SubjectAccessReview from the agents
		"TestDataPathFromOutsideTheCluster",                      // port-forward from this machine
		"TestTransformOneReadyPodPerNodeForEachCommunication",    // every communication type on every node
		"TestTransformRunResumesAfterItsAgentIsDeleted",          // an agent pod restarting on a data root it owns
		"TestMxJobDistRendezvousSucceeds",                        // pod to pod across nodes through headless Services
		"TestMxJobWorkersReadTheirDatasetThroughTheirNodesAgent", // each worker reaching its own node's agent through the internal-traffic Service
		"TestHostileTenant",                                      // the agents' and the manager's bounds under the provider's network and cgroups (about 2 min)
		"TestFQNInRestrictedNamespace",                           // the data.mlkube.io driver under the provider's kubelet and mount propagation
		"TestTransformRunFromAnObjectStore",                      // the agents reaching a store through the provider's Services and DNS
		"TestMxJobsQueuedByKueueRunOneAtATimeWithinQuota",        // Kueue's image, webhooks and scheduler on the provider
		// Not here, though they ran here once: a store run resuming after its agent's restart
		// (the two tests above it show each half on the provider) and Kueue's preemption (Kueue's
		// own logic and mlkube's suspend, nothing a provider changes). Together 80 s of every run.
	},
	// What an install changes: the manifests (RBAC, roles for users, webhook configuration, the
	// manager's replicas and budget, the agent's DaemonSet) and images pulled by digest.
	"install": {
		"TestManagerReadyWithCertControllerCertificates",
		"TestWebhooksThroughTheAPIServer",
		"TestFailurePolicyFailWithoutTheManager",
		"TestLosingAManagerPodRefusesNoCreate",
		"TestWalkthroughAsNamespaceEditor", // the aggregated user roles and the port-forward role
		"TestDataPathAccessFollowsRBAC",    // the agent's own RBAC
		"TestTransformCodeFormRunsOnEveryNode",
		"TestTransformOneReadyPodPerNodeForEachCommunication", // the io shim's image
		"TestTransformRunResumesAfterItsAgentIsDeleted",       // the agent's init container
		"TestMxJobDistRendezvousSucceeds",
		"TestFQNInRestrictedNamespace", // the CSIDriver object, data-csi and the kubelet directory
	},
	// What installing with the chart changes beyond the release's bundle: Helm applies the objects.
	// Which objects is not in question (make e2e-release checks, as make verify does for the dev
	// bundle, that the chart with the release's values renders the bundle's objects), so this run
	// checks that what Helm applied comes up and serves: certificates and webhooks, the users'
	// roles and every node's agent.
	// make e2e's second part: Kueue installed on the cluster the rest of the suite ran on without it.
	"kueue": {
		"TestMxJobsQueuedByKueueRunOneAtATimeWithinQuota",
		"TestMxJobPreemptedByAHigherPriorityResumesAndSucceeds",
	},
	"chart": {
		"TestManagerReadyWithCertControllerCertificates",
		"TestWebhooksThroughTheAPIServer",
		"TestWalkthroughAsNamespaceEditor",
		"TestDataPathAccessFollowsRBAC",
	},
}

// applyScope turns MLKUBE_E2E_SCOPE into go test's -run, after checking that every scope names
// tests this package has: a renamed test would otherwise drop out of the runs silently. It runs
// before the suite decides whether a cluster is there, so `go test ./e2e/suite` checks the lists.
func applyScope() error {
	tests, err := suiteTests(".")
	if err != nil {
		return err
	}
	if err := checkScopes(scopes, tests); err != nil {
		return err
	}
	name := os.Getenv("MLKUBE_E2E_SCOPE")
	if name == "" {
		return nil
	}
	run, err := scopeRun(scopes, name)
	if err != nil {
		return err
	}
	flag.Parse()
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		return fmt.Errorf("MLKUBE_E2E_SCOPE=%s and -run %q both select tests: unset one (E2E_RUN sets -run)", name, f.Value.String())
	}
	return flag.Set("test.run", run)
}

// scopeRun is the -run pattern of one scope.
func scopeRun(scopes map[string][]string, name string) (string, error) {
	tests, ok := scopes[name]
	if !ok {
		known := make([]string, 0, len(scopes))
		for k := range scopes {
			known = append(known, k)
		}
		sort.Strings(known)
		return "", fmt.Errorf("MLKUBE_E2E_SCOPE=%q is not a scope: use one of %s, or leave it empty for the whole suite", name, strings.Join(known, ", "))
	}
	return "^(" + strings.Join(tests, "|") + ")$", nil
}

// notPreloaded are tests whose images the scoped runs leave out of the clusters they load
// (MLKUBE_E2E_NO_PRELOAD in hack/cluster/e2e-kind.sh, the preload list of e2e-release.sh).
var notPreloaded = map[string]bool{"TestMxJobTrainsWithPyTorchOnItsDataset": true}

// checkScopes says which scoped names are not tests of the package, are listed twice, or are
// tests whose images a scoped run does not load.
func checkScopes(scopes map[string][]string, tests map[string]bool) error {
	var bad []string
	for scope, names := range scopes {
		seen := map[string]bool{}
		for _, n := range names {
			switch {
			case notPreloaded[n]:
				bad = append(bad, fmt.Sprintf("scope %s names %s, whose image scoped runs do not load: load it in hack/cluster/e2e-kind.sh and e2e-release.sh first", scope, n))
			case !tests[n]:
				bad = append(bad, fmt.Sprintf("scope %s names %s, which is not a test of e2e/suite", scope, n))
			case seen[n]:
				bad = append(bad, fmt.Sprintf("scope %s names %s twice", scope, n))
			}
			seen[n] = true
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("e2e/suite scope_test.go: %s", strings.Join(bad, "; "))
	}
	return nil
}

// suiteTests are the names of the Test functions in dir's _test.go files.
func suiteTests(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	tests := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" {
				tests[fn.Name.Name] = true
			}
		}
	}
	if len(tests) == 0 {
		return nil, fmt.Errorf("no Test functions in %s", dir)
	}
	return tests, nil
}

// unitTests are the suite's tests that need no cluster: they run when there is none.
const unitTests = "^TestScope"

func TestScopeListsNameTestsOfTheSuite(t *testing.T) {
	tests := map[string]bool{"TestA": true, "TestB": true}
	if err := checkScopes(map[string][]string{"x": {"TestA", "TestB"}}, tests); err != nil {
		t.Fatalf("a scope of existing tests: %v", err)
	}
	err := checkScopes(map[string][]string{"x": {"TestA", "TestGone", "TestA"}}, tests)
	if err == nil || !strings.Contains(err.Error(), "scope x names TestGone, which is not a test") || !strings.Contains(err.Error(), "names TestA twice") {
		t.Fatalf("a scope naming a missing test and one twice: %v", err)
	}
	tests["TestMxJobTrainsWithPyTorchOnItsDataset"] = true
	err = checkScopes(map[string][]string{"y": {"TestMxJobTrainsWithPyTorchOnItsDataset"}}, tests)
	if err == nil || !strings.Contains(err.Error(), "whose image scoped runs do not load") {
		t.Fatalf("a scope naming the PyTorch test: %v", err)
	}
	real, err := suiteTests(".")
	if err != nil {
		t.Fatal(err)
	}
	if !real["TestWalkthroughAsNamespaceEditor"] || real["TestMain"] || real["applyScope"] {
		t.Fatalf("suiteTests found %v", real)
	}
}

func TestScopeRunMatchesItsTestsOnly(t *testing.T) {
	run, err := scopeRun(map[string][]string{"x": {"TestA", "TestB"}}, "x")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(run)
	for name, want := range map[string]bool{"TestA": true, "TestB": true, "TestAB": false, "TestC": false} {
		if re.MatchString(name) != want {
			t.Errorf("-run %s matches %s: %v, want %v", run, name, !want, want)
		}
	}
	if _, err := scopeRun(map[string][]string{"x": nil, "y": nil}, "z"); err == nil || !strings.Contains(err.Error(), `"z" is not a scope: use one of x, y`) {
		t.Fatalf("an unknown scope: %v", err)
	}
}
