package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestReadyPeers(t *testing.T) {
	ep := func(node, addr string, ready *bool) discoveryv1.Endpoint {
		e := discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
		if node != "" {
			e.NodeName = ptr.To(node)
		}
		return e
	}
	slices := []discoveryv1.EndpointSlice{
		{
			Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
			Endpoints: []discoveryv1.Endpoint{ep("a", "10.0.0.1", ptr.To(true)), ep("b", "10.0.0.2", ptr.To(false)), ep("", "10.0.0.3", nil)},
		},
		{Endpoints: []discoveryv1.Endpoint{ep("c", "fd00::4", nil), ep("a", "10.0.0.9", ptr.To(true))}},
	}
	want := []Peer{{Node: "a", URL: "http://10.0.0.1:8080"}, {Node: "c", URL: "http://[fd00::4]:8080"}}
	if diff := cmp.Diff(want, readyPeers(slices)); diff != "" {
		t.Errorf("ready peers (-want +got):\n%s", diff)
	}
}

func TestNamespaceQuotas(t *testing.T) {
	ns := func(name, quota string) *corev1.Namespace {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if quota != "" {
			n.Annotations = map[string]string{QuotaAnnotation: quota}
		}
		return n
	}
	c := fake.NewClientBuilder().WithObjects(ns("big", "1000"), ns("plain", ""), ns("bad", "lots")).Build()
	quotaOf := NamespaceQuotas(t.Context(), c)
	cases := map[string]struct {
		want int64
		ok   bool
	}{"big": {1000, true}, "plain": {0, false}, "bad": {0, false}, "missing": {0, false}}
	for name, tc := range cases {
		if q, ok := quotaOf(name); q != tc.want || ok != tc.ok {
			t.Errorf("%s: %d, %v, want %d, %v", name, q, ok, tc.want, tc.ok)
		}
	}
}

func TestPeerTokenReread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	tf := tokenFile{path: path}
	if _, err := tf.get(); err == nil || !strings.Contains(err.Error(), "--peer-token-file") {
		t.Errorf("no token file: %v", err)
	}
	for i, token := range []string{"first", "second-token"} {
		if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// As the kubelet's atomic update would, the file changes time too.
		when := time.Now().Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(path, when, when); err != nil {
			t.Fatal(err)
		}
		if got, err := tf.get(); err != nil || got != token {
			t.Errorf("token %q, %v, want %q", got, err, token)
		}
	}
}
