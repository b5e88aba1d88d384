package etl

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// newRunsCommand is `kubectl etl runs`: what follows `kubectl etl run`, which creates the run.
func newRunsCommand(env *cli.Env, dp dataPath) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "runs",
		Aliases: []string{"transformruns", "etlrun"},
		Short:   "List, follow, wait for, suspend, resume and delete TransformRuns, and gather their errors",
		Long: `The TransformRuns of the namespace, after kubectl etl run created them: list and get them,
describe one (per-node progress, rate, ETA, errors), follow its progress, wait for a phase,
suspend and resume it, delete runs, and gather the failed objects every node listed in its error
manifest.`,
		Example: `  # The namespace's runs, following changes
  kubectl etl runs list -w

  # A run's progress bar until it ends, then the objects that failed
  kubectl etl runs follow md5-x7k2p
  kubectl etl runs errors md5-x7k2p`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRunsListCommand(env, "list"), newRunsListCommand(env, "get"), newRunsDescribeCommand(env),
		newRunsFollowCommand(env), newRunsWaitCommand(env), newRunsSuspendCommand(env, true),
		newRunsSuspendCommand(env, false), newRunsDeleteCommand(env), newRunsErrorsCommand(env, dp))
	return cmd
}

// completeRuns completes TransformRun names of the namespace of --namespace.
func completeRuns(env *cli.Env) cobra.CompletionFunc {
	return cli.CompleteNames(env, transformRuns.NewList)
}

type runsListOptions struct {
	lister cli.Lister[*v1alpha1.TransformRun]
	cmd    *cobra.Command
	names  []string
	verb   string
}

// newRunsListCommand is list (names optional) or get (names required), as kubectl get prints.
func newRunsListCommand(env *cli.Env, verb string) *cobra.Command {
	o := &runsListOptions{verb: verb, lister: cli.Lister[*v1alpha1.TransformRun]{Env: env, Flags: cli.NewListFlags(), Resource: transformRuns}}
	cmd := &cobra.Command{
		Use:   "list [NAME...]",
		Short: "List TransformRuns with their phase, progress, failed objects and rate",
		Example: `  # Runs of the current namespace
  kubectl etl runs list

  # Every namespace's, with ETA, source and destination, following changes
  kubectl etl runs list -A -o wide -w`,
		ValidArgsFunction: completeRuns(env),
		RunE:              cli.RunE(o),
	}
	if verb == "get" {
		cmd.Use, cmd.Short = "get NAME...", "Print TransformRuns by name: a table, or the objects with -o"
		cmd.Example = `  # One run's status as YAML
  kubectl etl runs get md5-x7k2p -o yaml`
	}
	o.lister.Flags.AddFlags(cmd)
	return cmd
}

func (o *runsListOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.names = cmd, args
	return nil
}

func (o *runsListOptions) Validate() error {
	if o.verb == "get" && len(o.names) == 0 {
		return cli.UsageError(o.cmd, "NAME is required; to list every run: kubectl etl runs list")
	}
	if o.lister.Flags.AllNamespaces && len(o.names) > 0 {
		return cli.UsageError(o.cmd, "a resource cannot be retrieved by name across all namespaces")
	}
	return o.lister.Flags.Validate(o.cmd)
}

func (o *runsListOptions) Run(ctx context.Context) error { return o.lister.Run(ctx, o.names) }

// oneRunOptions serve the commands about one run: describe, follow, wait.
type oneRunOptions struct {
	env  *cli.Env
	cmd  *cobra.Command
	name string
	ns   string
	c    client.WithWatch
	// run does the command's work.
	run func(ctx context.Context, o *oneRunOptions) error
	// check validates the command's flags.
	check func(o *oneRunOptions) error
}

func newOneRunCommand(env *cli.Env, cmd *cobra.Command, run func(context.Context, *oneRunOptions) error) (*cobra.Command, *oneRunOptions) {
	o := &oneRunOptions{env: env, run: run}
	cmd.Args = cli.ExactArgs("NAME")
	cmd.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeRuns(env)(c, args, toComplete)
	}
	cmd.RunE = cli.RunE(o)
	return cmd, o
}

func (o *oneRunOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.name = cmd, args[0]
	ns, _, err := o.env.Clients.Namespace()
	o.ns = ns
	return err
}

func (o *oneRunOptions) Validate() error {
	if o.check != nil {
		return o.check(o)
	}
	return nil
}

func (o *oneRunOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	o.c = c
	return o.run(ctx, o)
}

