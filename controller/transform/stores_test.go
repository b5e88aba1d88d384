package transform

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/builders"
)

func store(endpoint, bucket string, edit ...func(*v1alpha1.ObjectStoreSpec)) v1alpha1.ObjectStore {
	s := v1alpha1.ObjectStore{Spec: v1alpha1.ObjectStoreSpec{Endpoint: endpoint, Bucket: bucket}}
	for _, e := range edit {
		e(&s.Spec)
	}
	return s
}

func TestStoreOrigins(t *testing.T) {
	virtual := func(s *v1alpha1.ObjectStoreSpec) { s.Addressing = v1alpha1.AddressingVirtualHost }
	path := func(s *v1alpha1.ObjectStoreSpec) { s.Addressing = v1alpha1.AddressingPath }
	ca := func(s *v1alpha1.ObjectStoreSpec) { s.CABundle = "-----BEGIN CERTIFICATE-----" }
	// Past the cap, in reverse order: the first MaxStoreOrigins after sorting are kept.
	many := make([]v1alpha1.ObjectStore, wire.MaxStoreOrigins+2)
	var first []string
	for i := range many {
		many[len(many)-1-i] = store(fmt.Sprintf("http://s3-%04d.example", i), "b")
		if i < wire.MaxStoreOrigins {
			first = append(first, fmt.Sprintf("http://s3-%04d.example:80", i))
		}
	}
	for name, tc := range map[string]struct {
		stores []v1alpha1.ObjectStore
		want   []string
	}{
		"none": {},
		"path addressing: the endpoint's host, lower-cased, port written out": {
			stores: []v1alpha1.ObjectStore{store("https://S3.Example", "data", path)},
			want:   []string{"https://s3.example:443"},
		},
		"virtual host: the bucket in the host": {
			stores: []v1alpha1.ObjectStore{store("http://s3.example:9000", "data", virtual)},
			want:   []string{"http://data.s3.example:9000"},
		},
		"sorted, once each": {
			stores: []v1alpha1.ObjectStore{store("http://b.example", "x"), store("http://a.example", "x"), store("http://b.example:80", "y")},
			want:   []string{"http://a.example:80", "http://b.example:80"},
		},
		"a store with a CA bundle is relayed by the agent": {
			stores: []v1alpha1.ObjectStore{store("https://own-ca.example", "x", ca), store("http://s3.example", "x")},
			want:   []string{"http://s3.example:80"},
		},
		"an endpoint that is no http(s) URL of a host": {
			stores: []v1alpha1.ObjectStore{store("ftp://s3.example", "x"), store("http://", "x"), store("http://s3.example", "x")},
			want:   []string{"http://s3.example:80"},
		},
		"at most MaxStoreOrigins, the first after sorting": {stores: many, want: first},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, storeOrigins(tc.stores)); diff != "" {
				t.Errorf("storeOrigins (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStoresFile: the value the transformer parses (sdk/transformer, parseStoreOrigins), empty
// rather than absent when no store is left.
func TestStoresFile(t *testing.T) {
	for name, tc := range map[string]struct {
		origins []string
		want    string
	}{
		"none":        {want: ""},
		"one":         {origins: []string{"http://a:80"}, want: "http://a:80\n"},
		"a line each": {origins: []string{"http://a:80", "https://b:443"}, want: "http://a:80\nhttps://b:443\n"},
	} {
		t.Run(name, func(t *testing.T) {
			got := storesFile(tc.origins)
			if got == nil || string(got) != tc.want {
				t.Errorf("storesFile(%q) = %q (nil: %v), want %q", tc.origins, got, got == nil, tc.want)
			}
		})
	}
}

func TestTakesStoreURLs(t *testing.T) {
	for name, tc := range map[string]struct {
		comm v1alpha1.Communication
		arg  v1alpha1.Argument
		want bool
	}{
		"hpull, url":   {v1alpha1.CommHPull, v1alpha1.ArgURL, true},
		"hpull, bytes": {v1alpha1.CommHPull, v1alpha1.ArgBytes, false},
		"hpull, fqn":   {v1alpha1.CommHPull, v1alpha1.ArgFQN, false},
		"hpush, url":   {v1alpha1.CommHPush, v1alpha1.ArgURL, false},
		"io, url":      {v1alpha1.CommIO, v1alpha1.ArgURL, false},
	} {
		t.Run(name, func(t *testing.T) {
			tr := &v1alpha1.Transform{Spec: v1alpha1.TransformSpec{Communication: tc.comm, Argument: tc.arg}}
			if got := takesStoreURLs(tr); got != tc.want {
				t.Errorf("takesStoreURLs = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodKeyIDs(t *testing.T) {
	pod := func(key string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
		if key != "" {
			p.Annotations[v1alpha1.AnnotationTokenKey] = key
		}
		return p
	}
	got := podKeyIDs([]corev1.Pod{pod("k2"), pod("k1"), pod(""), pod("k2")})
	if diff := cmp.Diff([]string{"k1", "k2"}, got); diff != "" {
		t.Errorf("podKeyIDs (-want +got):\n%s", diff)
	}
}

// TestStoresWriterSkipsWhatItWroteAndForgetsATransformWhole: a list written to a Secret is not
// patched again; after forget, every token Secret of that Transform is written again and the
// other Transform's are not.
func TestStoresWriterSkipsWhatItWroteAndForgetsATransformWhole(t *testing.T) {
	ctx := t.Context()
	t1 := defaulted(builders.Transform("t1").Namespace("tenant").Runtime("img"))
	t2 := defaulted(builders.Transform("t2").Namespace("tenant").Runtime("img"))
	t1.UID, t2.UID = "uid-1", "uid-2"
	secrets := []struct {
		t     *v1alpha1.Transform
		keyID string
	}{{t1, "k1"}, {t1, "k2"}, {t2, "k1"}}
	b := fake.NewClientBuilder()
	for _, s := range secrets {
		b.WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: tokenSecretName(s.t, s.keyID)}})
	}
	patched := map[string]int{}
	c := b.WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
		patched[obj.GetName()]++
		return c.Patch(ctx, obj, p, opts...)
	}}).Build()
	var w storesWriter
	applyAll := func() {
		t.Helper()
		for _, s := range secrets {
			if err := w.apply(ctx, c, s.t, s.keyID, []string{"http://a:80"}, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	applyAll()
	applyAll()
	w.forget(client.ObjectKeyFromObject(t1))
	applyAll()
	want := map[string]int{tokenSecretName(t1, "k1"): 2, tokenSecretName(t1, "k2"): 2, tokenSecretName(t2, "k1"): 1}
	if diff := cmp.Diff(want, patched); diff != "" {
		t.Errorf("patches by Secret (-want +got):\n%s", diff)
	}
	var got corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "tenant", Name: tokenSecretName(t2, "k1")}, &got); err != nil || string(got.Data[wire.TransformerStoresKey]) != "http://a:80\n" {
		t.Errorf("%s holds %q (%v); want the list", tokenSecretName(t2, "k1"), got.Data[wire.TransformerStoresKey], err)
	}
}
