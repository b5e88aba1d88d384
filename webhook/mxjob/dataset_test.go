package mxjob

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
)

func TestValidateDataset(t *testing.T) {
	ds := field.NewPath("spec", "dataset")
	worker := field.NewPath("spec", "replicaSpecs").Index(2).Child("template", "spec")
	cases := map[string]struct {
		ds   v1beta1.Dataset
		edit func(*v1beta1.ReplicaSpec) // of the WORKER, spec.replicaSpecs[2]
		want field.ErrorList
	}{
		"a prefix":                      {ds: v1beta1.Dataset{Prefix: "train"}},
		"a nested prefix":               {ds: v1beta1.Dataset{Prefix: "data/train"}},
		"a template through a pipeline": {ds: v1beta1.Dataset{Template: "shard-{000..999}.tar", Transform: "decode>>crop", Args: "size=224"}},
		"neither prefix nor template": {
			ds:   v1beta1.Dataset{Transform: "decode"},
			want: field.ErrorList{field.Required(ds, "name the objects with exactly one of spec.dataset.prefix (a directory, e.g. train) or spec.dataset.template (e.g. shard-{0000..0999}.tar)")},
		},
		"both prefix and template": {
			ds:   v1beta1.Dataset{Prefix: "train", Template: "a-{0..9}"},
			want: field.ErrorList{field.Forbidden(ds.Child("template"), "only one of spec.dataset.prefix and spec.dataset.template may be set, and spec.dataset.prefix is set too; remove one")},
		},
		"a prefix with a trailing slash": {ds: v1beta1.Dataset{Prefix: "train/"}},
		"a prefix spelled uncleanly": {
			ds:   v1beta1.Dataset{Prefix: "data//train/"},
			want: field.ErrorList{field.Invalid(ds.Child("prefix"), "data//train", `write it as "data/train"`)},
		},
		"the data's root": {
			ds:   v1beta1.Dataset{Prefix: "//"},
			want: field.ErrorList{field.Invalid(ds.Child("prefix"), "//", "must name a directory of the namespace's data, not its root")},
		},
		"a prefix out of the namespace": {
			ds:   v1beta1.Dataset{Prefix: "../team-b"},
			want: field.ErrorList{field.Invalid(ds.Child("prefix"), field.OmitValueType{}, `object "../team-b" contains .. as a path element; name a directory inside the namespace's data`)},
		},
		"a template that does not parse": {
			ds:   v1beta1.Dataset{Template: "a-{9..}"},
			want: field.ErrorList{field.Invalid(ds.Child("template"), field.OmitValueType{}, `template "a-{9..}": range {9..}: bound "" is not a non-negative integer`)},
		},
		"a transform that is not a name": {
			ds: v1beta1.Dataset{Prefix: "train", Transform: "Decode"},
			want: field.ErrorList{field.Invalid(ds.Child("transform"), "Decode",
				`stage 1, "Decode", must name a Transform of the job's namespace (stages are joined by ">>"): a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)},
		},
		"a pipeline of too many stages": {
			ds: v1beta1.Dataset{Prefix: "train", Transform: strings.Repeat("a>>", 8) + "a"},
			want: field.ErrorList{field.Invalid(ds.Child("transform"), strings.Repeat("a>>", 8)+"a",
				"a pipeline has at most 8 stages, as each holds a transformer connection per object in flight; transform the dataset with a TransformRun first and read its results")},
		},
		"args without a transform": {
			ds:   v1beta1.Dataset{Prefix: "train", Args: "x"},
			want: field.ErrorList{field.Forbidden(ds.Child("args"), "args reach a Transform; set spec.dataset.transform too, or remove args")},
		},
		"args too long": {
			ds: v1beta1.Dataset{Prefix: "train", Transform: "t", Args: strings.Repeat("x", 4097)},
			want: field.ErrorList{field.Invalid(ds.Child("args"), "4097 bytes",
				"must be at most 4096 bytes, as args reach the transformer with every object; pass larger parameters in an object")},
		},
		"a worker volume of the token's name": {
			ds: v1beta1.Dataset{Prefix: "train"},
			edit: func(rs *v1beta1.ReplicaSpec) {
				rs.Template.Spec.Volumes = []corev1.Volume{{Name: "mlkube-datapath-token"}}
			},
			want: field.ErrorList{field.Invalid(worker.Child("volumes").Index(0).Child("name"), "mlkube-datapath-token",
				"is the volume the controller adds for the data path token of a job with spec.dataset; rename this volume")},
		},
		"a worker mount at the token's directory": {
			ds: v1beta1.Dataset{Prefix: "train"},
			edit: func(rs *v1beta1.ReplicaSpec) {
				rs.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "v", MountPath: "/var/run/secrets/mlkube.io/datapath/"}}
			},
			want: field.ErrorList{field.Invalid(worker.Child("containers").Index(0).Child("volumeMounts").Index(0).Child("mountPath"),
				"/var/run/secrets/mlkube.io/datapath/", "is where the controller mounts the data path token of a job with spec.dataset; mount this volume elsewhere")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := builders.MxJob("train").Dist(1, 2).Dataset(tc.ds)
			if tc.edit != nil {
				b = b.EditReplica(2, tc.edit)
			}
			got := ValidateCreate(b.Obj())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDatasetIsImmutable(t *testing.T) {
	old := builders.MxJob("train").Local().Dataset(v1beta1.Dataset{Prefix: "train"}).Obj()
	changed := builders.MxJob("train").Local().Dataset(v1beta1.Dataset{Prefix: "train", Transform: "decode"}).Obj()
	want := field.ErrorList{field.Forbidden(field.NewPath("spec", "dataset"),
		"field is immutable once the job exists (only spec.runPolicy.suspend may change); delete and recreate the job to change it")}
	if diff := cmp.Diff(want, ValidateUpdate(old, changed)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestDefaultTrimsTheDatasetPrefixsSlash(t *testing.T) {
	job := builders.MxJob("train").Local().Dataset(v1beta1.Dataset{Prefix: "data/train//"}).Obj()
	Default(job)
	if job.Spec.Dataset.Prefix != "data/train" {
		t.Errorf("prefix %q after defaulting; want data/train", job.Spec.Dataset.Prefix)
	}
	Default(job)
	if job.Spec.Dataset.Prefix != "data/train" {
		t.Errorf("prefix %q after defaulting twice; want data/train (idempotent)", job.Spec.Dataset.Prefix)
	}
}
