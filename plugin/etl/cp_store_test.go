package etl

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// TestCpWithAStore: kubectl etl cp with s3:// on one side creates a copy run (no transform)
// between the store's prefix and the namespace's objects, either way, and follows it to its end;
// arguments that name no copy between a store and the namespace's objects are refused, naming
// what to write.
func TestCpWithAStore(t *testing.T) {
	var created []v1alpha1.TransformRunSpec
	named := interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		r := obj.(*v1alpha1.TransformRun)
		if r.GenerateName != "cp-" {
			t.Errorf("run named %q, generateName %q; want generateName cp-", r.Name, r.GenerateName)
		}
		r.Name, r.GenerateName = "r1", ""
		created = append(created, r.Spec)
		return c.Create(ctx, obj, opts...)
	}}
	done := []*v1alpha1.TransformRun{withPhase(v1alpha1.RunRunning), withPhase(v1alpha1.RunSucceeded)}
	runRunsCases(t, "", map[string]runsCase{
		"from a store": {testCase: testCase{args: []string{"cp", "s3://raw/images/", "etl:imgs/"}, wantOut: "transformrun.etl.mlkube.io/r1 created\n" + progressDone, intercept: named},
			changes: done},
		"into a store": {testCase: testCase{args: []string{"cp", "etl:out", "s3://processed/out/"}, wantOut: "transformrun.etl.mlkube.io/r1 created\n" + progressDone, intercept: named},
			changes: done},
		"two stores": {testCase: testCase{args: []string{"cp", "s3://raw/a", "s3://processed/b"}, wantCode: 1,
			wantErr: "error: copy between s3://STORE/PREFIX and the namespace's objects, etl:PREFIX; s3://raw/a names neither; see 'kubectl etl cp --help'\n"}},
		"a local side": {testCase: testCase{args: []string{"cp", "s3://raw/a", "./here"}, wantCode: 1,
			wantErr: "error: copy between s3://STORE/PREFIX and the namespace's objects, etl:PREFIX; ./here names neither; see 'kubectl etl cp --help'\n"}},
		"a whole bucket": {testCase: testCase{args: []string{"cp", "s3://raw/", "etl:imgs/"}, wantCode: 1,
			wantErr: "error: s3://raw/: want s3://STORE/PREFIX, STORE an ObjectStore of the namespace (kubectl get stores) and PREFIX a prefix of its keys; see 'kubectl etl cp --help'\n"}},
		"the namespace's root": {testCase: testCase{args: []string{"cp", "s3://raw/a", "etl:"}, wantCode: 1,
			wantErr: "error: etl:: name a prefix of the namespace's objects, as in etl:imported/; see 'kubectl etl cp --help'\n"}},
	})
	want := []v1alpha1.TransformRunSpec{
		{Source: v1alpha1.RunSource{Store: "raw", Prefix: "images"}, Destination: v1alpha1.RunDestination{Prefix: "imgs"}},
		{Source: v1alpha1.RunSource{Prefix: "out"}, Destination: v1alpha1.RunDestination{Store: "processed", Prefix: "out"}},
	}
	if len(created) == 2 && created[0].Source.Prefix == "out" {
		created[0], created[1] = created[1], created[0] // the cases run in map order
	}
	if diff := cmp.Diff(want, created); diff != "" {
		t.Errorf("the copies' runs (-want +got):\n%s", diff)
	}
}

// progressDone is what followRun prints off a terminal as the run goes through done.
const progressDone = "Pending 0/0 objects\nRunning 5/10 objects, 1 failed, 2 obj/s, 1.0 MB/s\nSucceeded 5/10 objects, 1 failed, 2 obj/s, 1.0 MB/s\n"
