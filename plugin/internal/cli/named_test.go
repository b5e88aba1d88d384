package cli_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

// newNamedRoot is a plugin with two cli.Named commands over ConfigMaps: delete, with
// --ignore-not-found and the default message for no names, and wipe, with its own.
func newNamedRoot(env *cli.Env) *cobra.Command {
	del := &cli.Named[*corev1.ConfigMap]{Env: env, Resource: configMaps, Noun: "maps",
		Act: func(ctx context.Context, c client.Client, cm *corev1.ConfigMap) (string, error) {
			return fmt.Sprintf("configmap %q deleted", cm.Name), c.Delete(ctx, cm)
		}}
	delCmd := del.Bind(&cobra.Command{Use: "delete"}, "Delete every ConfigMap of the namespace.")
	delCmd.Flags().BoolVar(&del.IgnoreNotFound, "ignore-not-found", false, "")
	var wipe *cli.Named[*corev1.ConfigMap]
	wipe = &cli.Named[*corev1.ConfigMap]{Env: env, Resource: configMaps, Noun: "maps", Missing: "name at least one map, or pass --all",
		Act: func(ctx context.Context, c client.Client, cm *corev1.ConfigMap) (string, error) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
				return "", err
			}
			cm.Data = nil
			return "configmap/" + cm.Name + " " + wipe.Cmd.CalledAs(), c.Update(ctx, cm)
		}}
	wipeCmd := wipe.Bind(&cobra.Command{Use: "wipe", Aliases: []string{"clear"}}, "")
	return cli.NewRoot(cli.Plugin{Name: "demo"}, env, delCmd, wipeCmd)
}

func TestNamed(t *testing.T) {
	objs := []client.Object{cm("default", "a", time.Hour, "k"), cm("default", "b", time.Hour, "k"), cm("other", "c", time.Hour, "k")}
	cases := map[string]struct {
		args     []string
		wantOut  string
		wantErr  string
		wantCode int
		wantLeft []string
	}{
		"names": {
			args: []string{"delete", "b", "a"}, wantOut: "configmap \"b\" deleted\nconfigmap \"a\" deleted\n", wantLeft: []string{"c"},
		},
		"all of the namespace": {
			args: []string{"delete", "--all", "-n", "other"}, wantOut: "configmap \"c\" deleted\n", wantLeft: []string{"a", "b"},
		},
		"all of an empty namespace": {
			args: []string{"delete", "--all", "-n", "empty"}, wantErr: "No configmaps found in namespace empty.\n", wantLeft: []string{"a", "b", "c"},
		},
		"names and --all": {
			args: []string{"delete", "a", "--all"}, wantCode: 1, wantLeft: []string{"a", "b", "c"},
			wantErr: "error: name maps or pass --all, not both; see 'kubectl demo delete --help'\n",
		},
		"neither": {
			args: []string{"delete"}, wantCode: 1, wantLeft: []string{"a", "b", "c"},
			wantErr: "error: NAME is required (or --all); see 'kubectl demo delete --help'\n",
		},
		"neither, the command's own message": {
			args: []string{"wipe"}, wantCode: 1, wantLeft: []string{"a", "b", "c"},
			wantErr: "error: name at least one map, or pass --all; see 'kubectl demo wipe --help'\n",
		},
		"a missing name leaves the others done": {
			args: []string{"delete", "a", "zz", "b"}, wantCode: cli.ExitUnknown, wantLeft: []string{"c"},
			wantOut: "configmap \"a\" deleted\nconfigmap \"b\" deleted\n",
			wantErr: "error: configmaps \"zz\" not found; see what there is with 'kubectl demo list' (-A for all namespaces)\n",
		},
		"--ignore-not-found": {
			args: []string{"delete", "zz", "a", "--ignore-not-found"}, wantOut: "configmap \"a\" deleted\n", wantLeft: []string{"b", "c"},
		},
		"the word called": {
			args: []string{"clear", "a"}, wantOut: "configmap/a clear\n", wantLeft: []string{"a", "b", "c"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := clitest.NewEnv(clientgoscheme.Scheme, objs)
			code := env.Run(newNamedRoot(env.Env), tc.args...)
			env.Check(t, code, tc.wantCode, tc.wantOut, tc.wantErr)
			var left corev1.ConfigMapList
			if err := env.Factory.Ctrl.List(context.Background(), &left); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, cm := range left.Items {
				names = append(names, cm.Name)
			}
			if diff := cmp.Diff(tc.wantLeft, names); diff != "" {
				t.Errorf("left (-want +got):\n%s", diff)
			}
		})
	}
}
