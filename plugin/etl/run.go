package etl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

type runOptions struct {
	env     *cli.Env
	cmd     *cobra.Command
	run     v1alpha1.TransformRun
	workers int32
	wait    bool
}

func newRunCommand(env *cli.Env) *cobra.Command {
	o := &runOptions{env: env}
	cmd := &cobra.Command{
		Use:   "run NAME --src PREFIX --dst PREFIX",
		Short: "Transform a dataset into another on every node at once (creates a TransformRun)",
		Long: `Create a TransformRun: every object under --src in the namespace's data goes through Transform
NAME (or a pipeline "a>>b") into --dst, on every node where the Transform is ready, each node its
own objects. With --wait, follow it to the end: a progress bar on a terminal, a line per change
otherwise; the exit code is 0 when it succeeded and 1 when it failed.`,
		Example: `  # Every object under raw/ through md5 into out/, and wait for the end
  kubectl etl run md5 --src raw --dst out --wait

  # Count what would be written, going on past failures, 16 objects at once per node
  kubectl etl run md5 --src raw --dst out --dry-run --continue-on-error --workers 16`,
		Args:              cli.ExactArgs("NAME"),
		ValidArgsFunction: completeFirstTransform(env),
		RunE:              cli.RunE(o),
	}
	fs := cmd.Flags()
	spec := &o.run.Spec
	fs.StringVar(&o.run.Name, "run-name", "", "Name of the TransformRun; default the Transform's name and a random suffix.")
	fs.StringVar(&spec.Source.Prefix, "src", "", "Source prefix in the namespace's data.")
	fs.StringVar(&spec.Destination.Prefix, "dst", "", "Destination prefix in the namespace's data.")
	fs.StringVar(&spec.Args, "args", "", "Arguments passed to the transformer with every object.")
	fs.BoolVar(&spec.DryRun, "dry-run", false, "Count and list what would be written; write nothing.")
	fs.BoolVar(&spec.ContinueOnError, "continue-on-error", false, "Go on after a failed object; by default the first failure fails the run.")
	fs.BoolVar(&spec.Overwrite, "overwrite", false, "Replace destination objects that exist; by default such an object fails.")
	fs.Int32Var(&o.workers, "workers", 0, fmt.Sprintf("Objects each node transforms at once (default %d, at most %d).", v1alpha1.DefaultRunWorkersPerNode, v1alpha1.MaxRunWorkersPerNode))
	fs.BoolVar(&o.wait, "wait", false, "Follow the run until it ends; exit 1 if it failed.")
	_ = cmd.MarkFlagRequired("src")
	_ = cmd.MarkFlagRequired("dst")
	return cmd
}

func (o *runOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd = cmd
	ns, _, err := o.env.Clients.Namespace()
	if err != nil {
		return err
	}
	o.run.Namespace, o.run.Spec.Transform = ns, args[0]
	if o.run.Name == "" {
		// A pipeline's separator cannot be in a name.
		o.run.GenerateName = strings.ReplaceAll(args[0], wire.PipelineSeparator, "-") + "-"
	}
	if cmd.Flags().Changed("workers") {
		o.run.Spec.WorkersPerNode = &o.workers
	}
	return nil
}

func (o *runOptions) Validate() error {
	if o.run.Spec.WorkersPerNode != nil && (o.workers < 1 || o.workers > v1alpha1.MaxRunWorkersPerNode) {
		return cli.UsageError(o.cmd, "--workers must be between 1 and %d", v1alpha1.MaxRunWorkersPerNode)
	}
	return nil
}

func (o *runOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	if err := c.Create(ctx, &o.run); err != nil {
		return fmt.Errorf("creating the TransformRun: %w", err)
	}
	fmt.Fprintf(o.env.Out, "transformrun.etl.mlkube.io/%s created\n", o.run.Name)
	if !o.wait {
		return nil
	}
	return o.follow(ctx, c)
}

// follow draws the run's progress from a watch until it ends, watching again from the last
// version seen when the API server closes the watch (it does every few minutes).
func (o *runOptions) follow(ctx context.Context, c client.WithWatch) error {
	p := NewProgress(o.env.Out, isTerminal(o.env.Out))
	defer p.Done()
	run := &o.run
	for {
		p.Update(run.Status)
		if finished(run.Status.Phase) {
			return o.result(p, run)
		}
		w, err := c.Watch(ctx, &v1alpha1.TransformRunList{}, &client.ListOptions{
			Namespace:     run.Namespace,
			FieldSelector: fields.OneTermEqualSelector("metadata.name", run.Name),
			Raw:           &metav1.ListOptions{ResourceVersion: run.ResourceVersion},
		})
		if err != nil {
			return fmt.Errorf("watching TransformRun %s: %w", run.Name, err)
		}
		run, err = o.next(ctx, p, w, run)
		w.Stop()
		if err != nil {
			return err
		}
	}
}

// next follows one watch, drawing each change, until the run ends or the watch closes; it
// returns the run as last seen.
func (o *runOptions) next(ctx context.Context, p *Progress, w watch.Interface, run *v1alpha1.TransformRun) (*v1alpha1.TransformRun, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return run, nil
			}
			switch ev.Type {
			case watch.Error:
				return nil, fmt.Errorf("watching TransformRun %s: %v", run.Name, ev.Object)
			case watch.Deleted:
				return nil, fmt.Errorf("TransformRun %s was deleted before it finished", run.Name)
			}
			if r, ok := ev.Object.(*v1alpha1.TransformRun); ok {
				run = r
			}
			if finished(run.Status.Phase) {
				return run, nil
			}
			p.Update(run.Status)
		}
	}
}

// result reports a finished run: its failures, and exit 1 when it failed.
func (o *runOptions) result(p *Progress, run *v1alpha1.TransformRun) error {
	if run.Status.Phase == v1alpha1.RunSucceeded {
		return nil
	}
	p.Done()
	if len(run.Status.Errors) > 0 {
		tbl := ErrorTable(run, run.Status.Errors, o.env.Clock.Now())
		if err := cli.NewPrintFlags(true).TablePrinter(false).PrintObj(tbl, o.env.ErrOut); err != nil {
			return err
		}
	}
	msg := "failed"
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.RunConditionFailed); c != nil && c.Message != "" {
		msg = "failed: " + c.Message
	}
	return errors.New("TransformRun " + run.Name + " " + msg)
}

func finished(phase v1alpha1.RunPhase) bool {
	return phase == v1alpha1.RunSucceeded || phase == v1alpha1.RunFailed
}

// isTerminal says whether w is a character device, where the progress bar is redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
