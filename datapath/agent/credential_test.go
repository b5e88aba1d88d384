package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/transformertoken"
	"github.com/mlkube/mlkube/sdk/transformer"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// TestAgentSendsTheCredential: every mechanism reaches a transformer that refuses requests
// without its token (the SDK's), inline and through a TransformRun's pipeline, which go through
// the same code; the io shim speaks hpush.
func TestAgentSendsTheCredential(t *testing.T) {
	e := newEnv(t)
	e.writeObject("dir/obj", []byte("data"))
	for _, comm := range []etlv1alpha1.Communication{etlv1alpha1.CommHPush, etlv1alpha1.CommHPull, etlv1alpha1.CommIO, etlv1alpha1.CommWS} {
		for _, arg := range []etlv1alpha1.Argument{"", etlv1alpha1.ArgFQN} {
			name := strings.ToLower(string(comm) + string(arg))
			var seen atomic.Int64
			e.addTransform(name, comm, arg, func(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
				seen.Add(1)
				return in, nil
			})
			if a := e.get(name, "dir/obj", wire.Query{}); a.status != http.StatusOK || string(a.body) != "data" {
				t.Errorf("%s %s: %d %s", comm, arg, a.status, a.body)
			}
			if seen.Load() != 1 {
				t.Errorf("%s %s: the transformer ran %d times, want 1", comm, arg, seen.Load())
			}
		}
	}
}

// keyDir writes a key directory as the key Secret's volume holds it.
func keyDir(t *testing.T, keys map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for id, k := range keys {
		if err := os.WriteFile(filepath.Join(dir, id), k, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var testKey = bytes.Repeat([]byte{7}, transformertoken.KeySize)

// runningTransform is a Running Transform whose transformer on testNode is at u with key keyID.
func runningTransform(name string, uid types.UID, comm etlv1alpha1.Communication, u, keyID string) *etlv1alpha1.Transform {
	parsed, _ := url.Parse(u)
	port, _ := strconv.Atoi(parsed.Port())
	return &etlv1alpha1.Transform{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: uid},
		Spec:       etlv1alpha1.TransformSpec{Communication: comm},
		Status: etlv1alpha1.TransformStatus{Stage: etlv1alpha1.StageRunning, Nodes: []etlv1alpha1.NodeStatus{{
			Node: testNode, Pod: name + "-pod", IP: parsed.Hostname(), Port: int32(port), Ready: true, TokenKey: keyID,
		}}},
	}
}

func TestResolverDerivesTheTokenTheControllerGives(t *testing.T) {
	tr := runningTransform("t", "uid-1", etlv1alpha1.CommHPush, "http://10.0.0.1:8000", "k1")
	r := CacheResolver{Reader: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tr).Build(), Node: testNode,
		Keys: transformertoken.NewKeys(keyDir(t, map[string][]byte{"k1": testKey}))}
	got, err := r.Lookup(t.Context(), "default", "t")
	if err != nil {
		t.Fatal(err)
	}
	if want := transformertoken.Derive("k1", testKey, "default", "t", "uid-1"); got.Token != want {
		t.Errorf("token %q, want %q", got.Token, want)
	}
}

func TestResolverWithoutTheKeySaysWhichSecret(t *testing.T) {
	tr := runningTransform("t", "uid-1", etlv1alpha1.CommHPush, "http://10.0.0.1:8000", "k2")
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(tr).Build()
	for name, keys := range map[string]*transformertoken.Keys{
		"key missing": transformertoken.NewKeys(keyDir(t, map[string][]byte{"k1": testKey})),
		"no key dir":  nil,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := CacheResolver{Reader: c, Node: testNode, Keys: keys}.Lookup(t.Context(), "default", "t")
			nr, ok := errors.AsType[*NotRunningError](err)
			if !ok || !strings.Contains(nr.Reason, "k2") || !strings.Contains(nr.Reason, "mlkube-datapath/transformer-token-keys") {
				t.Errorf("Lookup = %v, want a NotRunningError naming key k2 and the Secret", err)
			}
		})
	}
}

