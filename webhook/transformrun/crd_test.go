package transformrun

import (
	"testing"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// The CRD refuses what the webhook refuses past mlkube's bounds, so a run stored while the webhook
// was unreachable or bypassed is still bounded. Its bounds come from markers that must repeat
// v1alpha1's and wire's constants; this test keeps them equal.
func TestCRDBoundsMatchTheWebhook(t *testing.T) {
	root := webhooktest.CRDSchema(t, "etl.mlkube.io_transformruns.yaml")
	spec, status := root.Properties["spec"], root.Properties["status"]
	source, dst := spec.Properties["source"], spec.Properties["destination"]
	maxima := map[string]struct {
		got  *float64
		want int64
	}{
		"spec.workersPerNode":          {spec.Properties["workersPerNode"].Maximum, v1alpha1.MaxRunWorkersPerNode},
		"spec.ttlSecondsAfterFinished": {spec.Properties["ttlSecondsAfterFinished"].Maximum, v1alpha1.MaxRunTTLSeconds},
	}
	for path, m := range maxima {
		if m.got == nil || int64(*m.got) != m.want {
			t.Errorf("CRD %s maximum = %v, want %d (the +kubebuilder:validation:Maximum marker and the constant differ; run make manifests)", path, m.got, m.want)
		}
	}
	lengths := map[string]struct {
		got  *int64
		want int64
	}{
		"spec.args":                   {spec.Properties["args"].MaxLength, wire.MaxArgs},
		"spec.source.prefix":          {source.Properties["prefix"].MaxLength, wire.MaxObjectName},
		"spec.source.objects[]":       {source.Properties["objects"].Items.Schema.MaxLength, wire.MaxObjectName},
		"spec.source.objects (items)": {source.Properties["objects"].MaxItems, v1alpha1.MaxRunObjects},
		"spec.destination.prefix":     {dst.Properties["prefix"].MaxLength, wire.MaxObjectName},
		"status.errors (items)":       {status.Properties["errors"].MaxItems, v1alpha1.MaxRunErrors},
		"spec.nodeSelector (pairs)":   {spec.Properties["nodeSelector"].MaxProperties, v1alpha1.MaxNodeSelector},
	}
	for path, l := range lengths {
		if l.got == nil || *l.got != l.want {
			t.Errorf("CRD %s bound = %v, want %d (the +kubebuilder:validation marker and the constant differ; run make manifests)", path, l.got, l.want)
		}
	}
}
