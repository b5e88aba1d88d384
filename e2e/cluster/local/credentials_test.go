package local

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
)

func TestTokensFile(t *testing.T) {
	got, err := tokensFile([]credential{{User: "admin", Token: "t1"}, {User: "system:node:n-1", Token: "t2"}})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(got))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"t1", "admin", "admin", "system:masters"}, {"t2", "system:node:n-1", "system:node:n-1", "system:masters"}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
}

func TestNewCredentialIsRandom(t *testing.T) {
	a, errA := newCredential("x")
	b, errB := newCredential("x")
	if errA != nil || errB != nil || a.Token == b.Token || len(a.Token) != 32 {
		t.Errorf("tokens %q, %q (%v, %v): want two distinct 32-hex-digit tokens", a.Token, b.Token, errA, errB)
	}
}

// TestKubeconfigLoads: client-go must read back the server, CA and token we wrote.
func TestKubeconfigLoads(t *testing.T) {
	b, err := kubeconfig("https://10.250.0.1:6443", []byte("CA"), credential{User: "admin", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://10.250.0.1:6443" || string(cfg.CAData) != "CA" || cfg.BearerToken != "tok" {
		t.Errorf("rest config = host %q, CA %q, token %q", cfg.Host, cfg.CAData, cfg.BearerToken)
	}
}
