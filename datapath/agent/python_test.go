package agent

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/access"
)

// python is Debian's interpreter, which the Python client is built for (python/, Makefile).
const python = "/usr/bin/python3"

// TestPythonClient runs the Python client's tests of a real agent (python/tests/test_real_agent.py)
// against this package's agent, so the client is checked against the API it calls and not only
// against its own fake of it.
func TestPythonClient(t *testing.T) {
	if err := exec.Command(python, "-c", "import pytest, urllib3, websockets").Run(); err != nil {
		t.Skipf("%s with pytest, urllib3 and websockets is needed (hack/build/install-deps.sh): %v", python, err)
	}
	const token = "python-client"
	f := &rbac{allowed: map[string]map[string]bool{}}
	use := func(name string) access.Request {
		return access.Request{Verb: access.VerbUse, Namespace: "default", Resource: access.ResourceTransform, Name: name}
	}
	f.grant(token, use("tag"), use("wstag"), use("bad"), use("nope"), dataAccess(readData, "default"), dataAccess(writeData, "default"),
		dataAccess(wire.VerbList, "default"), dataAccess(wire.VerbDelete, "default"))
	f.grant("nobody") // a caller that may do nothing
	// One stream at a time, so that the client's retries of a 429 meet the agent's own refusal.
	e := newEnv(t, func(o *Options) { o.Access = f; o.MaxStreams = 1 })
	e.addTransform("tag", etlv1alpha1.CommHPush, "", tag("tag"))
	e.addTransform("wstag", etlv1alpha1.CommWS, "", tag("wstag"))
	e.addTransform("bad", etlv1alpha1.CommHPush, "", fail("cannot decode this object"))

	cmd := exec.Command(python, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests/test_real_agent.py")
	cmd.Dir = "../../python"
	cmd.Env = append(os.Environ(), "MLKUBE_TEST_AGENT_URL="+e.url, "MLKUBE_TEST_AGENT_TOKEN="+token,
		"MLKUBE_TEST_AGENT_NODE="+testNode)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s -m pytest tests/test_real_agent.py: %v\n%s", python, err, out)
	}
	if strings.Contains(string(out), "skipped") {
		t.Fatalf("the Python tests of the real agent were skipped:\n%s", out)
	}
	t.Logf("%s", out)
}
