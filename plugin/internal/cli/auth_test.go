package cli_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/mlkube/mlkube/plugin/etl"
	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/mxjob"
)

// execCredentialEnv makes the test binary an exec credential plugin: run with it set to a token,
// it prints an ExecCredential with that token, as a kubeconfig's exec user expects, and exits.
const execCredentialEnv = "MLKUBE_TEST_EXEC_CREDENTIAL_TOKEN"

func TestMain(m *testing.M) {
	if token := os.Getenv(execCredentialEnv); token != "" {
		fmt.Printf(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":%q}}`+"\n", token)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// tokenServer is an API server that answers GET /version to requests bearing token only; it
// records the Authorization header of every request.
type tokenServer struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

const testGitVersion = "v1.99.0-auth-test"

func newTokenServer(t *testing.T, token string) *tokenServer {
	s := &tokenServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		switch {
		case r.Header.Get("Authorization") != "Bearer "+token:
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`, http.StatusUnauthorized)
		case r.URL.Path == "/version":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"major":"1","minor":"99","gitVersion":%q}`, testGitVersion)
		case r.URL.Path == "/api":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case r.URL.Path == "/apis":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// kubeconfig writes a kubeconfig for s whose user is user.
func (s *tokenServer) kubeconfig(t *testing.T, user *clientcmdapi.AuthInfo) string {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{
		Server:                   s.URL,
		CertificateAuthorityData: pemOf(s.Certificate().Raw),
	}
	cfg.AuthInfos["test"] = user
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test", Namespace: "default"}
	cfg.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func pemOf(der []byte) []byte {
	return []byte("-----BEGIN CERTIFICATE-----\n" + base64.StdEncoding.EncodeToString(der) + "\n-----END CERTIFICATE-----\n")
}

// unsignedJWT is an ID token that expires in an hour: client-go's oidc auth provider sends an
// unexpired id-token as it is, without asking the issuer.
func unsignedJWT(t *testing.T) string {
	claims, err := json.Marshal(map[string]any{"iss": "https://issuer.invalid", "exp": time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc(claims) + ".c2lnbmF0dXJl"
}

// TestKubeconfigAuthPlugins: both plugins authenticate as kubectl does with a kubeconfig whose
// user is an exec credential plugin or an auth provider (oidc, which the frame's import of
// client-go's auth plugins registers). The server answers only the token the user yields, so a
// plugin that did not use it gets no server version.
func TestKubeconfigAuthPlugins(t *testing.T) {
	plugins := map[string]struct {
		plugin   cli.Plugin
		scheme   func() *runtime.Scheme
		commands func(*cli.Env) []*cobra.Command
	}{
		"etl":   {etl.Plugin, etl.NewScheme, etl.Commands},
		"mxjob": {mxjob.Plugin, mxjob.NewScheme, mxjob.Commands},
	}
	oidcToken := unsignedJWT(t)
	users := map[string]struct {
		token string
		user  *clientcmdapi.AuthInfo
	}{
		"exec": {"exec-token", &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion:      "client.authentication.k8s.io/v1",
			Command:         os.Args[0],
			Env:             []clientcmdapi.ExecEnvVar{{Name: execCredentialEnv, Value: "exec-token"}},
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}}},
		"oidc": {oidcToken, &clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{
			Name:   "oidc",
			Config: map[string]string{"idp-issuer-url": "https://issuer.invalid", "client-id": "mlkube", "id-token": oidcToken},
		}}},
	}
	for pname, p := range plugins {
		for uname, u := range users {
			t.Run(pname+"/"+uname, func(t *testing.T) {
				srv := newTokenServer(t, u.token)
				var out, errOut bytes.Buffer
				env := cli.NewEnv(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}, cli.NewConfigFlags(), p.scheme())
				root := cli.NewRoot(p.plugin, env, p.commands(env)...)
				args := []string{"version", "-o", "json", "--kubeconfig", srv.kubeconfig(t, u.user), "--cache-dir", t.TempDir()}
				if code := cli.Execute(root, args); code != 0 {
					t.Fatalf("kubectl %s %v: exit %d: %s", pname, args, code, errOut.String())
				}
				var v cli.VersionInfo
				if err := json.Unmarshal(out.Bytes(), &v); err != nil {
					t.Fatalf("version -o json: %v: %s", err, out.String())
				}
				if v.Server != testGitVersion {
					t.Errorf("server version %q, want %q: the %s user's token was not used (errors: %q)", v.Server, testGitVersion, uname, v.Errors)
				}
				srv.mu.Lock()
				defer srv.mu.Unlock()
				for _, a := range srv.auth {
					if a != "Bearer "+u.token {
						t.Errorf("a request with Authorization %q, want the %s user's token", a, uname)
					}
				}
			})
		}
	}
}
