package etl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	kptr "k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

type logsOptions struct {
	env    *cli.Env
	cmd    *cobra.Command
	name   string
	node   string
	follow bool
	tail   int64
	// The flags of kubectl logs, as mxjob logs has them.
	since      time.Duration
	timestamps bool
	container  string
	previous   bool
}

func newLogsCommand(env *cli.Env) *cobra.Command {
	o := &logsOptions{env: env}
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print the logs of a Transform's transformer pods, each line prefixed by its node",
		Example: `  # Logs of md5's transformers on every node
  kubectl etl logs md5

  # Follow the transformer on one node
  kubectl etl logs md5 --node worker-1 -f`,
		Args:              cli.ExactArgs("NAME"),
		ValidArgsFunction: completeFirstTransform(env),
		RunE:              cli.RunE(o),
	}
	cmd.Flags().StringVar(&o.node, "node", "", "Only the transformer on this node.")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "Stream the logs as they are written.")
	cmd.Flags().Int64Var(&o.tail, "tail", -1, "Lines of recent log to show per pod; -1 shows all.")
	cmd.Flags().DurationVar(&o.since, "since", 0, "Only logs newer than this, e.g. 5m.")
	cmd.Flags().BoolVar(&o.timestamps, "timestamps", false, "Prefix each line with its timestamp.")
	cmd.Flags().StringVarP(&o.container, "container", "c", "", "Container of each transformer pod; the pod's only one when unset.")
	cmd.Flags().BoolVar(&o.previous, "previous", false, "The logs of the previous, restarted container.")
	_ = cmd.RegisterFlagCompletionFunc("node", completeNodes(env))
	return cmd
}

func (o *logsOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.name = cmd, args[0]
	return nil
}

func (o *logsOptions) Validate() error {
	if o.since < 0 {
		return cli.UsageError(o.cmd, "--since must not be negative")
	}
	return nil
}

func (o *logsOptions) Run(ctx context.Context) error {
	t, err := getTransform(ctx, o.env, o.name)
	if err != nil {
		return err
	}
	nodes, err := o.nodes(t)
	if err != nil {
		return err
	}
	cs, err := o.env.Clients.Kubernetes()
	if err != nil {
		return err
	}
	out := &lineWriter{w: o.env.Out}
	if !o.follow {
		// One pod after another, so the output reads as a whole per node.
		for _, n := range nodes {
			if err := o.stream(ctx, cs, t.Namespace, n, out); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { errs[i] = o.stream(ctx, cs, t.Namespace, n, out) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// nodes are the nodes whose transformer pods to read: --node's, or all with a pod.
func (o *logsOptions) nodes(t *v1alpha1.Transform) ([]v1alpha1.NodeStatus, error) {
	var nodes []v1alpha1.NodeStatus
	for _, n := range t.Status.Nodes {
		if n.Pod != "" && (o.node == "" || n.Node == o.node) {
			nodes = append(nodes, n)
		}
	}
	switch {
	case len(nodes) > 0:
		return nodes, nil
	case o.node != "":
		return nil, fmt.Errorf("transform %s has no transformer pod on node %s; see kubectl etl details %s", t.Name, o.node, t.Name)
	}
	return nil, fmt.Errorf("transform %s has no transformer pods (stage %s)", t.Name, stage(t))
}

// stream copies one pod's log to out, each line prefixed by the node.
func (o *logsOptions) stream(ctx context.Context, cs kubernetes.Interface, ns string, n v1alpha1.NodeStatus, out *lineWriter) error {
	opts := &corev1.PodLogOptions{Follow: o.follow, Timestamps: o.timestamps, Container: o.container, Previous: o.previous}
	if o.since > 0 {
		opts.SinceSeconds = kptr.To(int64(o.since.Seconds()))
	}
	if o.tail >= 0 {
		opts.TailLines = &o.tail
	}
	rc, err := cs.CoreV1().Pods(ns).GetLogs(n.Pod, opts).Stream(ctx)
	if err != nil {
		return fmt.Errorf("logs of %s on node %s: %w", n.Pod, n.Node, err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		out.line("[" + n.Node + "] " + sc.Text())
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("logs of %s on node %s: %w", n.Pod, n.Node, err)
	}
	return nil
}

// lineWriter writes whole lines from several streams without interleaving them.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, s)
}
