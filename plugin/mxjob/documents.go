package mxjob

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// decodeJob reads one document as an MxJob, converting a Kubeflow MXJob; changes lists what the
// conversion changed (nothing for an MxJob). Unknown fields are refused, so a typo is not lost.
func decodeJob(doc []byte) (*v1beta1.MxJob, []string, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, nil, err
	}
	switch {
	case isKubeflowMXJob(tm):
		return convertKubeflow(doc)
	case tm.APIVersion == v1beta1.GroupVersion.String() && tm.Kind == "MxJob":
		var job v1beta1.MxJob
		if err := yaml.UnmarshalStrict(doc, &job); err != nil {
			return nil, nil, err
		}
		return &job, nil, nil
	}
	return nil, nil, fmt.Errorf("%s %s is not an MxJob; this takes %s MxJobs and kubeflow.org/v1 or v1beta1 MXJobs (use kubectl apply for the rest)",
		orUnset(tm.APIVersion), orUnset(tm.Kind), v1beta1.GroupVersion)
}

func orUnset(s string) string {
	if s == "" {
		return "<unset>"
	}
	return s
}
