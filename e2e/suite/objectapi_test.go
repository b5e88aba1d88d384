package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/wire"
)

// dataPathToken is a data path token of ServiceAccount sa of namespace ns from the TokenRequest
// API, as `kubectl create token SA --audience mlkube-datapath` makes it: whoever holds it acts on
// the data path as that ServiceAccount. mlkube-cli is created if it is missing, as kubectl etl
// creates it on first use.
func dataPathToken(t *testing.T, ns, sa string) string {
	t.Helper()
	if sa == cliServiceAccount {
		_, err := clientset.CoreV1().ServiceAccounts(ns).Create(context.Background(),
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating ServiceAccount %s/%s: %v", ns, sa, err)
		}
	}
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

// putObjects puts objects (name → bytes) of namespace ns on node as a user does: PUTs through the
// object API of node's agent, as the namespace's mlkube-cli (which may use the data path), each naming the node (?node=) and checked to have landed there; eight at a time.
func putObjects(t *testing.T, ns, node string, objects map[string][]byte) {
	t.Helper()
	base, token := forwardToAgent(t, node), dataPathToken(t, ns, cliServiceAccount)
	names := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for range 8 {
		wg.Go(func() {
			for name := range names {
				if err := putObject(base, ns, node, name, token, objects[name]); err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				}
			}
		})
	}
	for name := range objects {
		names <- name
	}
	close(names)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("putting %d of %d objects of namespace %s on %s failed, first: %s", len(failures), len(objects), ns, node, failures[0])
	}
}

func putObject(base, ns, node, name, token string, data []byte) error {
	path := objectPath(ns, name) + "?" + url.Values{wire.QueryNode: {node}}.Encode()
	req, err := http.NewRequest(http.MethodPut, base+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("PUT %s: %w", name, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("PUT %s: %d %s", name, resp.StatusCode, body)
	}
	if got := resp.Header.Get(wire.HeaderNode); got != node {
		return fmt.Errorf("PUT %s?node=%s landed on %q", name, node, got)
	}
	return nil
}
