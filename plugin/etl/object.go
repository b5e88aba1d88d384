package etl

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// TokenIssuer issues data path tokens: ServiceAccount tokens for the audience wire.Audience,
// through the TokenRequest API, so the caller acts with the namespace's identity and none of the
// user's own credentials reaches an agent (docs/datapath-rbac.md).
type TokenIssuer interface {
	Token(ctx context.Context, namespace, serviceAccount string) (string, error)
}

// AgentForwarder reaches the data path agent of a node (with node empty, of any node) from outside
// the cluster: it returns a base URL that leads to the agent, and a function that closes the way.
type AgentForwarder interface {
	Forward(ctx context.Context, node string) (baseURL string, stop func(), err error)
}

// objectRequest is one object sent through a Transform, or a pipeline a>>b, by a node's agent.
type objectRequest struct {
	base, namespace, pipeline, object, args, token string
	// serviceAccount is who the token speaks for, named in refusals.
	serviceAccount string
}

// url is the request's address in the agent's inline API (api/wire/api.go), args in its query.
func (r objectRequest) url() string {
	u := r.base + wire.PathTransform + r.namespace + "/" + url.PathEscape(r.pipeline) + wire.ObjectPath(r.object)
	if r.args != "" {
		u += "?" + wire.Query{Args: r.args}.Encode()
	}
	return u
}

// transformRequest sends r to the agent, with body for a PUT (nil for a GET of the stored object),
// and copies the result to out. The agent's refusals become errors that say which binding is
// missing.
func transformRequest(ctx context.Context, hc *http.Client, r objectRequest, method string, body io.Reader, out io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, method, r.url(), body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("calling the data path agent: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return refusal(r, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	// A 200 whose body ends early is a failed transformation (api/wire): the copy's error says so.
	if _, err := io.Copy(out, resp.Body); err != nil {
		return fmt.Errorf("reading the result of %s: %w", r.pipeline, err)
	}
	return nil
}

// refusal explains an agent's answer other than 200, with the remedy for the ones a user can fix.
func refusal(r objectRequest, code int, msg string) error {
	sa := r.namespace + ":" + r.serviceAccount
	if code == http.StatusForbidden {
		return fmt.Errorf("ServiceAccount %s may not use Transform %s (403: %s); bind it to the data path role: %s (docs/datapath-rbac.md), or pass --service-account",
			sa, r.pipeline, msg, bindCommand(r.namespace, r.serviceAccount, r.serviceAccount+"-datapath", userRole))
	}
	return agentRefusal(sa, code, msg, fmt.Sprintf("transform %s of %s", r.pipeline, r.object))
}

// The data path ClusterRoles (docs/datapath-rbac.md): the viewer reads the namespace's objects,
// the user also writes them and uses its Transforms.
const (
	viewerRole = "mlkube-datapath-viewer"
	userRole   = "mlkube-datapath-user"
)

// bindCommand is the kubectl command that binds the ClusterRole role, as RoleBinding binding, to
// ServiceAccount sa of namespace ns.
func bindCommand(ns, sa, binding, role string) string {
	return fmt.Sprintf("kubectl -n %s create rolebinding %s --clusterrole=%s --serviceaccount=%s:%s", ns, binding, role, ns, sa)
}

// agentRefusal explains the answers of an agent that mean the same for every request: a token it
// does not accept, and otherwise the code and the agent's message, about what.
func agentRefusal(sa string, code int, msg, what string) error {
	if code == http.StatusUnauthorized {
		return fmt.Errorf("the data path agent did not accept the token of ServiceAccount %s (401: %s); the agent checks tokens for audience %q (its --token-audience), see docs/datapath-rbac.md",
			sa, msg, wire.Audience)
	}
	return fmt.Errorf("%s: %d %s: %s", what, code, http.StatusText(code), msg)
}

// writeResult runs produce with the destination: stdout for "-", else a temporary file beside
// dst renamed to it only once complete, so a failed transformation leaves no partial result.
func writeResult(dst string, stdout io.Writer, produce func(io.Writer) error) (err error) {
	if dst == "-" {
		return produce(stdout)
	}
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	// CreateTemp makes the file private; a result is an ordinary file.
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := produce(f); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), dst)
}

