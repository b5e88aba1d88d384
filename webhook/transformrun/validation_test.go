package transformrun

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

const (
	required  = "Required value"
	invalid   = "Invalid value"
	forbidden = "Forbidden"
)

type spec = v1alpha1.TransformRunSpec

// sortedStrings compares error keys in any order: node selector errors follow map order.
var sortedStrings = cmpopts.SortSlices(func(a, b string) bool { return a < b })

// manyBadObjects is what a list of 50 empty names gets: maxObjectErrors errors, then one saying
// the rest was not checked.
func manyBadObjects() []string {
	var keys []string
	for i := range maxObjectErrors {
		keys = append(keys, fmt.Sprintf("spec.source.objects[%d]: %s", i, invalid))
	}
	return append(keys, "spec.source.objects: "+invalid)
}

func TestValidateCreate(t *testing.T) {
	many := func(n int) []string {
		objects := make([]string, n)
		for i := range objects {
			objects[i] = fmt.Sprintf("o/%d", i)
		}
		return objects
	}
	selector := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("k%d", i)] = "v"
		}
		return m
	}
	cases := map[string]struct {
		r    *v1alpha1.TransformRun
		want []string
	}{
		"prefix source": {r: run(nil)},
		// rule: source.store names an ObjectStore; its keys are not in the node tier, so the
		// destination may have the prefix's name
		"store source": {r: run(func(s *spec) {
			s.Source = v1alpha1.RunSource{Store: "raw", Prefix: "out/images"}
			s.Destination = v1alpha1.RunDestination{Prefix: "out"}
		})},
		"store source of objects in the destination's name": {r: run(func(s *spec) {
			s.Source = v1alpha1.RunSource{Store: "raw", Objects: []string{"out/a"}, Template: ""}
		})},
		// rule: no transform is a copy, which takes no args
		"a copy": {r: run(func(s *spec) {
			s.Transform = ""
			s.Source = v1alpha1.RunSource{Store: "raw", Prefix: "images"}
		})},
		"a copy with args": {r: run(func(s *spec) { s.Transform, s.Args = "", "x" }), want: []string{"spec.args: " + forbidden}},
		"store to store": {r: run(func(s *spec) {
			s.Source = v1alpha1.RunSource{Store: "raw", Prefix: "images"}
			s.Destination = v1alpha1.RunDestination{Store: "processed", Prefix: "images"}
		})},
		"node tier to a store, same prefix": {r: run(func(s *spec) { s.Destination = v1alpha1.RunDestination{Store: "processed", Prefix: "raw"} })},
		"one store, overlapping prefixes": {r: run(func(s *spec) {
			s.Source = v1alpha1.RunSource{Store: "raw", Prefix: "images"}
			s.Destination = v1alpha1.RunDestination{Store: "raw", Prefix: "images/out"}
		}), want: []string{"spec.destination.prefix: " + invalid}},
		"destination store that names no ObjectStore": {r: run(func(s *spec) { s.Destination.Store = "-bad" }),
			want: []string{"spec.destination.store: " + invalid}},
		"store that names no ObjectStore": {r: run(func(s *spec) { s.Source.Store = "Raw_Bucket" }),
			want: []string{"spec.source.store: " + invalid}},
		"everything set": {r: run(func(s *spec) {
			s.Transform, s.Args = "decode>>resize>>md5", "size=224"
			s.Source = v1alpha1.RunSource{Prefix: "data/raw/", Extension: ".flac"}
			s.Destination = v1alpha1.RunDestination{Prefix: "data/out", ToExtension: ".wav"}
			s.WorkersPerNode, s.TTLSecondsAfterFinished = ptr.To[int32](64), ptr.To[int32](v1alpha1.MaxRunTTLSeconds)
			s.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
			s.DryRun, s.ContinueOnError, s.Overwrite, s.Suspend = true, true, true, true
		})},
		// rule: at most one of dryRun and check
		"a check":       {r: run(func(s *spec) { s.Check, s.ContinueOnError = true, true })},
		"check and dry": {r: run(func(s *spec) { s.Check, s.DryRun = true, true }), want: []string{"spec.check: " + invalid}},
		// rule: nodeSelector has at most v1alpha1.MaxNodeSelector pairs
		"nodeSelector at its bound": {r: run(func(s *spec) { s.NodeSelector = selector(v1alpha1.MaxNodeSelector) })},
		"nodeSelector over its bound": {r: run(func(s *spec) { s.NodeSelector = selector(v1alpha1.MaxNodeSelector + 1) }),
			want: []string{"spec.nodeSelector: Too many"}},
		// rule: transform is a Transform's name or a pipeline of at most 8 of them
		"pipeline of 8": {r: run(func(s *spec) { s.Transform = strings.Repeat("a>>", 7) + "a" })},
		"pipeline of 9": {
			r:    run(func(s *spec) { s.Transform = strings.Repeat("a>>", 8) + "a" }),
			want: []string{"spec.transform: " + invalid},
		},
		"bad stages": {
			r:    run(func(s *spec) { s.Transform = "Upper>>>md5" }),
			want: []string{"spec.transform: " + invalid, "spec.transform: " + invalid},
		},
		"empty stage": {r: run(func(s *spec) { s.Transform = "md5>>" }), want: []string{"spec.transform: " + invalid}},
		// rule: args at most wire.MaxArgs
		"longest args": {r: run(func(s *spec) { s.Args = strings.Repeat("a", wire.MaxArgs) })},
		"args too long": {
			r:    run(func(s *spec) { s.Args = strings.Repeat("a", wire.MaxArgs+1) }),
			want: []string{"spec.args: " + invalid},
		},
		// rule: exactly one of prefix, objects, template
		"objects source":  {r: run(func(s *spec) { s.Source = v1alpha1.RunSource{Objects: []string{"a.jpg", "b/c.jpg"}} })},
		"template source": {r: run(func(s *spec) { s.Source = v1alpha1.RunSource{Template: "shard-{0000..0999}.tar"} })},
		"no source": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{} }),
			want: []string{"spec.source: " + required},
		},
		"three sources": {
			r:    run(func(s *spec) { s.Source.Objects, s.Source.Template = []string{"a"}, "b" }),
			want: []string{"spec.source.objects: " + forbidden, "spec.source.template: " + forbidden},
		},
		// rule: prefixes are clean directories of the namespace's data, not its root
		"root source":     {r: run(func(s *spec) { s.Source.Prefix = "." }), want: []string{"spec.source.prefix: " + invalid}},
		"slash source":    {r: run(func(s *spec) { s.Source.Prefix = "/" }), want: []string{"spec.source.prefix: " + invalid}},
		"absolute source": {r: run(func(s *spec) { s.Source.Prefix = "/data" }), want: []string{"spec.source.prefix: " + invalid}},
		"escaping dst":    {r: run(func(s *spec) { s.Destination.Prefix = "a/../../b" }), want: []string{"spec.destination.prefix: " + invalid}},
		"unclean dst":     {r: run(func(s *spec) { s.Destination.Prefix = "./out" }), want: []string{"spec.destination.prefix: " + invalid}},
		"no dst":          {r: run(func(s *spec) { s.Destination.Prefix = "" }), want: []string{"spec.destination.prefix: " + required}},
		"too long dst": {
			r:    run(func(s *spec) { s.Destination.Prefix = strings.Repeat("d", wire.MaxObjectName+1) }),
			want: []string{"spec.destination.prefix: " + invalid},
		},
		// rule: the destination neither is, lies inside nor holds the source
		"sibling with the source's name as prefix": {r: run(func(s *spec) { s.Destination.Prefix = "raw2" })},
		"dst is the source":                        {r: run(func(s *spec) { s.Destination.Prefix = "raw/" }), want: []string{"spec.destination.prefix: " + invalid}},
		"dst inside":                               {r: run(func(s *spec) { s.Destination.Prefix = "raw/out" }), want: []string{"spec.destination.prefix: " + invalid}},
		"dst holds source":                         {r: run(func(s *spec) { s.Source.Prefix = "out/raw" }), want: []string{"spec.destination.prefix: " + invalid}},
		"object in dst": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Objects: []string{"a", "out/a"}} }),
			want: []string{"spec.source.objects[1]: " + invalid},
		},
		"template in dst": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Template: "{in,out}/a"} }),
			want: []string{"spec.source.template: " + invalid},
		},
		// rule: every object a valid name, at most MaxRunObjects of them, errors bounded
		"bad objects": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Objects: []string{"ok", "", "/abs", "a/../b"}} }),
			want: []string{"spec.source.objects[1]: " + invalid, "spec.source.objects[2]: " + invalid, "spec.source.objects[3]: " + invalid},
		},
		"most objects": {r: run(func(s *spec) { s.Source = v1alpha1.RunSource{Objects: many(v1alpha1.MaxRunObjects)} })},
		"too many objects": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Objects: many(v1alpha1.MaxRunObjects + 1)} }),
			want: []string{"spec.source.objects: " + invalid},
		},
		"many bad objects": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Objects: make([]string, 50)} }),
			want: manyBadObjects(),
		},
		// rule: a template expands to at most MaxRunObjects valid names
		"largest template": {r: run(func(s *spec) { s.Source = v1alpha1.RunSource{Template: "s-{00000..99999}"} })},
		"template too large": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Template: "s-{0..100000}"} }),
			want: []string{"spec.source.template: " + invalid},
		},
		"unbalanced template": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Template: "s-{0..9"} }),
			want: []string{"spec.source.template: " + invalid},
		},
		"template names bad objects": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Template: "{a,..}/x"} }),
			want: []string{"spec.source.template: " + invalid},
		},
		// rule: extensions start with a dot and hold no slash; toExtension needs extension
		"bad extensions": {
			r: run(func(s *spec) {
				s.Source.Extension, s.Destination.ToExtension = "flac", "./wav"
			}),
			want: []string{"spec.source.extension: " + invalid, "spec.destination.toExtension: " + invalid},
		},
		"a dot alone": {r: run(func(s *spec) { s.Source.Extension = "." }), want: []string{"spec.source.extension: " + invalid}},
		"toExtension alone": {
			r:    run(func(s *spec) { s.Destination.ToExtension = ".wav" }),
			want: []string{"spec.destination.toExtension: " + forbidden},
		},
		// rule: workersPerNode 1..64
		"no workers": {r: run(func(s *spec) { s.WorkersPerNode = ptr.To[int32](0) }), want: []string{"spec.workersPerNode: " + invalid}},
		"too many workers": {
			r:    run(func(s *spec) { s.WorkersPerNode = ptr.To[int32](v1alpha1.MaxRunWorkersPerNode + 1) }),
			want: []string{"spec.workersPerNode: " + invalid},
		},
		// rule: ttl 0..MaxRunTTLSeconds
		"ttl zero":     {r: run(func(s *spec) { s.TTLSecondsAfterFinished = ptr.To[int32](0) })},
		"negative ttl": {r: run(func(s *spec) { s.TTLSecondsAfterFinished = ptr.To[int32](-1) }), want: []string{"spec.ttlSecondsAfterFinished: " + invalid}},
		"ttl too long": {
			r:    run(func(s *spec) { s.TTLSecondsAfterFinished = ptr.To[int32](v1alpha1.MaxRunTTLSeconds + 1) }),
			want: []string{"spec.ttlSecondsAfterFinished: " + invalid},
		},
		// rule: node selector keys and values are label syntax
		"bad node selector": {
			r:    run(func(s *spec) { s.NodeSelector = map[string]string{"disk type": "ssd", "zone": "a b"} }),
			want: []string{"spec.nodeSelector[disk type]: " + invalid, "spec.nodeSelector[zone]: " + invalid},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := webhooktest.Keys(ValidateCreate(tc.r))
			if diff := cmp.Diff(tc.want, got, sortedStrings); diff != "" {
				t.Errorf("ValidateCreate() errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessagesSayWhatToDo(t *testing.T) {
	cases := map[string]struct {
		r    *v1alpha1.TransformRun
		want string
	}{
		"pipeline": {
			r:    run(func(s *spec) { s.Transform = strings.Repeat("a>>", 8) + "a" }),
			want: "a pipeline has at most 8 stages",
		},
		"stage": {
			r:    run(func(s *spec) { s.Transform = "md5>>Upper" }),
			want: `stage 2, "Upper", must name a Transform of the run's namespace`,
		},
		"overlap": {
			r:    run(func(s *spec) { s.Destination.Prefix = "raw/out" }),
			want: `spec.destination.prefix: Invalid value: "raw/out": overlaps the source prefix "raw": results would be read as input; choose a destination outside the source`,
		},
		"no source": {
			r:    run(func(s *spec) { s.Source.Prefix = "" }),
			want: "exactly one of spec.source.prefix (a directory), spec.source.objects (a list) or spec.source.template",
		},
		"template": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Template: "s-{9..0}"} }),
			want: `spec.source.template: Invalid value: template "s-{9..0}": range {9..0} ends before it starts; write it from the lower bound up`,
		},
		"too many": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Template: "{0..9}{0..9}{0..9}{0..9}{0..9}{0..9}"} }),
			want: "names more than 100000 objects: split the run",
		},
		"long object name not echoed": {
			r:    run(func(s *spec) { s.Source = v1alpha1.RunSource{Objects: []string{strings.Repeat("n", 2000)}} }),
			want: "spec.source.objects[0]: Invalid value: object name of 2000 bytes is too long",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			msg := webhooktest.Messages(ValidateCreate(tc.r))
			if !strings.Contains(msg, tc.want) {
				t.Errorf("messages %q do not contain %q", msg, tc.want)
			}
			if len(msg) > 1000 {
				t.Errorf("messages are %d bytes long; they must stay short", len(msg))
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	base := func() *v1alpha1.TransformRun {
		r := run(func(s *spec) { s.Source.Extension, s.Destination.ToExtension = ".flac", ".wav" })
		Default(r)
		return r
	}
	cases := map[string]struct {
		edit func(*v1alpha1.TransformRun)
		want []string
	}{
		"no change":              {edit: func(*v1alpha1.TransformRun) {}},
		"suspend":                {edit: func(r *v1alpha1.TransformRun) { r.Spec.Suspend = true }},
		"labels":                 {edit: func(r *v1alpha1.TransformRun) { r.Labels = map[string]string{"team": "a"} }},
		"defaults filled by now": {edit: func(r *v1alpha1.TransformRun) { r.Spec.WorkersPerNode, r.Spec.Source.Prefix = nil, "raw/" }},
		"being deleted": {edit: func(r *v1alpha1.TransformRun) {
			r.DeletionTimestamp, r.Spec.Transform = ptr.To(r.CreationTimestamp), "other"
		}},
		"transform":     {edit: func(r *v1alpha1.TransformRun) { r.Spec.Transform = "sha256" }, want: []string{"spec.transform: " + forbidden}},
		"args":          {edit: func(r *v1alpha1.TransformRun) { r.Spec.Args = "x" }, want: []string{"spec.args: " + forbidden}},
		"source prefix": {edit: func(r *v1alpha1.TransformRun) { r.Spec.Source.Prefix = "raw2" }, want: []string{"spec.source.prefix: " + forbidden}},
		"source objects": {
			edit: func(r *v1alpha1.TransformRun) { r.Spec.Source.Objects = []string{"a"} },
			want: []string{"spec.source.objects: " + forbidden},
		},
		"template":    {edit: func(r *v1alpha1.TransformRun) { r.Spec.Source.Template = "a" }, want: []string{"spec.source.template: " + forbidden}},
		"extension":   {edit: func(r *v1alpha1.TransformRun) { r.Spec.Source.Extension = ".mp3" }, want: []string{"spec.source.extension: " + forbidden}},
		"destination": {edit: func(r *v1alpha1.TransformRun) { r.Spec.Destination.Prefix = "out2" }, want: []string{"spec.destination.prefix: " + forbidden}},
		"toExtension": {edit: func(r *v1alpha1.TransformRun) { r.Spec.Destination.ToExtension = ".ogg" }, want: []string{"spec.destination.toExtension: " + forbidden}},
		"workers": {
			edit: func(r *v1alpha1.TransformRun) { r.Spec.WorkersPerNode = ptr.To[int32](8) },
			want: []string{"spec.workersPerNode: " + forbidden},
		},
		"node selector": {
			edit: func(r *v1alpha1.TransformRun) { r.Spec.NodeSelector = map[string]string{"a": "b"} },
			want: []string{"spec.nodeSelector: " + forbidden},
		},
		"flags and ttl, with suspend": {
			edit: func(r *v1alpha1.TransformRun) {
				r.Spec.DryRun, r.Spec.ContinueOnError, r.Spec.Overwrite, r.Spec.Suspend = true, true, true, true
				r.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
			},
			want: []string{"spec.dryRun: " + forbidden, "spec.continueOnError: " + forbidden, "spec.overwrite: " + forbidden, "spec.ttlSecondsAfterFinished: " + forbidden},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := base()
			r := old.DeepCopy()
			tc.edit(r)
			errs := ValidateUpdate(old, r)
			if diff := cmp.Diff(tc.want, webhooktest.Keys(errs)); diff != "" {
				t.Errorf("ValidateUpdate() errors (-want +got):\n%s", diff)
			}
			if msg := webhooktest.Messages(errs); len(errs) > 0 && !strings.Contains(msg, "immutable once created; create a new TransformRun") {
				t.Errorf("message %q does not say what to do", msg)
			}
		})
	}
}

