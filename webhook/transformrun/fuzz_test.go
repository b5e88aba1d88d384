package transformrun

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/randfill"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// Names the source and destination rules care about: clean and unclean directories, the root,
// escapes, overlaps of raw and out, extensions and templates good and bad.
var (
	fuzzDirs       = []string{"", "raw", "raw/", "out", "out/x", "raw/out", "raw2", ".", "/", "/abs", "a/../b", "./raw", "a//b"}
	fuzzExtensions = []string{"", ".flac", ".wav", "wav", ".", "./x"}
	fuzzTemplates  = []string{"", "s-{0000..0009}", "{a,b}/x", "out/{1..2}", "{9..0}", "{", "{0..9}{0..9}{0..9}{0..9}{0..9}{0..9}"}
	fuzzObjects    = []string{"a", "b/c", "out/a", "", "/abs", "../x"}
)

// fillSource and fillDestination replace randfill's default strings with those names.
func fillSource(s *v1alpha1.RunSource, c randfill.Continue) {
	pick := func(vals []string) string { return vals[c.Intn(len(vals))] }
	*s = v1alpha1.RunSource{Extension: pick(fuzzExtensions)}
	switch c.Intn(5) {
	case 0:
		s.Prefix = pick(fuzzDirs)
	case 1:
		for range c.Intn(4) {
			s.Objects = append(s.Objects, pick(fuzzObjects))
		}
	case 2:
		s.Template = pick(fuzzTemplates)
	case 3: // two at once
		s.Prefix, s.Template = pick(fuzzDirs), pick(fuzzTemplates)
	}
}

func fillDestination(d *v1alpha1.RunDestination, c randfill.Continue) {
	*d = v1alpha1.RunDestination{Prefix: fuzzDirs[c.Intn(len(fuzzDirs))], ToExtension: fuzzExtensions[c.Intn(len(fuzzExtensions))]}
}

// generateRun makes a fuzzed TransformRun: a valid one of each source form with up to three
// fields refilled at random.
func generateRun(data []byte) *v1alpha1.TransformRun {
	bases := []func() *v1alpha1.TransformRun{
		func() *v1alpha1.TransformRun { return run(nil) },
		func() *v1alpha1.TransformRun {
			return run(func(s *spec) { s.Source = v1alpha1.RunSource{Objects: []string{"a", "b/c"}} })
		},
		func() *v1alpha1.TransformRun {
			return run(func(s *spec) { s.Source = v1alpha1.RunSource{Template: "s-{00..99}.tar", Extension: ".tar"} })
		},
	}
	fields := func(r *v1alpha1.TransformRun) []any {
		s := &r.Spec
		return []any{&r.ObjectMeta, &s.Transform, &s.Args, &s.Source, &s.Destination, &s.WorkersPerNode,
			&s.NodeSelector, &s.DryRun, &s.Check, &s.Suspend, &s.TTLSecondsAfterFinished}
	}
	return webhooktest.Generate(data, bases, fields, fillSource, fillDestination)
}

// TestGeneratedRunsMixValidAndInvalid guards the fuzz target against going vacuous.
func TestGeneratedRunsMixValidAndInvalid(t *testing.T) {
	share := webhooktest.ValidShare(2000, generateRun, func(r *v1alpha1.TransformRun) bool { return len(ValidateCreate(r)) == 0 })
	t.Logf("valid share %.2f", share)
	if share < 0.2 || share > 0.8 {
		t.Fatalf("%.0f%% of generated TransformRuns are valid; want between 20%% and 80%%", share*100)
	}
}

// FuzzTransformRunAdmission checks, on random TransformRuns, that the rules never panic, that
// defaulting is idempotent and survives the API server's JSON round trip, that a valid run stays
// valid once defaulted, and that what defaulting adds never counts as an immutable change.
func FuzzTransformRunAdmission(f *testing.F) {
	for _, seed := range []string{"", "prefix", "objects", "template", "a longer seed for other shapes"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := generateRun(data)
		webhooktest.CheckProperties(t, r, webhooktest.Rules[*v1alpha1.TransformRun]{
			New:      func() *v1alpha1.TransformRun { return &v1alpha1.TransformRun{} },
			DeepCopy: func(o *v1alpha1.TransformRun) *v1alpha1.TransformRun { return o.DeepCopy() },
			Default:  Default, Create: ValidateCreate, Update: ValidateUpdate,
			Spec:      func(o *v1alpha1.TransformRun) any { return o.Spec },
			Immutable: func(old, obj *v1alpha1.TransformRun) field.ErrorList { return validateImmutable(&old.Spec, &obj.Spec) },
		})
	})
}
