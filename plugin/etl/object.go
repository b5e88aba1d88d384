package etl

import (
	"context"
	"fmt"
	"io"
	"net/http"
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

// objectRequest is one object sent through a Transform by a node's agent.
type objectRequest struct {
	base, namespace, transform, object, token string
	// serviceAccount is who the token speaks for, named in refusals.
	serviceAccount string
}

// transformBody PUTs body to the agent at r.base as object r.object of Transform r.transform and
// copies the result to out.
func transformBody(ctx context.Context, hc *http.Client, r objectRequest, body io.Reader, out io.Writer) error {
	u := r.base + wire.PathTransform + r.namespace + "/" + r.transform + wire.ObjectPath(r.object)
	return transformRequest(ctx, hc, r, http.MethodPut, u, body, out)
}

// transformRequest sends an inline request of r to the agent and copies the result to out. The
// agent's refusals become errors that say which binding is missing.
func transformRequest(ctx context.Context, hc *http.Client, r objectRequest, method, url string, body io.Reader, out io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
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
		return fmt.Errorf("reading the result of %s: %w", r.transform, err)
	}
	return nil
}

// refusal explains an agent's answer other than 200, with the remedy for the ones a user can fix.
func refusal(r objectRequest, code int, msg string) error {
	sa := r.namespace + ":" + r.serviceAccount
	if code == http.StatusForbidden {
		return fmt.Errorf("ServiceAccount %s may not use Transform %s (403: %s); bind it to the data path role: kubectl -n %s create rolebinding %s-datapath --clusterrole=mlkube-datapath-user --serviceaccount=%s (docs/datapath-rbac.md), or pass --service-account",
			sa, r.transform, msg, r.namespace, r.serviceAccount, sa)
	}
	return agentRefusal(sa, code, msg, fmt.Sprintf("transform %s of %s", r.transform, r.object))
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

// readyNode is node if the Transform is ready there, or with node empty the first node (by
// status order, which is by name) where it is.
func readyNode(t *v1alpha1.Transform, node string) (string, error) {
	var ready []string
	for _, n := range t.Status.Nodes {
		if n.Ready {
			ready = append(ready, n.Node)
		}
	}
	switch {
	case len(ready) == 0:
		return "", fmt.Errorf("transform %s is ready on no node (stage %s); see kubectl etl health %s", t.Name, stage(t), t.Name)
	case node == "":
		return ready[0], nil
	case !slices.Contains(ready, node):
		return "", fmt.Errorf("transform %s is not ready on node %s; it is on %s", t.Name, node, strings.Join(ready, ", "))
	}
	return node, nil
}

type objectOptions struct {
	env            *cli.Env
	dataPath       dataPath
	name, src, dst string
	node           string
	serviceAccount string
}

func newObjectCommand(env *cli.Env, dp dataPath) *cobra.Command {
	o := &objectOptions{env: env, dataPath: dp}
	cmd := &cobra.Command{
		Use:   "object NAME SRC DST|-",
		Short: "Transform a local file through a Transform on a node, by the cluster's data path",
		Long: fmt.Sprintf(`Send a local file through a Transform and write the result to DST, or to stdout for "-".

The file goes to the data path agent of a node (port-forwarded through the API server) with a token
of a ServiceAccount of the namespace for the audience %q, from the TokenRequest API: the agent
acts with that ServiceAccount's rights, never with yours. It needs 'use' on the Transform: bind it
to the ClusterRole mlkube-datapath-user (docs/datapath-rbac.md). The object is named after SRC's
base name.`, wire.Audience),
		Example: `  # The md5 of a file, as ServiceAccount default of the namespace
  kubectl etl object md5 photo.jpg -

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
	cmd.Flags().StringVar(&o.node, "node", "", "The node whose agent and transformer to use; default any node where the Transform is ready.")
	addServiceAccountFlag(cmd, env, &o.serviceAccount)
	_ = cmd.RegisterFlagCompletionFunc("node", completeNodes(env))
	return cmd
}

// addServiceAccountFlag binds --service-account, the identity of every data path command.
func addServiceAccountFlag(cmd *cobra.Command, env *cli.Env, sa *string) {
	cmd.Flags().StringVar(sa, "service-account", "default", "The ServiceAccount of the namespace whose identity the data path sees.")
	_ = cmd.RegisterFlagCompletionFunc("service-account", cli.CompleteNames(env, func() client.ObjectList { return &corev1.ServiceAccountList{} }))
}

func (o *objectOptions) Complete(_ *cobra.Command, args []string) error {
	o.name, o.src, o.dst = args[0], args[1], args[2]
	return nil
}

func (o *objectOptions) Validate() error {
	return wire.CheckObject(filepath.Base(o.src))
}

func (o *objectOptions) Run(ctx context.Context) error {
	t, err := getTransform(ctx, o.env, o.name)
	if err != nil {
		return err
	}
	node, err := readyNode(t, o.node)
	if err != nil {
		return err
	}
	in, err := os.Open(o.src)
	if err != nil {
		return err
	}
	defer in.Close()
	issuer, forwarder, hc, err := o.dataPath()
	if err != nil {
		return err
	}
	token, err := issuer.Token(ctx, t.Namespace, o.serviceAccount)
	if err != nil {
		return err
	}
	base, stop, err := forwarder.Forward(ctx, node)
	if err != nil {
		return err
	}
	defer stop()
	req := objectRequest{base: base, namespace: t.Namespace, transform: t.Name, object: filepath.Base(o.src),
		token: token, serviceAccount: o.serviceAccount}
	return writeResult(o.dst, o.env.Out, func(w io.Writer) error { return transformBody(ctx, hc, req, in, w) })
}