// TestSpoofedStatusReachesNoOtherTransformer (issue 24, finding 6): a user who can write
// transforms/status points Transform a at Transform b's transformer. The agent derives the token
// from the Transform the request names, so it presents a's token there; b's transformer refuses
// it, and b's Func never runs, by any mechanism.
func TestSpoofedStatusReachesNoOtherTransformer(t *testing.T) {
	dir := keyDir(t, map[string][]byte{"k1": testKey})
	for _, comm := range []etlv1alpha1.Communication{etlv1alpha1.CommHPush, etlv1alpha1.CommHPull, etlv1alpha1.CommWS} {
		t.Run(string(comm), func(t *testing.T) {
			var bRan atomic.Int64
			b := transformertest.NewServer(t, func(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
				bRan.Add(1)
				return in, nil
			}, transformer.WithToken(transformertoken.Derive("k1", testKey, "default", "b", "uid-b")))
			spoofed := runningTransform("a", "uid-a", comm, b.URL, "k1")
			genuine := runningTransform("b", "uid-b", comm, b.URL, "k1")
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(spoofed, genuine).Build()
			e := newEnv(t, func(o *Options) {
				o.Resolver = CacheResolver{Reader: c, Node: testNode, Keys: transformertoken.NewKeys(dir)}
			})
			e.writeObject("secret", []byte("b's data"))
			// b's own request first: a pooled ws connection to b, authenticated with b's token,
			// must not carry a's objects afterwards.
			if a := e.get("b", "secret", wire.Query{}); a.status != http.StatusOK || string(a.body) != "b's data" {
				t.Fatalf("through b itself: %d %q", a.status, a.body)
			}
			if a := e.get("a", "secret", wire.Query{}); a.status == http.StatusOK {
				t.Errorf("through the spoofed Transform a: %d %q, want an error", a.status, a.body)
			}
			if n := bRan.Load(); n != 1 {
				t.Errorf("b's Func ran %d times, want once (for b's own request), not for a's", n)
			}
		})
	}
}

// TestResolverWaitsForItsCacheToSeeTheTransformRunning: a lookup that finds the Transform still
// starting reads the cache again for up to Settle, so a stage the API server already shows Running
// (kubectl wait saw it) is not answered as not running because the agent's watch is behind;
// without Settle, or past it, the answer is the NotRunningError.
func TestResolverWaitsForItsCacheToSeeTheTransformRunning(t *testing.T) {
	running := runningTransform("t", "uid-1", etlv1alpha1.CommHPush, "http://10.0.0.1:8000", "")
	starting := running.DeepCopy()
	starting.Status = etlv1alpha1.TransformStatus{Stage: etlv1alpha1.StageInitializing, Reason: "transformers ready on 1 of 2 nodes"}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(starting).WithStatusSubresource(starting).Build()
	if _, err := (CacheResolver{Reader: c, Node: testNode}).Lookup(t.Context(), "default", "t"); !strings.Contains(fmt.Sprint(err), "stage Initializing") {
		t.Fatalf("Lookup without Settle = %v, want not running at once", err)
	}
	caughtUp := make(chan error, 1)
	go func() {
		time.Sleep(4 * settlePoll) // the cache catches up while the lookup waits
		got := starting.DeepCopy()
		got.Status = running.Status
		caughtUp <- c.Status().Update(context.Background(), got)
	}()
	target, err := CacheResolver{Reader: c, Node: testNode, Settle: time.Minute}.Lookup(t.Context(), "default", "t")
	if uerr := <-caughtUp; uerr != nil {
		t.Fatal(uerr)
	}
	if err != nil || target.URL == "" {
		t.Fatalf("Lookup with Settle = %+v, %v; want the running Transform's target", target, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	stopped := running.DeepCopy()
	stopped.Name, stopped.Spec.Stopped = "s", true
	if err := c.Create(t.Context(), stopped); err != nil {
		t.Fatal(err)
	}
	if _, err := (CacheResolver{Reader: c, Node: testNode, Settle: time.Minute}).Lookup(ctx, "default", "s"); !strings.Contains(fmt.Sprint(err), "stopped") {
		t.Errorf("Lookup of a stopped Transform with its request gone = %v, want not running", err)
	}
}
