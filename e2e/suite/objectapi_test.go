package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/wire"
)

// dataPathToken is a data path token of ServiceAccount sa of namespace ns from the TokenRequest
// API, as `kubectl create token SA --audience mlkube-datapath` makes it: whoever holds it acts on
// the data path as that ServiceAccount.
func dataPathToken(t *testing.T, ns, sa string) string {
	t.Helper()
	tok, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{wire.Audience}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a data path token of %s/%s: %v", ns, sa, err)
	}
	return tok.Status.Token
}

// callAgent sends method path (with body, and token as a bearer token unless empty) to the agent
// at base (forwardToAgent) and returns the status and the body.
func callAgent(t *testing.T, base, method, path, token string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return resp.StatusCode, string(b)
}

// objectPath is the object API's path of object of namespace ns.
func objectPath(ns, object string) string {
	return wire.PathObjects + ns + "/" + object
}

// listPath is the object API's path of the first page of namespace ns's objects under prefix.
func listPath(ns, prefix string) string {
	return wire.PathObjects + ns + "/?" + url.Values{wire.QueryPrefix: {prefix}}.Encode()
}

// listObjects is the first page of namespace ns's objects under prefix, as token sees it.
func listObjects(t *testing.T, base, ns, prefix, token string) (wire.ObjectList, error) {
	t.Helper()
	var list wire.ObjectList
	code, body := callAgent(t, base, http.MethodGet, listPath(ns, prefix), token, nil)
	if code != http.StatusOK {
		return list, fmt.Errorf("listing %s of namespace %s: %d %.300s", prefix, ns, code, body)
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		return list, fmt.Errorf("listing %s of namespace %s: %w in %.300s", prefix, ns, err, body)
	}
	return list, nil
}