// TestTemplateValidationCostsTheTemplate: a create or a dry run costs memory of the order of its
// template, never of the names it expands to, as the webhook judges every create of the cluster:
// the worst template of the count bound alone (100000 names of 1 KiB, 100 MiB expanded) is refused
// from its parts, and the largest one admitted (8 MiB of names) is checked name by name in one
// buffer.
func TestTemplateValidationCostsTheTemplate(t *testing.T) {
	const maxAlloc = 1 << 20
	cases := map[string]struct {
		template string
		wantErr  string // a part of the messages; "" for admitted
	}{
		"1 KiB template of 100 MiB": {template: strings.Repeat("a", 1010) + "{00000..99999}", wantErr: "more than 8388608 bytes of object names"},
		"largest admitted":          {template: "data/" + strings.Repeat("n", 73) + "{00000..99999}"}, // 100000 names of 83 bytes
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(func(s *spec) { s.Source = v1alpha1.RunSource{Template: tc.template} })
			var errs field.ErrorList
			alloc := allocated(func() { errs = ValidateCreate(r) })
			msg := webhooktest.Messages(errs)
			if (tc.wantErr == "") != (len(errs) == 0) || !strings.Contains(msg, tc.wantErr) {
				t.Errorf("ValidateCreate of a template of %d bytes: %q; want an error containing %q", len(tc.template), msg, tc.wantErr)
			}
			t.Logf("allocated %d bytes", alloc)
			if alloc > maxAlloc {
				t.Errorf("ValidateCreate of a template of %d bytes allocated %d bytes; want at most %d", len(tc.template), alloc, maxAlloc)
			}
		})
	}
}

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
