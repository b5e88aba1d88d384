package cli_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

func TestVersion(t *testing.T) {
	manager := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: cli.ManagerNamespace, Name: cli.ManagerDeployment},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "manager", Image: "mlkube/manager:v0.3.0"}},
		}}},
	}
	cases := map[string]struct {
		objs    []client.Object
		args    []string
		wantOut string
		wantErr string
	}{
		"installed": {
			objs: []client.Object{manager},
			args: []string{"version"},
			wantOut: "Plugin:   kubectl-demo dev (GO)\nServer:   v1.37.0\n" +
				"API:      mxnet.mlkube.io v1beta1\nManager:  mlkube/manager:v0.3.0\n",
		},
		"no manager": {
			args:    []string{"version"},
			wantOut: "Plugin:   kubectl-demo dev (GO)\nServer:   v1.37.0\nAPI:      mxnet.mlkube.io v1beta1\n",
			wantErr: "warning: manager: deployments.apps \"mlkube-manager\" not found\n",
		},
		"yaml": {
			objs:    []client.Object{manager},
			args:    []string{"version", "-o", "yaml"},
			wantOut: "apis:\n  mxnet.mlkube.io:\n  - v1beta1\ngo: GO\nmanager: mlkube/manager:v0.3.0\nplugin: dev\nserver: v1.37.0\n",
		},
		"client only": {
			args:    []string{"version", "--client"},
			wantOut: "Plugin:   kubectl-demo dev (GO)\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := clitest.NewEnv(clientgoscheme.Scheme, tc.objs)
			disc := env.Factory.Kube.Discovery().(*fakediscovery.FakeDiscovery)
			disc.FakedServerVersion = &version.Info{GitVersion: "v1.37.0"}
			disc.Resources = []*metav1.APIResourceList{{GroupVersion: "mxnet.mlkube.io/v1beta1"}}
			if code := env.Run(newRoot(env.Env), tc.args...); code != 0 {
				t.Errorf("exit code %d: %s", code, env.Stderr)
			}
			got := clitest.ReplaceGoVersion(env.Stdout.String())
			if diff := cmp.Diff(tc.wantOut, got); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErr, env.Stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}
