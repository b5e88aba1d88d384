package transform

import (
	"testing"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// The CRD refuses what the webhook refuses past mlkube's bounds, so a Transform stored while the
// webhook was unreachable or bypassed is still bounded. Its bounds come from markers that must
// repeat v1alpha1's constants; this test keeps them equal.
func TestCRDBoundsMatchTheWebhook(t *testing.T) {
	root := webhooktest.CRDSchema(t, "etl.mlkube.io_transforms.yaml")
	spec := root.Properties["spec"]
	code, rt := spec.Properties["code"], spec.Properties["runtime"]
	bounds := map[string]struct {
		got  *int64
		want int64
	}{
		"spec.code.source":          {code.Properties["source"].MaxLength, v1alpha1.MaxCodeSource},
		"spec.code.dependencies":    {code.Properties["dependencies"].MaxLength, v1alpha1.MaxCodeDependencies},
		"spec.code.function":        {code.Properties["function"].MaxLength, v1alpha1.MaxCodeFunction},
		"spec.code.runtime":         {code.Properties["runtime"].MaxLength, v1alpha1.MaxCodeRuntime},
		"spec.runtime.image":        {rt.Properties["image"].MaxLength, v1alpha1.MaxImage},
		"spec.runtime.command":      {rt.Properties["command"].MaxItems, v1alpha1.MaxCommandItems},
		"spec.runtime.command[]":    {rt.Properties["command"].Items.Schema.MaxLength, v1alpha1.MaxCommandItem},
		"spec.runtime.args":         {rt.Properties["args"].MaxItems, v1alpha1.MaxCommandItems},
		"spec.runtime.args[]":       {rt.Properties["args"].Items.Schema.MaxLength, v1alpha1.MaxCommandItem},
		"spec.runtime.env":          {rt.Properties["env"].MaxItems, v1alpha1.MaxEnv},
		"spec.env":                  {spec.Properties["env"].MaxItems, v1alpha1.MaxEnv},
		"spec.nodeSelector (pairs)": {spec.Properties["nodeSelector"].MaxProperties, v1alpha1.MaxNodeSelector},
		"spec.tolerations":          {spec.Properties["tolerations"].MaxItems, v1alpha1.MaxTolerations},
	}
	for path, b := range bounds {
		if b.got == nil || *b.got != b.want {
			t.Errorf("CRD %s bound = %v, want %d (the +kubebuilder:validation marker and the constant differ; run make manifests)", path, b.got, b.want)
		}
	}
}
