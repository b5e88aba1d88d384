package mxjob

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

type topOptions struct {
	env      *cli.Env
	cmd      *cobra.Command
	name, ns string
	typeFlag string
	filter   replicaFilter
	print    *cli.PrintFlags
}

func newTopCommand(env *cli.Env) *cobra.Command {
	o := &topOptions{env: env, print: cli.NewPrintFlags(true), filter: replicaFilter{index: -1}}
	cmd := &cobra.Command{
		Use:   "top NAME",
		Short: "Show the CPU and memory each replica of an MxJob uses (metrics.k8s.io)",
		Example: `  # CPU and memory per replica
  kubectl mxjob top mnist

  # Workers only
  kubectl mxjob top mnist --type worker`,
		Args:              cli.ExactArgs("NAME"),
		ValidArgsFunction: cli.CompleteNames(env, mxJobs.NewList),
		RunE:              cli.RunE(o),
	}
	cmd.Flags().StringVar(&o.typeFlag, "type", "", "Replica type: scheduler, server or worker; all when unset.")
	registerTypeCompletion(cmd)
	o.print.AddFlags(cmd)
	return cmd
}

func (o *topOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.name = cmd, args[0]
	ns, _, err := o.env.Clients.Namespace()
	o.ns = ns
	return err
}

func (o *topOptions) Validate() error {
	t, err := parseReplicaType(o.typeFlag)
	if err != nil {
		return cli.UsageError(o.cmd, "%v", err)
	}
	o.filter.typ = t
	return o.print.Validate()
}

var topColumns = []metav1.TableColumnDefinition{
	cli.NameColumn,
	{Name: "Replica", Type: "string"},
	{Name: "CPU(cores)", Type: "string"},
	{Name: "Memory(bytes)", Type: "string"},
}

func (o *topOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	sel := client.MatchingLabels{v1beta1.LabelJobName: o.name}
	if o.filter.typ != "" {
		sel[v1beta1.LabelReplicaType] = o.filter.typ
	}
	var list metricsv1beta1.PodMetricsList
	if err := c.List(ctx, &list, client.InNamespace(o.ns), sel); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) || apierrors.IsServiceUnavailable(err) {
			return fmt.Errorf("the cluster serves no metrics API (metrics.k8s.io): install metrics-server to use top (%w)", err)
		}
		return err
	}
	if len(list.Items) == 0 {
		return fmt.Errorf("no metrics for mxjob/%s yet: it has no running pods, or metrics-server has not sampled them (it does every 15s or so); see 'kubectl mxjob describe %s'", o.name, o.name)
	}
	if !o.print.IsTable() {
		pods := make([]runtime.Object, len(list.Items))
		for i := range list.Items {
			pods[i] = &list.Items[i]
		}
		p, err := o.print.ObjectPrinter(o.env.Scheme)
		if err != nil {
			return err
		}
		l, err := cli.AsList(pods, o.env.Scheme)
		if err != nil {
			return err
		}
		return p.PrintObj(l, o.env.Out)
	}
	t := &metav1.Table{ColumnDefinitions: topColumns}
	slices.SortFunc(list.Items, func(a, b metricsv1beta1.PodMetrics) int { return byReplica(&a, &b) })
	for i := range list.Items {
		m := &list.Items[i]
		cpu, mem := podUsage(m)
		row := []any{m.Name, m.Labels[v1beta1.LabelReplicaType] + "-" + m.Labels[v1beta1.LabelReplicaIndex],
			fmt.Sprintf("%dm", cpu.MilliValue()), fmt.Sprintf("%dMi", mem.Value()/(1024*1024))}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: row, Object: runtime.RawExtension{Object: m}})
	}
	return o.print.TablePrinter(false).PrintObj(t, o.env.Out)
}

// podUsage sums a pod's containers, as kubectl top pod does.
func podUsage(m *metricsv1beta1.PodMetrics) (cpu, mem resource.Quantity) {
	for _, c := range m.Containers {
		cpu.Add(c.Usage.Name("cpu", resource.DecimalSI).DeepCopy())
		mem.Add(c.Usage.Name("memory", resource.BinarySI).DeepCopy())
	}
	return cpu, mem
}
