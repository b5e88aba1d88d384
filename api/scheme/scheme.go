// Package scheme builds the runtime.Scheme mlkube's manager, tests and tools share: the built-in
// Kubernetes types and mlkube's own.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	mxnetv1beta1 "github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// New returns a scheme with the built-in types and mlkube's.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(mxnetv1beta1.AddToScheme(s))
	utilruntime.Must(etlv1alpha1.AddToScheme(s))
	return s
}