// readyNode is node if every Transform of a pipeline is ready there, or with node empty the first
// node (by status order, which is by name) where they all are: the agent runs every stage of a
// pipeline with the transformers of its own node.
func readyNode(pipeline string, ts []*v1alpha1.Transform, node string) (string, error) {
	var common, where []string
	for i, t := range ts {
		var ready []string
		for _, n := range t.Status.Nodes {
			if n.Ready {
				ready = append(ready, n.Node)
			}
		}
		switch {
		case len(ready) == 0:
			return "", fmt.Errorf("transform %s is ready on no node (stage %s); see kubectl etl health %s", t.Name, stage(t), t.Name)
		case node != "" && !slices.Contains(ready, node):
			return "", fmt.Errorf("transform %s is not ready on node %s; it is on %s", t.Name, node, strings.Join(ready, ", "))
		case i == 0:
			common = ready
		default:
			common = slices.DeleteFunc(common, func(n string) bool { return !slices.Contains(ready, n) })
		}
		// "md5 is on node-a, upper on node-b": the verb once.
		verb := " on "
		if i == 0 {
			verb = " is on "
		}
		where = append(where, t.Name+verb+strings.Join(ready, ", "))
	}
	switch {
	case node != "":
		return node, nil
	case len(common) == 0:
		return "", fmt.Errorf("pipeline %s is ready on no one node: %s; see kubectl etl health", pipeline, strings.Join(where, ", "))
	}
	return common[0], nil
}

// stdinObject is the name of an object read from stdin, unless --object-name gives one.
const stdinObject = "stdin"

type objectOptions struct {
	env      *cli.Env
	dataPath dataPath
	cmd      *cobra.Command
	// pipeline is NAME: a Transform, or a pipeline a>>b.
	pipeline, src, dst string
	node               string
	objectName         string
	args               string
	serviceAccount     string
	// stored is the object of the namespace SRC names (etl:PATH), "" for a local SRC.
	stored string
}

func newObjectCommand(env *cli.Env, dp dataPath) *cobra.Command {
	o := &objectOptions{env: env, dataPath: dp}
	cmd := &cobra.Command{
		Use:   "object NAME SRC DST|-",
		Short: "Send a local file, stdin or a stored object through a Transform or a pipeline",
		Long: fmt.Sprintf(`Send SRC through the Transform NAME, or through a pipeline "a>>b" of them, and write the result to
DST, a local file, or stdout for "-".

SRC is a local file, "-" for stdin, or etl:PATH for an object of the namespace (as cp, ls and cat
name them). A local file or stdin goes to the data path agent of a node where every stage is ready
(--node picks it), named after the file's base name, "stdin" for stdin, or --object-name. A stored
object is read by the agent of the node that holds it and only the result crosses the network, as
with kubectl etl cat OBJECT --transform NAME. --args reach each transformer with the object, as
AIStore's etl args do (the args query of the agent's API); a Python code Transform's function gets
them when the runtime passes them to it (docs/transforms.md).

The agent is reached by a port-forward through the API server, with a token for the audience
%q of a ServiceAccount of the namespace, %s unless --service-account names
another, from the TokenRequest API: the agent acts with that ServiceAccount's rights, never with
yours. The first use creates %s in the namespace and says so; bind it once to the
ClusterRole mlkube-datapath-user, which allows 'use' on Transforms and reading and writing
objects (docs/datapath-rbac.md).`, wire.Audience, cliServiceAccount, cliServiceAccount),
		Example: `  # The md5 of a file, then of stdin
  kubectl etl object md5 photo.jpg -
  cat photo.jpg | kubectl etl object md5 - - --object-name photo.jpg

  # A stored object through a pipeline, on its node, with args
  kubectl etl object 'resize>>md5' etl:raw/photo.jpg - --args 64x64

  # Through the transformer on one node, as ServiceAccount loader, into a file
  kubectl etl object resize photo.jpg small.jpg --node worker-1 --service-account loader`,
		Args: cli.ExactArgs("NAME", "SRC", "DST"),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return completeTransforms(env)(cmd, args, toComplete)
			}
			return nil, cobra.ShellCompDirectiveDefault // SRC and DST are local files
		},
		RunE: cli.RunE(o),
	}
	cmd.Flags().StringVar(&o.node, "node", "", "The node whose agent and transformers to use; default any node where every stage is ready. Not with a stored object.")
	cmd.Flags().StringVar(&o.objectName, "object-name", "", `The object's name the transformers see; default SRC's base name, "stdin" for -. Not with a stored object.`)
	addArgsFlag(cmd, &o.args)
	addServiceAccountFlag(cmd, env, &o.serviceAccount)
	_ = cmd.RegisterFlagCompletionFunc("node", completeNodes(env))
	return cmd
}

// addServiceAccountFlag binds --service-account, the identity of every data path command.
func addServiceAccountFlag(cmd *cobra.Command, env *cli.Env, sa *string) {
	cmd.Flags().StringVar(sa, "service-account", cliServiceAccount,
		fmt.Sprintf("The ServiceAccount of the namespace whose identity the data path sees; %s is created on first use.", cliServiceAccount))
	_ = cmd.RegisterFlagCompletionFunc("service-account", cli.CompleteNames(env, func() client.ObjectList { return &corev1.ServiceAccountList{} }))
}

