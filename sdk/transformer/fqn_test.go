package transformer_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlkube/mlkube/sdk/transformer"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

var fqnMechanisms = []transformertest.Mechanism{transformertest.HPushFQN, transformertest.HPullFQN, transformertest.WSFQN}

func TestFQNRefusesPathsOutsideRoot(t *testing.T) {
	s := transformertest.NewServer(t, echo)
	root := s.FQNRoot
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	must(t, os.WriteFile(secret, []byte("secret"), 0o600))
	must(t, os.Symlink(secret, filepath.Join(root, "file-link")))
	must(t, os.Symlink(outside, filepath.Join(root, "dir-link")))
	must(t, os.Mkdir(filepath.Join(root, "dir"), 0o700))
	relOut, err := filepath.Rel(root, secret)
	if err != nil {
		t.Fatal(err)
	}
	inside, err := s.PutFile([]byte("inside"))
	if err != nil {
		t.Fatal(err)
	}
	// os.Root follows relative symlinks that stay inside the root; it refuses
	// absolute ones, wherever they point.
	must(t, os.Symlink(filepath.Base(inside), filepath.Join(root, "inner-link")))
	must(t, os.Symlink(inside, filepath.Join(root, "absolute-link")))

	cases := map[string]struct {
		fqn        string
		wantStatus int
	}{
		"relative dotdot":       {fqn: relOut, wantStatus: http.StatusBadRequest},
		"absolute outside":      {fqn: secret, wantStatus: http.StatusBadRequest},
		"absolute dotdot":       {fqn: root + "/../" + filepath.Base(outside) + "/secret", wantStatus: http.StatusBadRequest},
		"symlink out":           {fqn: filepath.Join(root, "file-link"), wantStatus: http.StatusBadRequest},
		"through symlinked dir": {fqn: filepath.Join(root, "dir-link", "secret"), wantStatus: http.StatusBadRequest},
		"directory":             {fqn: filepath.Join(root, "dir"), wantStatus: http.StatusBadRequest},
		"root itself":           {fqn: root, wantStatus: http.StatusBadRequest},
		"absolute symlink":      {fqn: filepath.Join(root, "absolute-link"), wantStatus: http.StatusBadRequest},
		"missing":               {fqn: filepath.Join(root, "missing"), wantStatus: http.StatusNotFound},
		"inside":                {fqn: inside},
		"relative inside":       {fqn: filepath.Base(inside)},
		"symlink inside":        {fqn: filepath.Join(root, "inner-link")},
	}
	for _, m := range fqnMechanisms {
		for name, tc := range cases {
			t.Run(string(m)+"/"+name, func(t *testing.T) {
				got, err := transform(t, s, m, tc.fqn)
				if tc.wantStatus == 0 {
					if err != nil || got != "inside" {
						t.Fatalf("got %q, %v; want inside", got, err)
					}
					return
				}
				re := remote(t, err)
				if m != transformertest.WSFQN && re.Status != tc.wantStatus {
					t.Errorf("status = %d (%q), want %d", re.Status, re.Message, tc.wantStatus)
				}
			})
		}
	}
}

func TestFQNDisabledWithoutRoot(t *testing.T) {
	s := transformertest.NewServer(t, echo, transformer.WithFQNRoot(""))
	fqn, err := s.PutFile([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range fqnMechanisms {
		_, err := transform(t, s, m, fqn)
		if re := remote(t, err); m != transformertest.WSFQN && re.Status != http.StatusBadRequest {
			t.Errorf("%s: status = %d, want 400", m, re.Status)
		}
	}
}

func TestNewFailsOnMissingRoot(t *testing.T) {
	if _, err := transformer.New(echo, transformer.WithoutAuth(), transformer.WithFQNRoot(filepath.Join(t.TempDir(), "missing"))); err == nil {
		t.Error("New with a missing fqn root succeeded")
	}
}

func transform(t *testing.T, s *transformertest.Server, m transformertest.Mechanism, fqn string) (string, error) {
	var out strings.Builder
	err := s.DoFQN(t.Context(), m, "o", "", fqn, &out)
	return out.String(), err
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
