package webhook_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/mxjob"
	"github.com/mlkube/mlkube/webhook/transform"
)

// admissionCase is one kind's pair of webhooks, built the way ctrl.NewWebhookManagedBy builds
// them, and the two AdmissionReview bodies the API server posts for one create: the object as the
// user sent it to the mutating webhook, then the patched (defaulted) object to the validating one.
type admissionCase struct {
	mutate, validate http.Handler
	mutateBody       []byte
	validateBody     []byte
}

func newAdmissionCase[T client.Object](b *testing.B, rules interface {
	admission.Defaulter[T]
	admission.Validator[T]
}, resource string, obj T, defaulted T) admissionCase {
	s := scheme.New()
	gvk := obj.GetObjectKind().GroupVersionKind()
	review := func(o T) []byte {
		raw, err := json.Marshal(o)
		if err != nil {
			b.Fatal(err)
		}
		body, err := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{
				UID:         types.UID("705ab4f5-6393-11e8-b7cc-42010a800002"),
				Kind:        metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
				Resource:    metav1.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: resource},
				RequestKind: &metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
				Name:        o.GetName(), Namespace: o.GetNamespace(),
				Operation: admissionv1.Create,
				UserInfo:  authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated"}},
				Object:    runtime.RawExtension{Raw: raw},
				Options:   runtime.RawExtension{Raw: []byte(`{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}`)},
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		return body
	}
	return admissionCase{
		mutate:       admission.WithDefaulter(s, admission.Defaulter[T](rules)),
		validate:     admission.WithValidator(s, admission.Validator[T](rules)),
		mutateBody:   review(obj),
		validateBody: review(defaulted),
	}
}

// post sends body to h as the API server does and returns the decoded AdmissionResponse.
func post(b *testing.B, h http.Handler, body []byte) *admissionv1.AdmissionResponse {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("webhook answered %d: %s", rec.Code, rec.Body)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil {
		b.Fatal(err)
	}
	return review.Response
}

// BenchmarkAdmission times one create's admission in process: the mutating webhook's answer to
// the object as sent, then the validating webhook's to the defaulted object, each through the
// handler's ServeHTTP with the AdmissionReview JSON the API server posts (decoding, the rules,
// the JSON patch and the encoded answer; no TLS or network). p50 and p99 are per create; the
// target is p99 < 1 ms.
func BenchmarkAdmission(b *testing.B) {
	job := builders.MxJob("train").Dist(1, 4).Obj()
	defaultedJob := job.DeepCopy()
	mxjob.Default(defaultedJob)
	tr := builders.Transform("md5").Runtime("ghcr.io/mlkube/md5:1", "python3", "/md5.py").Obj()
	defaultedTr := tr.DeepCopy()
	transform.Default(defaultedTr)
	cases := []struct {
		name string
		c    admissionCase
	}{
		{"MxJob", newAdmissionCase[*v1beta1.MxJob](b, mxjob.Rules, "mxjobs", job, defaultedJob)},
		{"Transform", newAdmissionCase[*v1alpha1.Transform](b, transform.Rules, "transforms", tr, defaultedTr)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c := tc.c
			// What the API server would act on: a patch that defaults, and an allowed object.
			if r := post(b, c.mutate, c.mutateBody); !r.Allowed || len(r.Patch) == 0 {
				b.Fatalf("mutating webhook: allowed=%v with a %d-byte patch; want a defaulting patch", r.Allowed, len(r.Patch))
			}
			if r := post(b, c.validate, c.validateBody); !r.Allowed {
				b.Fatalf("validating webhook refused the defaulted object: %v", r.Result)
			}
			b.ReportAllocs()
			latencies := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				serve(b, c.mutate, c.mutateBody)
				serve(b, c.validate, c.validateBody)
				latencies = append(latencies, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(latencies)
			b.ReportMetric(quantileMicros(latencies, 0.50), "p50-µs")
			b.ReportMetric(quantileMicros(latencies, 0.99), "p99-µs")
		})
	}
}

// serve is post without decoding the answer, which the API server does on its side of the wire.
func serve(b *testing.B, h http.Handler, body []byte) {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("webhook answered %d: %s", rec.Code, rec.Body)
	}
}

// quantileMicros is the q-quantile of sorted latencies, in microseconds.
func quantileMicros(sorted []time.Duration, q float64) float64 {
	i := min(int(q*float64(len(sorted))), len(sorted)-1)
	return float64(sorted[i].Nanoseconds()) / 1e3
}