// addArgsFlag binds --args, sent to the transformers with each object.
func addArgsFlag(cmd *cobra.Command, args *string) {
	cmd.Flags().StringVar(args, "args", "", fmt.Sprintf("Arguments passed to the transformers with the object, as AIStore's etl args; at most %d bytes.", wire.MaxArgs))
}

func (o *objectOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.pipeline, o.src, o.dst = cmd, args[0], args[1], args[2]
	if strings.HasPrefix(o.src, remoteScheme) {
		o.stored = objectArg(o.src)
	}
	return nil
}

func (o *objectOptions) Validate() error {
	if err := checkPipeline(o.cmd, "NAME", o.pipeline, o.args); err != nil {
		return err
	}
	if strings.HasPrefix(o.dst, remoteScheme) {
		return cli.UsageError(o.cmd, "DST is a local file or - (stdout); to store the result: kubectl etl object NAME SRC - | kubectl etl cp - %s", o.dst)
	}
	if o.stored == "" {
		return wire.CheckObject(o.objectNameOf())
	}
	switch {
	case isPrefix(o.stored):
		return cli.UsageError(o.cmd, "SRC %s is a prefix: name one object, or transform every object under it with kubectl etl run", o.src)
	case o.node != "":
		return cli.UsageError(o.cmd, "--node does not go with a stored object: it goes through the Transform on the node that holds it")
	case o.objectName != "":
		return cli.UsageError(o.cmd, "--object-name does not go with a stored object, which keeps its name")
	}
	return wire.CheckObject(o.stored)
}

// checkPipeline refuses a pipeline (the argument or flag what) with an empty stage or too many,
// and args over the agent's limit.
func checkPipeline(cmd *cobra.Command, what, pipeline, args string) error {
	if len(args) > wire.MaxArgs {
		return cli.UsageError(cmd, "--args is %d bytes; at most %d are allowed", len(args), wire.MaxArgs)
	}
	stages := wire.SplitPipeline(pipeline)
	if len(stages) > wire.MaxPipelineStages {
		return cli.UsageError(cmd, "%s has more than %d stages", what, wire.MaxPipelineStages)
	}
	if slices.Contains(stages, "") {
		return cli.UsageError(cmd, "%s %q has an empty stage", what, pipeline)
	}
	return nil
}

// objectNameOf is the name a local SRC's object goes by.
func (o *objectOptions) objectNameOf() string {
	switch {
	case o.objectName != "":
		return o.objectName
	case o.src == "-":
		return stdinObject
	}
	return filepath.Base(o.src)
}

func (o *objectOptions) Run(ctx context.Context) error {
	if o.stored != "" {
		if err := checkArgsReach(ctx, o.env, o.pipeline, o.args); err != nil {
			return err
		}
		c, forwarder, stop, err := openObjects(ctx, o.env, o.dataPath, o.serviceAccount)
		if err != nil {
			return err
		}
		defer stop()
		return writeResult(o.dst, o.env.Out, func(w io.Writer) error {
			return c.transformStored(ctx, forwarder, o.pipeline, o.stored, o.args, w)
		})
	}
	var ts []*v1alpha1.Transform
	for _, name := range wire.SplitPipeline(o.pipeline) {
		t, err := getTransform(ctx, o.env, name)
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	if o.args != "" {
		if err := argsReachAny(ts); err != nil {
			return err
		}
	}
	node, err := readyNode(o.pipeline, ts, o.node)
	if err != nil {
		return err
	}
	in, err := o.input()
	if err != nil {
		return err
	}
	defer in.Close()
	issuer, forwarder, hc, err := o.dataPath()
	if err != nil {
		return err
	}
	token, err := issuer.Token(ctx, ts[0].Namespace, o.serviceAccount)
	if err != nil {
		return err
	}
	base, stop, err := forwarder.Forward(ctx, node)
	if err != nil {
		return err
	}
	defer stop()
	req := objectRequest{base: base, namespace: ts[0].Namespace, pipeline: o.pipeline, object: o.objectNameOf(), args: o.args,
		token: token, serviceAccount: o.serviceAccount}
	return writeResult(o.dst, o.env.Out, func(w io.Writer) error { return transformRequest(ctx, hc, req, http.MethodPut, in, w) })
}

// input opens a local SRC: stdin for "-", which stays open for whoever else reads it.
func (o *objectOptions) input() (io.ReadCloser, error) {
	if o.src == "-" {
		return io.NopCloser(o.env.In), nil
	}
	return os.Open(o.src)
}
