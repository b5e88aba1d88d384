package etl

import (
	"context"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// Plugin is kubectl etl.
var Plugin = cli.Plugin{
	Name:  "etl",
	Short: "Run transformation code next to the data: Transforms and TransformRuns of mlkube",
	Long: `kubectl etl creates and runs Transforms (etl.mlkube.io/v1alpha1): user transformation code that
runs next to the data, one transformer pod per node, fed by the node's data path agent. It sends
objects through them and transforms whole datasets with TransformRuns, and copies, lists and
removes the namespace's objects (cp, ls, rm etl:NAME, cat).`,
	Example: `  # A Transform from Python code, then an object through it
  kubectl etl init code --name upper --runtime python3.11 --from-file upper.py
  kubectl etl object upper notes.txt -

  # A local directory into the namespace's objects under raw/
  kubectl etl cp ./data etl:raw/

  # Every object under raw/ into out/, on every node at once, with a progress bar
  kubectl etl run upper --src raw --dst out --wait`,
	Groups: []string{v1alpha1.GroupVersion.Group},
	CommandGroups: []cli.CommandGroup{
		{Title: "Create and run Transforms", Commands: []string{"init", "object", "run", "runs"}},
		{Title: "Inspect Transforms", Commands: []string{"get", "describe", "details", "errors", "logs", "top", "health", "wait"}},
		{Title: "Manage Transforms", Commands: []string{"suspend", "resume", "rm"}},
		{Title: "The namespace's objects", Commands: []string{"cp", "ls", "cat"}},
	},
}

// NewScheme knows the types kubectl etl reads: Transforms, TransformRuns, pods and events, and
// the manager's Deployment, which `version` reads (PodMetrics are read as unstructured).
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(v1alpha1.AddToScheme(s))
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(appsv1.AddToScheme(s))
	return s
}

// dataPath makes what `object`, `cp`, `ls`, `rm` and `cat` need to reach agents from outside the
// cluster; tests replace it with an httptest agent.
type dataPath func() (TokenIssuer, AgentForwarder, *http.Client, error)

// clusterDataPath reaches agents through the API server of env's kubeconfig.
func clusterDataPath(env *cli.Env) dataPath {
	return func() (TokenIssuer, AgentForwarder, *http.Client, error) {
		cs, err := env.Clients.Kubernetes()
		if err != nil {
			return nil, nil, nil, err
		}
		cfg, err := env.Flags.ToRESTConfig()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("reading the kubeconfig: %w", err)
		}
		return NewTokenRequester(cs, env.ErrOut), portForwarder{cs: cs, cfg: cfg}, dataPathClient(), nil
	}
}

// Commands are kubectl etl's commands.
func Commands(env *cli.Env) []*cobra.Command {
	return commands(env, clusterDataPath(env))
}

func commands(env *cli.Env, dp dataPath) []*cobra.Command {
	return []*cobra.Command{
		newInitCommand(env), newGetCommand(env), newDescribeCommand(env), newDetailsCommand(env), newErrorsCommand(env),
		newLogsCommand(env), newTopCommand(env), newHealthCommand(env), newWaitCommand(env),
		newSuspendCommand(env, true), newSuspendCommand(env, false), newRmCommand(env, dp),
		newObjectCommand(env, dp), newRunCommand(env), newRunsCommand(env, dp),
		newCpCommand(env, dp), newLsCommand(env, dp), newCatCommand(env, dp),
	}
}

// completeTransforms completes Transform names in the namespace of --namespace.
func completeTransforms(env *cli.Env) cobra.CompletionFunc {
	return cli.CompleteNames(env, func() client.ObjectList { return &v1alpha1.TransformList{} })
}

// completeFirstTransform completes the Transform name of commands that take one, then nothing.
func completeFirstTransform(env *cli.Env) cobra.CompletionFunc {
	names := completeTransforms(env)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(cmd, args, toComplete)
	}
}

// completeNodes completes --node with the nodes of the Transform named first on the line.
func completeNodes(env *cli.Env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		t, err := getTransform(ctx, env, args[0])
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var nodes []cobra.Completion
		for _, n := range t.Status.Nodes {
			nodes = append(nodes, n.Node)
		}
		return nodes, cobra.ShellCompDirectiveNoFileComp
	}
}

// getTransform reads the Transform name of the namespace of --namespace.
func getTransform(ctx context.Context, env *cli.Env, name string) (*v1alpha1.Transform, error) {
	c, err := env.Clients.Client()
	if err != nil {
		return nil, err
	}
	ns, _, err := env.Clients.Namespace()
	if err != nil {
		return nil, err
	}
	var t v1alpha1.Transform
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Main runs kubectl etl and returns its exit code.
func Main() int { return cli.Main(Plugin, NewScheme(), Commands) }

// NewRoot returns kubectl etl's root command on env, as Main runs it.
func NewRoot(env *cli.Env) *cobra.Command { return cli.NewRoot(Plugin, env, Commands(env)...) }
