package mxjob

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

var inTeamA = admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Namespace: "team-a"}}

// held answers a review as RBAC would for ServiceAccounts holding exactly the rights named
// "USER VERB RESOURCE[ NAME]".
func held(rights ...string) func(authzv1.SubjectAccessReviewSpec) (bool, error) {
	return func(s authzv1.SubjectAccessReviewSpec) (bool, error) {
		a := s.ResourceAttributes
		return slices.Contains(rights, strings.TrimSpace(s.User+" "+a.Verb+" "+a.Resource+" "+a.Name)), nil
	}
}

func TestWorkersMustBeAbleToReadTheDataset(t *testing.T) {
	const trainer = "system:serviceaccount:team-a:trainer"
	asTrainer := func(rs *v1beta1.ReplicaSpec) { rs.Template.Spec.ServiceAccountName = "trainer" }
	cases := map[string]struct {
		ds     v1beta1.Dataset
		edit   func(*v1beta1.ReplicaSpec) // of the WORKER, spec.replicaSpecs[2]
		rights []string
		want   field.ErrorList
	}{
		"no dataset asks nothing": {},
		"a prefix read by its ServiceAccount": {
			ds: v1beta1.Dataset{Prefix: "train"}, edit: asTrainer, rights: []string{trainer + " get objects", trainer + " list objects"},
		},
		"a prefix through a pipeline": {
			ds: v1beta1.Dataset{Prefix: "train", Transform: "decode>>crop"}, edit: asTrainer,
			rights: []string{trainer + " get objects", trainer + " list objects", trainer + " use transforms decode", trainer + " use transforms crop"},
		},
		"the default ServiceAccount without rights": {
			ds: v1beta1.Dataset{Prefix: "train"},
			want: field.ErrorList{field.Forbidden(field.NewPath("spec", "dataset", "prefix"),
				"the workers run as ServiceAccount team-a/default, which may not get objects.etl.mlkube.io in namespace team-a, as reading the dataset through the node agents needs; "+
					"an admin of namespace team-a grants it with: kubectl -n team-a create rolebinding default-datapath --clusterrole=mlkube-datapath-viewer --serviceaccount=team-a:default "+
					"(or set the workers' serviceAccountName to a ServiceAccount that holds it)")},
		},
		"a ServiceAccount that may read but not use the transform": {
			ds: v1beta1.Dataset{Template: "s-{0..9}", Transform: "decode"}, edit: asTrainer, rights: []string{trainer + " get objects"},
			want: field.ErrorList{field.Forbidden(field.NewPath("spec", "dataset", "transform"),
				"the workers run as ServiceAccount team-a/trainer, which may not use transforms.etl.mlkube.io decode in namespace team-a, as reading the dataset through the node agents needs; "+
					"an admin of namespace team-a grants it with: kubectl -n team-a create rolebinding trainer-datapath --clusterrole=mlkube-datapath-user --serviceaccount=team-a:trainer "+
					"(or set the workers' serviceAccountName to a ServiceAccount that holds it)")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := builders.MxJob("train").Dist(1, 2)
			if tc.ds != (v1beta1.Dataset{}) {
				b = b.Dataset(tc.ds)
			}
			if tc.edit != nil {
				b = b.EditReplica(2, tc.edit)
			}
			c, reviews := webhooktest.Reviewer(held(tc.rights...))
			errs, err := WorkerAccess(context.Background(), c, inTeamA, b.Obj())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			for _, r := range *reviews {
				if !slices.Contains(r.Groups, "system:serviceaccounts:team-a") || r.ResourceAttributes.Namespace != "team-a" {
					t.Errorf("a review asks about %s of groups %v in namespace %q; want the workers' ServiceAccount in team-a", r.User, r.Groups, r.ResourceAttributes.Namespace)
				}
			}
			if tc.ds == (v1beta1.Dataset{}) && len(*reviews) > 0 {
				t.Errorf("a job without a dataset asked %d reviews", len(*reviews))
			}
		})
	}
}

// No answer is no admission: the webhook fails closed.
func TestWorkerReviewFailureIsAnError(t *testing.T) {
	c, _ := webhooktest.Reviewer(func(authzv1.SubjectAccessReviewSpec) (bool, error) { return true, errors.New("connection refused") })
	job := builders.MxJob("train").Local().Dataset(v1beta1.Dataset{Prefix: "train"}).Obj()
	_, err := WorkerAccess(context.Background(), c, inTeamA, job)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "ServiceAccount team-a/default may get objects") {
		t.Fatalf("got %v; want the review's failure, naming the ServiceAccount and the right", err)
	}
}
