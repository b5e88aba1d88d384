package cli_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
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
func (o *listOptions) Validate() error { return o.flags.ValidateNames(o.cmd, o.names) }
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
	apiErr := &cobra.Command{Use: "apierr KIND", Args: cli.ExactArgs("KIND"), RunE: func(_ *cobra.Command, args []string) error {
		return map[string]error{
			"ours":       apierrors.NewNotFound(schema.GroupResource{Group: "mxnet.mlkube.io", Resource: "mxjobs"}, "x"),
			"pod":        apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p"),
			"forbidden":  apierrors.NewForbidden(schema.GroupResource{Group: "mxnet.mlkube.io", Resource: "mxjobs"}, "x", errors.New("no")),
			"missing":    &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "mxnet.mlkube.io", Kind: "MxJob"}},
			"refused":    fmt.Errorf("get: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}),
			"noconfig":   clientcmd.ErrEmptyConfig,
			"unexpected": errors.New("boom"),
		}[args[0]]
	}}
	req := &cobra.Command{Use: "req", RunE: func(*cobra.Command, []string) error { return nil }}
	req.Flags().String("from", "", "")
	_ = req.MarkFlagRequired("from")
	stop := cli.MarkDestructive(&cobra.Command{Use: "stop", RunE: func(*cobra.Command, []string) error { return nil }})
	top := &cobra.Command{Use: "top", RunE: func(*cobra.Command, []string) error { return nil }}
	logs := &cobra.Command{Use: "logs", RunE: func(*cobra.Command, []string) error { return nil }}
	logf := &cobra.Command{Use: "logf", RunE: func(*cobra.Command, []string) error { return nil }}
	return cli.NewRoot(cli.Plugin{Name: "demo", Groups: []string{"mxnet.mlkube.io"}}, env, list, fail, apiErr, req, stop, top, logs, logf)
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
			wantCode: cli.ExitUnknown,
		},
		"name with -A": {
			args:     []string{"list", "a", "-A"},
			wantErr:  "error: a resource cannot be retrieved by name across all namespaces; see 'kubectl demo list --help'\n",
			wantCode: 1,
		},
		"not found, ours": {
			args:     []string{"apierr", "ours"},
			wantErr:  "error: mxjobs.mxnet.mlkube.io \"x\" not found; see what there is with 'kubectl demo list' (-A for all namespaces)\n",
			wantCode: cli.ExitUnknown,
		},
		"not found, a pod": {
			args:     []string{"apierr", "pod"},
			wantErr:  "error: pods \"p\" not found\n",
			wantCode: cli.ExitUnknown,
		},
		"forbidden": {
			args:     []string{"apierr", "forbidden"},
			wantErr:  "error: mxjobs.mxnet.mlkube.io \"x\" is forbidden: no; ask an administrator for access, or choose another namespace with -n\n",
			wantCode: cli.ExitUnknown,
		},
		"not installed": {
			args:     []string{"apierr", "missing"},
			wantErr:  "error: no matches for kind \"MxJob\" in group \"mxnet.mlkube.io\"; the cluster does not serve mxnet.mlkube.io: " + cli.InstallHint + "\n",
			wantCode: cli.ExitUnknown,
		},
		"unreachable": {
			args:     []string{"apierr", "refused"},
			wantErr:  "error: get: dial tcp: connection refused; the cluster is unreachable: did you specify the right host or port? (--server, --context or KUBECONFIG)\n",
			wantCode: cli.ExitUnknown,
		},
		"no kubeconfig": {
			args:     []string{"apierr", "noconfig"},
			wantErr:  "error: no configuration has been provided, try setting KUBERNETES_MASTER environment variable; no kubeconfig found: did you specify the right host or port? (set KUBECONFIG, --kubeconfig or --server)\n",
			wantCode: cli.ExitUnknown,
		},
		"another error": {
			args:     []string{"apierr", "unexpected"},
			wantErr:  "error: boom\n",
			wantCode: cli.ExitFailed,
		},
		"required flag": {
			args:     []string{"req"},
			wantErr:  "error: required flag(s) \"from\" not set; see 'kubectl demo req --help'\n",
			wantCode: 1,
		},
		"unknown command, safe suggestions": {
			args:     []string{"lgos"},
			wantErr:  "error: unknown command \"lgos\" for \"kubectl demo\"; did you mean \"logs\"?; see 'kubectl demo --help'\n",
			wantCode: 1,
		},
		"unknown command, two suggestions": {
			args:     []string{"logx"},
			wantErr:  "error: unknown command \"logx\" for \"kubectl demo\"; did you mean \"logf\" or \"logs\"?; see 'kubectl demo --help'\n",
			wantCode: 1,
		},
		"unknown command, no destructive suggestion": {
			args:     []string{"spot"},
			wantErr:  "error: unknown command \"spot\" for \"kubectl demo\"; see 'kubectl demo --help'\n",
			wantCode: 1,
		},
		"unknown command, no suggestion": {
			args:     []string{"zzzzzz"},
			wantErr:  "error: unknown command \"zzzzzz\" for \"kubectl demo\"; see 'kubectl demo --help'\n",
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
			env.Check(t, code, tc.wantCode, tc.wantOut, tc.wantErr)
		})
	}
}

