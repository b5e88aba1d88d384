package objectstore

import (
	"testing"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// The CRD bounds what the webhook bounds, so a store stored while the webhook was bypassed is
// still bounded; its markers repeat v1alpha1's constants, and this test keeps them equal.
func TestCRDBoundsMatchTheWebhook(t *testing.T) {
	root := webhooktest.CRDSchema(t, "etl.mlkube.io_objectstores.yaml")
	spec := root.Properties["spec"]
	for field, want := range map[string]int64{
		"endpoint": v1alpha1.MaxEndpointLength, "region": v1alpha1.MaxRegionLength, "caBundle": v1alpha1.MaxCABundleBytes, "bucket": 63,
	} {
		if got := spec.Properties[field].MaxLength; got == nil || *got != want {
			t.Errorf("CRD spec.%s maxLength = %v, want %d (the +kubebuilder:validation marker and the constant differ; run make manifests)", field, got, want)
		}
	}
}
