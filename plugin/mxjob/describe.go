package mxjob

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

type describeOptions struct {
	env   *cli.Env
	names []string
	ns    string
}

func newDescribeCommand(env *cli.Env) *cobra.Command {
	o := &describeOptions{env: env}
	return &cobra.Command{
		Use:   "describe NAME...",
		Short: "Show an MxJob in detail: replicas with their pods and nodes, Kueue's queue and admission, conditions, restarts, events",
		Example: `  # Why is my job not running?
  kubectl mxjob describe mnist`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.UsageError(cmd, "NAME is required")
			}
			return nil
		},
		ValidArgsFunction: cli.CompleteNames(env, mxJobs.NewList),
		RunE:              cli.RunE(o),
	}
}

func (o *describeOptions) Complete(_ *cobra.Command, args []string) error {
	o.names = args
	ns, _, err := o.env.Clients.Namespace()
	o.ns = ns
	return err
}

func (o *describeOptions) Validate() error { return nil }

func (o *describeOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	for i, name := range o.names {
		var job v1beta1.MxJob
		if err := c.Get(ctx, client.ObjectKey{Namespace: o.ns, Name: name}, &job); err != nil {
			return err
		}
		pods, err := listReplicaPods(ctx, c, o.ns, name, replicaFilter{index: -1})
		if err != nil {
			return err
		}
		events, err := cli.EventsOf(ctx, c, o.ns, name)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(o.env.Out)
		}
		if err := describeJob(o.env.Out, &job, pods, events, o.env.Clock.Now()); err != nil {
			return err
		}
	}
	return nil
}

// describeJob writes a job, its pods and its events as kubectl describe lays them out.
func describeJob(out io.Writer, job *v1beta1.MxJob, pods []corev1.Pod, events []corev1.Event, now time.Time) error {
	w := cli.NewDescribeWriter(out)
	st := job.Status
	cli.WriteHeader(w, job, now)
	fmt.Fprintf(w, "Mode:\t%s\n", job.Spec.JobMode)
	fmt.Fprintf(w, "State:\t%s\n", state(job))
	if st.Reason != "" {
		fmt.Fprintf(w, "Reason:\t%s\n", st.Reason)
	}
	describeKueue(w, job)
	fmt.Fprintf(w, "Restarts:\t%d\n", st.Restarts)
	if st.StartTime != nil {
		fmt.Fprintf(w, "Started:\t%s\n", st.StartTime.UTC().Format(time.RFC3339))
	}
	if st.CompletionTime != nil {
		fmt.Fprintf(w, "Completed:\t%s\n", st.CompletionTime.UTC().Format(time.RFC3339))
	}
	if st.StartTime != nil {
		fmt.Fprintf(w, "Duration:\t%s\n", runDuration(job, now))
	}
	fmt.Fprintf(w, "Run Policy:\t%s\n", runPolicyString(job.Spec.RunPolicy))
	if ds := job.Spec.Dataset; ds != nil {
		fmt.Fprintf(w, "Dataset:\t%s\n", datasetString(ds))
	}
	// Each section is aligned on its own, as a table of its own.
	w.Flush()
	fmt.Fprintf(w, "Replicas:\n  TYPE\tDESIRED\tACTIVE\tSUCCEEDED\tFAILED\tIMAGE\n")
	for _, rs := range job.Spec.ReplicaSpecs {
		c := ptr.Deref(st.ReplicaStatuses[rs.MxReplicaType], v1beta1.ReplicaStatus{})
		fmt.Fprintf(w, "  %s\t%d\t%d\t%d\t%d\t%s\n", rs.MxReplicaType, rs.ReplicaCount(), c.Active, c.Succeeded, c.Failed, image(&rs))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	podSection := cli.Section{Title: "Pods", Columns: []string{"NAME", "REPLICA", "STATUS", "RESTARTS", "NODE", "AGE"}}
	for i := range pods {
		p := &pods[i]
		podSection.Rows = append(podSection.Rows, []any{p.Name, replicaOf(p), cli.PodStatus(p), cli.PodRestarts(p), cli.OrNone(p.Spec.NodeName), cli.Age(p.CreationTimestamp, now)})
	}
	return cli.WriteSections(w, podSection, cli.ConditionsSection(st.Conditions, now), cli.EventsSection(events, now))
}

// describeKueue writes, for a job Kueue queues, its LocalQueue, its priority class and whether
// Kueue admitted it: the reason Kueue gives is why a suspended job does not start.
func describeKueue(w io.Writer, job *v1beta1.MxJob) {
	if q := job.Labels[labels.KueueQueueName]; q != "" {
		fmt.Fprintf(w, "Queue:\t%s\n", q)
	}
	if p := job.Labels[labels.KueuePriorityClass]; p != "" {
		fmt.Fprintf(w, "Priority Class:\t%s\n", p)
	}
	if c := meta.FindStatusCondition(job.Status.Conditions, v1beta1.ConditionAdmitted); c != nil {
		fmt.Fprintf(w, "Admitted:\t%s\n", admittedString(c))
	}
}

func runPolicyString(rp v1beta1.RunPolicy) string {
	opt := func(p *int32) string {
		if p == nil {
			return "none"
		}
		return fmt.Sprint(*p)
	}
	deadline := "none"
	if rp.ActiveDeadlineSeconds != nil {
		deadline = fmt.Sprintf("%ds", *rp.ActiveDeadlineSeconds)
	}
	return fmt.Sprintf("cleanPodPolicy=%s backoffLimit=%s activeDeadline=%s ttlAfterFinished=%s suspend=%t",
		cli.OrNone(string(rp.CleanPodPolicy)), opt(rp.BackoffLimit), deadline, opt(rp.TTLSecondsAfterFinished), ptr.Deref(rp.Suspend, false))
}

// image is the image of a replica spec's mxnet container.
func image(rs *v1beta1.ReplicaSpec) string {
	if rs.Template == nil {
		return "<none>"
	}
	for _, c := range rs.Template.Spec.Containers {
		if c.Name == v1beta1.DefaultContainerName {
			return c.Image
		}
	}
	return "<none>"
}
