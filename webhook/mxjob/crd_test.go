package mxjob

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// The CRD refuses what the webhook refuses past mlkube's bounds, so an object stored while the
// webhook was unreachable or bypassed is still bounded. Its maxima come from markers that must
// repeat v1beta1's constants; this test keeps them equal.
func TestCRDMaximaMatchTheWebhook(t *testing.T) {
	root := webhooktest.CRDSchema(t, "mxnet.mlkube.io_mxjobs.yaml")
	spec := root.Properties["spec"]
	replica := spec.Properties["replicaSpecs"].Items.Schema
	run := spec.Properties["runPolicy"]
	want := map[string]struct {
		schema apiextensionsv1.JSONSchemaProps
		max    int64
	}{
		"spec.replicaSpecs[].replicas":           {replica.Properties["replicas"], int64(v1beta1.MaxReplicas)},
		"spec.runPolicy.backoffLimit":            {run.Properties["backoffLimit"], int64(v1beta1.MaxBackoffLimit)},
		"spec.runPolicy.activeDeadlineSeconds":   {run.Properties["activeDeadlineSeconds"], v1beta1.MaxSeconds},
		"spec.runPolicy.ttlSecondsAfterFinished": {run.Properties["ttlSecondsAfterFinished"], v1beta1.MaxSeconds},
	}
	for path, w := range want {
		if w.schema.Maximum == nil || int64(*w.schema.Maximum) != w.max {
			t.Errorf("CRD %s maximum = %v, want %d (the +kubebuilder:validation:Maximum marker and the constant differ; run make manifests)", path, w.schema.Maximum, w.max)
		}
	}
}