func (o *oneRunOptions) get(ctx context.Context) (*v1alpha1.TransformRun, error) {
	var r v1alpha1.TransformRun
	if err := o.c.Get(ctx, client.ObjectKey{Namespace: o.ns, Name: o.name}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func newRunsDescribeCommand(env *cli.Env) *cobra.Command {
	cmd, _ := newOneRunCommand(env, &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a TransformRun: spec, per-node progress, rate, ETA, conditions, recent errors and events",
		Example: `  # Where md5-x7k2p stands on each node
  kubectl etl runs describe md5-x7k2p`,
	}, func(ctx context.Context, o *oneRunOptions) error {
		r, err := o.get(ctx)
		if err != nil {
			return err
		}
		events, err := runEvents(ctx, o.env, r)
		if err != nil {
			return err
		}
		return describeRun(o.env.Out, r, events, o.env.Clock.Now())
	})
	return cmd
}

// runEvents are the events of run, oldest first.
func runEvents(ctx context.Context, env *cli.Env, run *v1alpha1.TransformRun) ([]corev1.Event, error) {
	cs, err := env.Clients.Kubernetes()
	if err != nil {
		return nil, err
	}
	sel := fields.Set{"involvedObject.name": run.Name, "involvedObject.kind": "TransformRun"}.AsSelector().String()
	list, err := cs.CoreV1().Events(run.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing the events of TransformRun %s: %w", run.Name, err)
	}
	var events []corev1.Event
	for _, e := range list.Items {
		// A selector the server ignored (or a fake's) lets no other object's event through.
		if e.InvolvedObject.Name == run.Name && e.InvolvedObject.Kind == "TransformRun" {
			events = append(events, e)
		}
	}
	slices.SortStableFunc(events, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	return events, nil
}

func eventTime(e corev1.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}

// describeRun writes what describe prints about run.
func describeRun(out io.Writer, r *v1alpha1.TransformRun, events []corev1.Event, now time.Time) error {
	w := cli.NewDescribeWriter(out)
	st, spec := r.Status, r.Spec
	fmt.Fprintf(w, "Name:\t%s\n", r.Name)
	fmt.Fprintf(w, "Namespace:\t%s\n", r.Namespace)
	fmt.Fprintf(w, "Created:\t%s (%s ago)\n", r.CreationTimestamp.UTC().Format(time.RFC3339), cli.Age(r.CreationTimestamp, now))
	fmt.Fprintf(w, "Transform:\t%s\n", spec.Transform)
	fmt.Fprintf(w, "Source:\t%s\n", source(&spec.Source))
	dst := spec.Destination.Prefix + "/"
	if spec.Destination.ToExtension != "" {
		dst += " (*" + spec.Destination.ToExtension + ")"
	}
	fmt.Fprintf(w, "Destination:\t%s\n", dst)
	fmt.Fprintf(w, "Options:\t%s\n", runOptionsString(&spec))
	fmt.Fprintf(w, "Phase:\t%s\n", phase(st))
	fmt.Fprintf(w, "Progress:\t%s\n", progressLine(st))
	fmt.Fprintf(w, "Rate:\t%s\n", orNone(st.Rate))
	fmt.Fprintf(w, "ETA:\t%s\n", orNone(st.ETA))
	if st.StartTime != nil {
		fmt.Fprintf(w, "Started:\t%s\n", st.StartTime.UTC().Format(time.RFC3339))
	}
	if st.CompletionTime != nil {
		fmt.Fprintf(w, "Completed:\t%s\n", st.CompletionTime.UTC().Format(time.RFC3339))
	}
	if st.ErrorManifest != "" && st.Totals.FailedObjects > 0 {
		fmt.Fprintf(w, "Error Manifest:\t%s/%s on each node with failures; all of them: kubectl etl runs errors %s\n", spec.Destination.Prefix, st.ErrorManifest, r.Name)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return cli.WriteSections(w,
		cli.TableSection("Nodes", RunNodeTable(r, now)),
		cli.ConditionsSection(st.Conditions, now),
		cli.TableSection("Recent Errors", ErrorTable(r, st.Errors, now)),
		runEventsSection(events, now))
}

// runEventsSection is the events of a run, all of them: a run records few.
func runEventsSection(events []corev1.Event, now time.Time) cli.Section {
	sec := cli.Section{Title: "Events", Columns: []string{"TYPE", "REASON", "AGE", "MESSAGE"}}
	for _, e := range events {
		sec.Rows = append(sec.Rows, []any{e.Type, e.Reason, cli.Age(metav1.NewTime(eventTime(e)), now), e.Message})
	}
	return sec
}

// progressLine is the run's done/planned objects and bytes, with the failed ones.
func progressLine(st v1alpha1.TransformRunStatus) string {
	c := st.Totals
	s := fmt.Sprintf("%d/%d objects, %s/%s", done(c), c.PlannedObjects, Bytes(c.DoneBytes), Bytes(c.PlannedBytes))
	if c.SkippedObjects > 0 {
		s += fmt.Sprintf(", %d done by an earlier attempt", c.SkippedObjects)
	}
	if c.FailedObjects > 0 {
		s += fmt.Sprintf(", %d failed", c.FailedObjects)
	}
	return s
}

// runOptionsString spells the spec's switches, workers and TTL.
func runOptionsString(s *v1alpha1.TransformRunSpec) string {
	workers := int32(v1alpha1.DefaultRunWorkersPerNode)
	if s.WorkersPerNode != nil {
		workers = *s.WorkersPerNode
	}
	opts := []string{fmt.Sprintf("workers=%d", workers)}
	for _, o := range []struct {
		on   bool
		name string
	}{{s.DryRun, "plan"}, {s.Check, "check"}, {s.ContinueOnError, "continue-on-error"}, {s.Overwrite, "overwrite"}, {s.Suspend, "suspend"}} {
		if o.on {
			opts = append(opts, o.name)
		}
	}
	if s.TTLSecondsAfterFinished != nil {
		opts = append(opts, "ttl="+(time.Duration(*s.TTLSecondsAfterFinished)*time.Second).String())
	}
	if len(s.NodeSelector) > 0 {
		opts = append(opts, "node-selector="+labels.SelectorFromSet(s.NodeSelector).String())
	}
	if s.Args != "" {
		opts = append(opts, fmt.Sprintf("args=%q", s.Args))
	}
	return strings.Join(opts, " ")
}
