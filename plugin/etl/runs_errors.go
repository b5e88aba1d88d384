package etl

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

func newRunsErrorsCommand(env *cli.Env, dp dataPath) *cobra.Command {
	var serviceAccount, output string
	cmd, o := newOneRunCommand(env, &cobra.Command{
		Use:   "errors NAME",
		Short: "List every object a TransformRun failed, gathered from the error manifest of each node",
		Long: fmt.Sprintf(`List every object a TransformRun failed to transform or write, oldest first: each node writes
them to an error manifest in the run's destination when its share ends, and this command reads
the manifest of every node through the data path (the ClusterRole mlkube-datapath-viewer bound to
--service-account in the namespace). For a node whose share has not ended yet, the failures so
far are the recent ones the run's status keeps (at most %d), and a note on stderr says so.`, v1alpha1.MaxRunErrors),
		Example: `  # Every failed object of md5-x7k2p
  kubectl etl runs errors md5-x7k2p

  # As JSON, for a script that retries them
  kubectl etl runs errors md5-x7k2p -o json`,
	}, nil)
	o.run = func(ctx context.Context, o *oneRunOptions) error {
		r, err := o.get(ctx)
		if err != nil {
			return err
		}
		errs, err := gatherRunErrors(ctx, o.env, dp, serviceAccount, r)
		if err != nil {
			return err
		}
		if output != "" {
			if errs == nil {
				errs = []v1alpha1.ObjectError{}
			}
			return cli.PrintData(o.env.Out, output, errs)
		}
		if len(errs) == 0 {
			fmt.Fprintf(o.env.ErrOut, "No failed objects recorded for TransformRun %s.\n", r.Name)
			return nil
		}
		return cli.NewPrintFlags(true).TablePrinter(false).PrintObj(ErrorTable(r, errs, o.env.Clock.Now()), o.env.Out)
	}
	o.check = func(o *oneRunOptions) error {
		if output != "" && output != "json" && output != "yaml" {
			return cli.UsageError(o.cmd, "--output must be json or yaml, not %q", output)
		}
		return nil
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json or yaml; a table by default.")
	addServiceAccountFlag(cmd, env, &serviceAccount)
	return cmd
}

// gatherRunErrors reads the error manifest of every node of r, oldest failure first; a node
// without one whose share is not over contributes the recent failures status keeps of it, with a
// note on stderr.
func gatherRunErrors(ctx context.Context, env *cli.Env, dp dataPath, serviceAccount string, r *v1alpha1.TransformRun) ([]v1alpha1.ObjectError, error) {
	var nodes []v1alpha1.RunNodeStatus
	for _, n := range r.Status.Nodes {
		if n.FailedObjects > 0 {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	c, _, stop, err := openObjects(ctx, env, dp, serviceAccount)
	if err != nil {
		return nil, err
	}
	defer stop()
	manifest := r.Status.ErrorManifest
	if manifest == "" {
		manifest = wire.ErrorManifest(string(r.UID))
	}
	object := path.Join(r.Spec.Destination.Prefix, manifest)
	var all []v1alpha1.ObjectError
	for _, n := range nodes {
		errs, found, err := readErrorManifest(ctx, c, object, n.Node)
		if err != nil {
			return nil, err
		}
		if !found {
			errs = recentErrors(r, n.Node)
			fmt.Fprintf(env.ErrOut, "Node %s has no error manifest yet (its share is %s): of its %d failed objects, the %d recent ones the run's status keeps are listed.\n",
				n.Node, orPending(n.Phase), n.FailedObjects, len(errs))
		}
		all = append(all, errs...)
	}
	slices.SortStableFunc(all, func(a, b v1alpha1.ObjectError) int { return a.Time.Compare(b.Time.Time) })
	return all, nil
}

// recentErrors are the failures of node among those the run's status keeps.
func recentErrors(r *v1alpha1.TransformRun, node string) []v1alpha1.ObjectError {
	var errs []v1alpha1.ObjectError
	for _, e := range r.Status.Errors {
		if e.Node == node {
			errs = append(errs, e)
		}
	}
	return errs
}

// maxManifestLine bounds one line of an error manifest: an ObjectError's object and message are
// at most 1 KiB each, JSON escaping can multiply them by six.
const maxManifestLine = 16 << 10

// readErrorManifest reads the error manifest object on node: its JSON lines, each a failed
// object. found is false when the node holds no such object (its share has not ended, or ended
// without failures).
func readErrorManifest(ctx context.Context, c *objectClient, object, node string) (errs []v1alpha1.ObjectError, found bool, err error) {
	req, err := c.newRequest(ctx, http.MethodGet, object, url.Values{wire.QueryNode: {node}}, nil)
	if err != nil {
		return nil, false, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("reading the error manifest of node %s: calling the data path agent: %w", node, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, false, nil
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, false, fmt.Errorf("reading the error manifest of node %s: %w", node, c.refusal(req.Method, object, resp.StatusCode, strings.TrimSpace(string(msg))))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4096), maxManifestLine)
	for line := 1; sc.Scan(); line++ {
		var e v1alpha1.ObjectError
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, true, fmt.Errorf("error manifest %s of node %s, line %d: %w", object, node, line, err)
		}
		if e.Node == "" {
			e.Node = node
		}
		errs = append(errs, e)
	}
	if err := sc.Err(); err != nil {
		return nil, true, fmt.Errorf("reading the error manifest %s of node %s: %w", object, node, err)
	}
	return errs, true, nil
}
