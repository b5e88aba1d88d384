package etl

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

type describeOptions struct {
	env   *cli.Env
	names []string
}

func newDescribeCommand(env *cli.Env) *cobra.Command {
	o := &describeOptions{env: env}
	return &cobra.Command{
		Use:   "describe NAME...",
		Short: "Show a Transform in detail: its spec, each node's transformer pod with why it waits, and events",
		Example: `  # Why does md5 not become ready?
  kubectl etl describe md5`,
		Args:              cli.MinArgs("NAME"),
		ValidArgsFunction: completeTransforms(env),
		RunE:              cli.RunE(o),
	}
}

func (o *describeOptions) Complete(_ *cobra.Command, args []string) error {
	o.names = args
	return nil
}

func (o *describeOptions) Validate() error { return nil }

func (o *describeOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	for i, name := range o.names {
		t, err := getTransform(ctx, o.env, name)
		if err != nil {
			return err
		}
		pods := map[string]*corev1.Pod{}
		names := []string{t.Name}
		for _, n := range t.Status.Nodes {
			if n.Pod == "" {
				continue
			}
			var p corev1.Pod
			switch err := c.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: n.Pod}, &p); {
			case apierrors.IsNotFound(err):
				// Deleted since the controller wrote the status: the row says so.
			case err != nil:
				return err
			default:
				pods[n.Pod] = &p
			}
			names = append(names, n.Pod)
		}
		events, err := cli.EventsOf(ctx, c, t.Namespace, names...)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(o.env.Out)
		}
		if err := describeTransform(o.env.Out, t, pods, events, o.env.Clock.Now()); err != nil {
			return err
		}
	}
	return nil
}

// describeTransform writes a Transform, its transformer pods and their events as mxjob describe
// writes a job's.
func describeTransform(out io.Writer, t *v1alpha1.Transform, pods map[string]*corev1.Pod, events []corev1.Event, now time.Time) error {
	w := cli.NewDescribeWriter(out)
	st := t.Status
	cli.WriteHeader(w, t, now)
	fmt.Fprintf(w, "Form:\t%s\n", cli.OrNone(form(&t.Spec)))
	fmt.Fprintf(w, "Communication:\t%s\n", cli.OrNone(string(t.Spec.Communication)))
	if t.Spec.IOMode != "" {
		fmt.Fprintf(w, "IO Mode:\t%s\n", t.Spec.IOMode)
	}
	fmt.Fprintf(w, "Argument:\t%s\n", argument(t.Spec.Argument))
	fmt.Fprintf(w, "Suspended:\t%t\n", t.Spec.Stopped)
	fmt.Fprintf(w, "Stage:\t%s\n", stage(t))
	if st.Reason != "" {
		fmt.Fprintf(w, "Reason:\t%s\n", st.Reason)
	}
	fmt.Fprintf(w, "Nodes Ready:\t%s\n", cli.OrNone(st.NodesReady))
	fmt.Fprintf(w, "Totals:\tobjects=%d in=%s out=%s errors=%d\n", st.Totals.Objects, Bytes(st.Totals.BytesIn), Bytes(st.Totals.BytesOut), st.Totals.Errors)
	if err := w.Flush(); err != nil {
		return err
	}
	nodes := cli.Section{Title: "Nodes", Columns: []string{"NODE", "POD", "STATUS", "READY", "RESTARTS", "OBJECTS", "ERRORS"}}
	for _, n := range st.Nodes {
		status := "<none>"
		if p := pods[n.Pod]; p != nil {
			status = cli.PodStatus(p)
		} else if n.Pod != "" {
			status = "Missing"
		}
		nodes.Rows = append(nodes.Rows, []any{n.Node, cli.OrNone(n.Pod), status, n.Ready, n.Restarts, n.Objects, n.Errors})
	}
	return cli.WriteSections(w, nodes, cli.EventsSection(events, now))
}
