package mxjob

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

func TestSubmitDataset(t *testing.T) {
	submit := func(flags ...string) []string {
		return append(append([]string{"submit", "train", "--mode", "local", "--image", "i"}, flags...), "--", "python")
	}
	datasetOf := func(want *v1beta1.Dataset, wantSA string) func(t *testing.T, c client.Client) {
		return func(t *testing.T, c client.Client) {
			var job v1beta1.MxJob
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "train"}, &job); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, job.Spec.Dataset); diff != "" {
				t.Errorf("spec.dataset (-want +got):\n%s", diff)
			}
			if sa := job.Spec.ReplicaSpecs[0].Template.Spec.ServiceAccountName; sa != wantSA {
				t.Errorf("the worker's serviceAccountName is %q; want %q", sa, wantSA)
			}
		}
	}
	runCases(t, map[string]cmdCase{
		"a prefix through a transform": {
			args:    submit("--dataset", "etl:train/", "--transform", "decode"),
			wantOut: "mxjob.mxnet.mlkube.io/train created\n",
			check:   datasetOf(&v1beta1.Dataset{Prefix: "train", Transform: "decode"}, ""),
		},
		"a template read as stored, by a ServiceAccount of its own": {
			args:    submit("--dataset", "etl:shard-{00..09}.tar", "--service-account", "trainer"),
			wantOut: "mxjob.mxnet.mlkube.io/train created\n",
			check:   datasetOf(&v1beta1.Dataset{Template: "shard-{00..09}.tar"}, "trainer"),
		},
		"transform args": {
			args:    submit("--dataset", "etl:data/train", "--transform", "crop>>resize", "--transform-args", "size=224", "--dry-run=client", "-o", "jsonpath={.spec.dataset.prefix} {.spec.dataset.transform} {.spec.dataset.args}"),
			wantOut: "data/train crop>>resize size=224",
		},
		"no etl: scheme": {
			args:     submit("--dataset", "train/"),
			wantErr:  "error: --dataset \"train/\" must name objects of the namespace's data: etl:DIR/ (a directory) or etl:TEMPLATE (e.g. etl:shard-{000..999}.tar); see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"the data's root": {
			args:     submit("--dataset", "etl:/"),
			wantErr:  "error: --dataset \"etl:/\" must name a directory inside the namespace's data, e.g. etl:train/; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"out of the namespace": {
			args:     submit("--dataset", "etl:../team-b/"),
			wantErr:  "error: --dataset \"etl:../team-b/\" must name a directory inside the namespace's data, e.g. etl:train/; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a template that does not parse": {
			args:     submit("--dataset", "etl:a-{9..}"),
			wantErr:  "error: --dataset: template \"a-{9..}\": range {9..}: bound \"\" is not a non-negative integer; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a transform that is no name": {
			args:     submit("--dataset", "etl:train/", "--transform", "decode>>Crop"),
			wantErr:  "error: --transform \"decode>>Crop\": stage 2, \"Crop\", is not a Transform's name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a pipeline too long": {
			args:     submit("--dataset", "etl:train/", "--transform", strings.Repeat("a>>", 8)+"a"),
			wantErr:  "error: --transform \"a>>a>>a>>a>>a>>a>>a>>a>>a\" has more than 8 stages; transform the dataset with a TransformRun first; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a transform without a dataset": {
			args:     submit("--transform", "decode"),
			wantErr:  "error: --transform applies to the workers' reads of --dataset; add --dataset etl:DIR/; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"args without a transform": {
			args:     submit("--dataset", "etl:train/", "--transform-args", "x"),
			wantErr:  "error: --transform-args reach a Transform; add --transform; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"args too long": {
			args:     submit("--dataset", "etl:train/", "--transform", "t", "--transform-args", strings.Repeat("x", 4097)),
			wantErr:  "error: --transform-args must be at most 4096 bytes; pass larger parameters in an object; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a ServiceAccount that is no name": {
			args:     submit("--dataset", "etl:train/", "--service-account", "Trainer"),
			wantErr:  "error: --service-account \"Trainer\" is not a ServiceAccount's name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
	})
}

func TestDescribeDataset(t *testing.T) {
	job := running.DeepCopy()
	job.Spec.Dataset = &v1beta1.Dataset{Prefix: "train", Transform: "decode", Args: "size=224"}
	env := newTestEnv([]client.Object{job}, nil)
	if code := env.Run(NewRoot(env.Env), "describe", "mnist"); code != 0 {
		t.Fatalf("exit code %d: %s", code, env.Stderr)
	}
	const want = "Run Policy:   cleanPodPolicy=<none> backoffLimit=none activeDeadline=none ttlAfterFinished=none suspend=false\n" +
		"Dataset:      etl:train/ through decode (args \"size=224\")\nReplicas:\n"
	if !strings.Contains(env.Stdout.String(), want) {
		t.Errorf("describe shows:\n%s\nwant it to hold:\n%s", env.Stdout, want)
	}
}
