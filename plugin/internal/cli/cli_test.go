package cli_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

// configMaps is a Resource as a plugin declares one, over a built-in kind.
var configMaps = cli.Resource[*corev1.ConfigMap]{
	Plural:  "configmaps",
	New:     func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
	NewList: func() client.ObjectList { return &corev1.ConfigMapList{} },
	Columns: []metav1.TableColumnDefinition{
		cli.NameColumn,
		{Name: "Data", Type: "integer"},
		{Name: "Keys", Type: "string", Priority: 1},
		cli.AgeColumn,
	},
	Row: func(cm *corev1.ConfigMap, now time.Time) []any {
		keys := ""
		for k := range cm.Data {
			keys += k
		}
		return []any{cm.Name, int64(len(cm.Data)), keys, cli.Age(cm.CreationTimestamp, now)}
	},
}

type listOptions struct {
	env   *cli.Env
	flags *cli.ListFlags
	cmd   *cobra.Command
	names []string
}

func (o *listOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.names = cmd, args
	return nil
}
func (o *listOptions) Validate() error { return o.flags.Validate(o.cmd) }
func (o *listOptions) Run(ctx context.Context) error {
	return (&cli.Lister[*corev1.ConfigMap]{Env: o.env, Flags: o.flags, Resource: configMaps}).Run(ctx, o.names)
}

func newRoot(env *cli.Env) *cobra.Command {
	o := &listOptions{env: env, flags: cli.NewListFlags()}
	list := &cobra.Command{Use: "list [NAME...]", RunE: cli.RunE(o)}
	o.flags.AddFlags(list)
	fail := &cobra.Command{Use: "fail", RunE: func(*cobra.Command, []string) error {
		return &cli.ExitError{Code: 2, Err: errors.New("timed out\nwaiting")}
	}}
	return cli.NewRoot(cli.Plugin{Name: "demo", Groups: []string{"mxnet.mlkube.io"}}, env, list, fail)
}

func cm(ns, name string, age time.Duration, data ...string) *corev1.ConfigMap {
	c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(clitest.Now.Add(-age)),
	}, Data: map[string]string{}}
	for _, d := range data {
		c.Data[d] = "x"
	}
	return c
}

func TestRoot(t *testing.T) {
	objs := []client.Object{cm("default", "a", time.Hour, "k"), cm("default", "b", 49*time.Hour), cm("other", "c", 90*time.Second)}
	cases := map[string]struct {
		args     []string
		wantOut  string
		wantErr  string
		wantCode int
	}{
		"table": {
			args:    []string{"list"},
			wantOut: "NAME   DATA   AGE\na      1      60m\nb      0      2d1h\n",
		},
		"wide, no headers": {
			args:    []string{"list", "-o", "wide", "--no-headers"},
			wantOut: "a     1     k     60m\nb     0           2d1h\n",
		},
		"all namespaces": {
			args:    []string{"list", "-A"},
			wantOut: "NAMESPACE   NAME   DATA   AGE\ndefault     a      1      60m\ndefault     b      0      2d1h\nother       c      0      90s\n",
		},
		"namespace flag": {
			args:    []string{"list", "-n", "other", "-o", "name"},
			wantOut: "configmap/c\n",
		},
		"names": {
			args:    []string{"list", "b", "a", "-o", "jsonpath={.items[*].metadata.name}"},
			wantOut: "b a",
		},
		"one name as an object": {
			args:    []string{"list", "a", "-o", "jsonpath={.kind}/{.data.k}"},
			wantOut: "ConfigMap/x",
		},
		"go-template": {
			args:    []string{"list", "-o", "go-template={{range .items}}{{.metadata.name}};{{end}}"},
			wantOut: "a;b;",
		},
		"none found": {
			args:    []string{"list", "-n", "empty"},
			wantErr: "No configmaps found in namespace empty.\n",
		},
		"not found": {
			args:     []string{"list", "zz"},
			wantErr:  "error: configmaps \"zz\" not found\n",
			wantCode: 1,
		},
		"unknown output": {
			args:     []string{"list", "-o", "xml"},
			wantErr:  "error: unknown output format \"xml\"; use one of: json, yaml, name, jsonpath=…, go-template=…, wide\n",
			wantCode: 1,
		},
		"bad selector": {
			args:     []string{"list", "-l", "a==b==c"},
			wantErr:  "error: invalid --selector: found '==', expected: ',' or 'end of string'; see 'kubectl demo list --help'\n",
			wantCode: 1,
		},
		"unknown flag": {
			args:     []string{"list", "--bogus"},
			wantErr:  "error: unknown flag: --bogus; see 'kubectl demo list --help'\n",
			wantCode: 1,
		},
		"exit code and one line": {
			args:     []string{"fail"},
			wantErr:  "error: timed out; waiting\n",
			wantCode: 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := clitest.NewEnv(clientgoscheme.Scheme, objs)
			code := env.Run(newRoot(env.Env), tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d", code, tc.wantCode)
			}
			if diff := cmp.Diff(tc.wantOut, env.Stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErr, env.Stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}
