package mxjob

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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// maxLogLine is the longest log line kept whole; a longer one is split.
const maxLogLine = 1 << 20

type logsOptions struct {
	env        *cli.Env
	cmd        *cobra.Command
	name, ns   string
	typeFlag   string
	filter     replicaFilter
	follow     bool
	since      time.Duration
	tail       int64
	timestamps bool
	container  string
	previous   bool
}

func newLogsCommand(env *cli.Env) *cobra.Command {
	o := &logsOptions{env: env}
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print the logs of an MxJob's replicas, all at once, each line prefixed by its pod",
		Example: `  # Every replica's logs
  kubectl mxjob logs mnist

  # Follow the first worker
  kubectl mxjob logs mnist --type worker --index 0 -f

  # The last 20 lines of each server, with timestamps
  kubectl mxjob logs mnist --type server --tail 20 --timestamps`,
		Args:              cli.ExactArgs("NAME"),
		ValidArgsFunction: cli.CompleteNames(env, mxJobs.NewList),
		RunE:              cli.RunE(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.typeFlag, "type", "", "Replica type: scheduler, server or worker; all when unset.")
	f.IntVar(&o.filter.index, "index", -1, "Replica index within --type; all when unset.")
	f.BoolVarP(&o.follow, "follow", "f", false, "Stream the logs as they are written.")
	f.DurationVar(&o.since, "since", 0, "Only logs newer than this, e.g. 5m.")
	f.Int64Var(&o.tail, "tail", -1, "Lines of recent log to show per replica; all when -1.")
	f.BoolVar(&o.timestamps, "timestamps", false, "Prefix each line with its timestamp.")
	f.StringVarP(&o.container, "container", "c", v1beta1.DefaultContainerName, "Container of each pod.")
	f.BoolVar(&o.previous, "previous", false, "The logs of the previous, restarted container.")
	registerTypeCompletion(cmd)
	return cmd
}

func registerTypeCompletion(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("type", cobra.FixedCompletions(replicaTypeNames(), cobra.ShellCompDirectiveNoFileComp))
}

func (o *logsOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.name = cmd, args[0]
	ns, _, err := o.env.Clients.Namespace()
	o.ns = ns
	return err
}

func (o *logsOptions) Validate() error {
	t, err := parseReplicaType(o.typeFlag)
	if err != nil {
		return cli.UsageError(o.cmd, "%v", err)
	}
	o.filter.typ = t
	if o.filter.index >= 0 && t == "" {
		return cli.UsageError(o.cmd, "--index needs --type")
	}
	return nil
}

func (o *logsOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	cs, err := o.env.Clients.Kubernetes()
	if err != nil {
		return err
	}
	// The job first: a typo is "not found", not a job without pods.
	if err := c.Get(ctx, client.ObjectKey{Namespace: o.ns, Name: o.name}, &v1beta1.MxJob{}); err != nil {
		return err
	}
	pods, err := listReplicaPods(ctx, c, o.ns, o.name, o.filter)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return fmt.Errorf("mxjob/%s has no pods%s; see 'kubectl mxjob describe %s'", o.name, o.filterText(), o.name)
	}
	opts := &corev1.PodLogOptions{Container: o.container, Follow: o.follow, Timestamps: o.timestamps, Previous: o.previous}
	if o.since > 0 {
		opts.SinceSeconds = ptr.To(int64(o.since.Seconds()))
	}
	if o.tail >= 0 {
		opts.TailLines = ptr.To(o.tail)
	}
	out := &lineWriter{w: o.env.Out}
	if !o.follow {
		// One pod after another: the output reads as a whole per replica.
		for i := range pods {
			if err := streamLogs(ctx, cs, &pods[i], opts, out); err != nil {
				return err
			}
		}
		return nil
	}
	// Following, every replica streams at once, as stern does; lines interleave whole.
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i := range pods {
		wg.Go(func() { errs[i] = streamLogs(ctx, cs, &pods[i], opts, out) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (o *logsOptions) filterText() string {
	switch {
	case o.filter.typ == "":
		return ""
	case o.filter.index < 0:
		return " of type " + o.filter.typ
	}
	return fmt.Sprintf(" %s-%d", o.filter.typ, o.filter.index)
}

// streamLogs copies a pod's log to out, each line prefixed with the pod.
func streamLogs(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, opts *corev1.PodLogOptions, out *lineWriter) error {
	rc, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, opts).Stream(ctx)
	if err != nil {
		return fmt.Errorf("logs of pod %s: %w", pod.Name, err)
	}
	defer rc.Close()
	prefix := "[pod/" + pod.Name + "] "
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64*1024), maxLogLine)
	for sc.Scan() {
		out.line(prefix, sc.Bytes())
	}
	if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("logs of pod %s: %w", pod.Name, err)
	}
	return nil
}

// lineWriter writes whole lines from concurrent streams.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) line(prefix string, b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s%s\n", prefix, b)
}