// TestKlogSilenced: client-go's klog lines (discovery retries of an unreachable cluster) do not
// reach stderr ahead of the one error line.
func TestKlogSilenced(t *testing.T) {
	// klog writes to the process's stderr, which the test reads through a file.
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = f
	defer func() { os.Stderr = stderr }()
	env := clitest.NewEnv(clientgoscheme.Scheme, nil)
	noisy := &cobra.Command{Use: "noisy", RunE: func(*cobra.Command, []string) error {
		klog.Error("couldn't get current server API group list")
		return errors.New("unreachable")
	}}
	code := env.Run(cli.NewRoot(cli.Plugin{Name: "demo"}, env.Env, noisy), "noisy")
	klog.Flush()
	os.Stderr = stderr
	logged, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || env.Stderr.String() != "error: unreachable\n" || len(logged) != 0 {
		t.Errorf("exit %d, stderr %q, klog %q; want 1, the error line alone, no klog", code, env.Stderr.String(), logged)
	}
}

// TestHelpGroupsAndOptions: the help lists commands under their workflow's heading and leaves
// kubectl's global flags to `options`, as kubectl does.
func TestHelpGroupsAndOptions(t *testing.T) {
	env := clitest.NewEnv(clientgoscheme.Scheme, nil)
	get := &cobra.Command{Use: "get", Short: "Get things", RunE: func(*cobra.Command, []string) error { return nil }}
	get.Flags().Bool("all", false, "Every thing.")
	p := cli.Plugin{Name: "demo", CommandGroups: []cli.CommandGroup{{Title: "Inspect", Commands: []string{"get"}}}}
	newRoot := func() *cobra.Command {
		return cli.NewRoot(p, env.Env, get)
	}
	if code := env.Run(newRoot(), "get", "--help"); code != 0 {
		t.Fatalf("get --help: exit %d: %s", code, env.Stderr)
	}
	want := "Get things\n\nUsage:\n  kubectl demo get [flags]\n\nFlags:\n      --all    Every thing.\n  -h, --help   help for get\n" +
		"Use \"kubectl demo options\" for a list of global command-line options (applies to all commands).\n"
	if diff := cmp.Diff(want, env.Stdout.String()); diff != "" {
		t.Errorf("get --help (-want +got):\n%s", diff)
	}
	env.Stdout.Reset()
	if code := env.Run(newRoot(), "--help"); code != 0 {
		t.Fatalf("--help: exit %d: %s", code, env.Stderr)
	}
	for _, s := range []string{"\nInspect:\n  get         Get things\n", "\nOther Commands:\n  completion", "  options     Print the flags every command takes"} {
		if !strings.Contains(env.Stdout.String(), s) {
			t.Errorf("--help lacks %q:\n%s", s, env.Stdout)
		}
	}
	if strings.Contains(env.Stdout.String(), "--kubeconfig") {
		t.Errorf("--help lists the global flags:\n%s", env.Stdout)
	}
	env.Stdout.Reset()
	if code := env.Run(newRoot(), "options"); code != 0 || !strings.HasPrefix(env.Stdout.String(), "The following options can be passed to any command:\n\n") ||
		!strings.Contains(env.Stdout.String(), "--kubeconfig string") {
		t.Errorf("options: exit %d:\n%s", code, env.Stdout)
	}
}
