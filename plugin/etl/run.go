package etl

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// dryRunUnset is what a bare --dry-run parses to: kubectl's own --dry-run takes a value, and
// this command's used to be a boolean that created a counting run, which is now --plan.
const dryRunUnset = "unset"

type runOptions struct {
	env *cli.Env
	cmd *cobra.Command
	// output is -o: json, yaml or name. kubectl's template flags are not taken: --template is
	// spec.source.template here, as in AIStore.
	output  string
	run     v1alpha1.TransformRun
	workers int32
	list    []string
	ext     string
	ttl     time.Duration
	timeout time.Duration
	dryRun  string
	plan    bool
	check   bool
	wait    bool
}

func newRunCommand(env *cli.Env) *cobra.Command {
	o := &runOptions{env: env}
	cmd := &cobra.Command{
		Use:   "run NAME --dst PREFIX (--src PREFIX | --list OBJECTS | --template TEMPLATE)",
		Short: "Transform a dataset into another on every node at once (creates a TransformRun)",
		Long: `Create a TransformRun: every object of the source in the namespace's data goes through Transform
NAME (or a pipeline "a>>b") into --dst, on every node where the Transform is ready, each node its
own objects. The source is a prefix (--src), a list of objects (--list) or a template of names
(--template), optionally only the objects ending in --ext.

With --wait, follow it to the end: a progress bar (and one per node) on a terminal, a line per
change otherwise; the exit code is 0 when it succeeded, 1 when it failed, 2 when --timeout
passed first. Ctrl-C stops following, not the run. --plan counts what the run would transform,
per node, and writes nothing. --dry-run=client prints the TransformRun without sending it,
--dry-run=server has the API server check it without storing it.

The run's other commands are under kubectl etl runs (list, describe, follow, wait, suspend,
resume, delete, errors).`,
		Example: `  # Every object under raw/ through md5 into out/, and wait for the end
  kubectl etl run md5 --src raw --dst out --wait

  # AIStore's habits: a template of names, .flac renamed .wav, at most an hour
  kubectl etl run to-wav --template 'audio/clip-{0000..0999}.flac' --ext .flac:.wav --dst wav --wait --timeout 1h

  # How many objects and bytes each node would transform; nothing is written
  kubectl etl run md5 --src raw --dst out --plan

  # Transform every object and keep no result: which ones would fail?
  kubectl etl run md5 --src raw --dst out --check --wait

  # The TransformRun as YAML, checked by the API server, nothing created
  kubectl etl run md5 --src raw --dst out --dry-run=server -o yaml`,
		Args:              cli.ExactArgs("NAME"),
		ValidArgsFunction: completeFirstTransform(env),
		RunE:              cli.RunE(o),
	}
	fs := cmd.Flags()
	spec := &o.run.Spec
	fs.StringVar(&o.run.Name, "run-name", "", "Name of the TransformRun; default the Transform's name and a random suffix.")
	fs.StringVar(&spec.Source.Prefix, "src", "", "Source prefix in the namespace's data (spec.source.prefix).")
	fs.StringSliceVar(&o.list, "list", nil, fmt.Sprintf("Objects to transform, comma-separated or repeated, at most %d (spec.source.objects).", v1alpha1.MaxRunObjects))
	fs.StringVar(&spec.Source.Template, "template", "", `Names of the objects with brace ranges, "shard-{0000..0999}.tar" (spec.source.template).`)
	fs.StringVar(&o.ext, "ext", "", `Only objects ending in EXT; EXT:NEW also renames the results, ".flac:.wav" (AIStore's "{flac:wav}" too).`)
	fs.StringVar(&spec.Destination.Prefix, "dst", "", "Destination prefix in the namespace's data (spec.destination.prefix).")
	fs.StringVar(&spec.Args, "args", "", "Arguments passed to the transformer with every object.")
	fs.StringToStringVar(&spec.NodeSelector, "node-selector", nil, "Run only on nodes with these labels, KEY=VALUE,... (spec.nodeSelector).")
	fs.DurationVar(&o.ttl, "ttl", 0, "Delete the run this long after it finished, in whole seconds, at most 720h (spec.ttlSecondsAfterFinished).")
	fs.BoolVar(&spec.ContinueOnError, "continue-on-error", false, "Go on after a failed object; by default the first failure fails the run.")
	fs.BoolVar(&spec.Suspend, "suspend", false, "Create the run suspended: no node starts until kubectl etl runs resume NAME (spec.suspend).")
	fs.BoolVar(&spec.Overwrite, "overwrite", false, "Replace destination objects that exist; by default such an object fails.")
	fs.Int32Var(&o.workers, "workers-per-node", 0, fmt.Sprintf("Objects each node transforms at once (default %d, at most %d; spec.workersPerNode).", v1alpha1.DefaultRunWorkersPerNode, v1alpha1.MaxRunWorkersPerNode))
	// --workers was this flag's first name; in kubectl mxjob it counts worker replicas, and a flag
	// name means one thing across both plugins.
	fs.Int32Var(&o.workers, "workers", 0, "")
	cli.OldFlagName(cmd, "workers")
	fs.BoolVar(&o.wait, "wait", false, "Follow the run until it ends; exit 1 if it failed, 2 if --timeout passed.")
	fs.DurationVar(&o.timeout, "timeout", 0, "With --wait or --plan, give up waiting after this long (exit 2; the run goes on); 0 waits forever.")
	fs.BoolVar(&o.plan, "plan", false, "Count the objects and bytes each node would transform (a run with spec.dryRun), write nothing, print them.")
	fs.BoolVar(&o.check, "check", false, "Transform every object and discard each result: nothing is written but the error manifest of the objects that fail (spec.check; implies --continue-on-error).")
	fs.StringVar(&o.dryRun, "dry-run", "none", "none, client (print the TransformRun without sending it) or server (the API server checks it, nothing is stored).")
	fs.Lookup("dry-run").NoOptDefVal = dryRunUnset
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{"none", "client", "server"}, cobra.ShellCompDirectiveNoFileComp))
	fs.StringVarP(&o.output, "output", "o", "", "Print the TransformRun created (or with --dry-run, that would be): json, yaml or name.")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(runOutputs, cobra.ShellCompDirectiveNoFileComp))
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
	cli.WarnOldFlagName(cmd, "workers", "workers-per-node", "in kubectl mxjob, --workers counts worker replicas")
	if cmd.Flags().Changed("workers-per-node") || cmd.Flags().Changed("workers") {
		o.run.Spec.WorkersPerNode = &o.workers
	}
	if cmd.Flags().Changed("ttl") {
		ttl := int32(o.ttl / time.Second)
		o.run.Spec.TTLSecondsAfterFinished = &ttl
	}
	o.run.Spec.Source.Objects = o.list
	o.run.Spec.Source.Extension, o.run.Spec.Destination.ToExtension = parseExt(o.ext)
	o.run.Spec.DryRun = o.plan
	// A check is for finding every object that fails, not the first.
	o.run.Spec.Check = o.check
	o.run.Spec.ContinueOnError = o.run.Spec.ContinueOnError || o.check
	// -o and --dry-run=client print the object as kubectl create does: with its kind.
	o.run.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("TransformRun"))
	return nil
}

// parseExt reads --ext: ".flac", ".flac:.wav", or AIStore's "{flac:wav}", whose extensions have
// no dot.
func parseExt(s string) (from, to string) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	from, to, _ = strings.Cut(s, ":")
	return dotted(from), dotted(to)
}

func dotted(ext string) string {
	if ext == "" || strings.HasPrefix(ext, ".") {
		return ext
	}
	return "." + ext
}

func (o *runOptions) Validate() error {
	spec, fs := &o.run.Spec, o.cmd.Flags()
	sources := 0
	for _, f := range []string{"src", "list", "template"} {
		if fs.Changed(f) {
			sources++
		}
	}
	switch {
	case o.dryRun == dryRunUnset:
		return cli.UsageError(o.cmd, "--dry-run takes a value, as kubectl's: --dry-run=client or --dry-run=server; to count what the run would transform, use --plan")
	case o.dryRun != "none" && o.dryRun != "client" && o.dryRun != "server":
		return cli.UsageError(o.cmd, "--dry-run must be none, client or server, not %q", o.dryRun)
	case sources != 1:
		return cli.UsageError(o.cmd, "name the source with exactly one of --src, --list and --template")
	case spec.Destination.Prefix == "":
		return cli.UsageError(o.cmd, "--dst is required")
	case len(o.list) > v1alpha1.MaxRunObjects:
		return cli.UsageError(o.cmd, "--list names %d objects; at most %d are allowed", len(o.list), v1alpha1.MaxRunObjects)
	case spec.WorkersPerNode != nil && (o.workers < 1 || o.workers > v1alpha1.MaxRunWorkersPerNode):
		return cli.UsageError(o.cmd, "--workers-per-node must be between 1 and %d", v1alpha1.MaxRunWorkersPerNode)
	case o.ttl < 0 || o.ttl%time.Second != 0 || o.ttl > v1alpha1.MaxRunTTLSeconds*time.Second:
		return cli.UsageError(o.cmd, "--ttl must be whole seconds between 0 and %s, not %s", time.Duration(v1alpha1.MaxRunTTLSeconds)*time.Second, o.ttl)
	case o.ext != "" && (spec.Source.Extension == "." || spec.Destination.ToExtension == "."):
		return cli.UsageError(o.cmd, `--ext %q: want EXT or EXT:NEW, e.g. .flac or .flac:.wav`, o.ext)
	case o.timeout < 0:
		return cli.UsageError(o.cmd, "--timeout must not be negative")
	case fs.Changed("timeout") && !o.wait && !o.plan:
		return cli.UsageError(o.cmd, "--timeout bounds --wait or --plan; add one of them")
	case o.check && o.plan:
		return cli.UsageError(o.cmd, "--check transforms every object, --plan transforms none; choose one")
	case o.check && spec.Overwrite:
		return cli.UsageError(o.cmd, "--check writes no result, so --overwrite has nothing to replace; drop it")
	case o.plan && o.wait:
		return cli.UsageError(o.cmd, "--plan waits for the counts already; drop --wait")
	case o.dryRun != "none" && (o.plan || o.wait):
		return cli.UsageError(o.cmd, "--dry-run=%s creates no run to wait for; drop --wait and --plan", o.dryRun)
	case o.output != "" && !slices.Contains(runOutputs, o.output):
		return cli.UsageError(o.cmd, "--output must be one of %s, not %q", strings.Join(runOutputs, ", "), o.output)
	}
	return nil
}

// runOutputs are the values of run's -o.
var runOutputs = []string{"json", "yaml", "name"}

func (o *runOptions) Run(ctx context.Context) error {
	if o.dryRun != "client" {
		if err := checkArgsReach(ctx, o.env, o.run.Spec.Transform, o.run.Spec.Args); err != nil {
			return err
		}
	}
	var created *v1alpha1.TransformRun
	err := cli.CreateEach(ctx, o.env, o.dryRun, []*v1alpha1.TransformRun{&o.run},
		func(r *v1alpha1.TransformRun, err error) error {
			return fmt.Errorf("creating TransformRun %s: %w", orGenerated(r), err)
		},
		func(r *v1alpha1.TransformRun) error {
			created = r
			return o.report(r)
		})
	if err != nil || o.dryRun != "none" || (!o.wait && !o.plan) {
		return err
	}
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	if o.plan {
		w := newRunWatch(o.env, c, created.Namespace, created.Name, o.timeout, "counted")
		return printPlan(ctx, w, o.env.Out)
	}
	w := newRunWatch(o.env, c, created.Namespace, created.Name, o.timeout, "finished")
	return followRun(ctx, o.env, w)
}

// report says what was created, or prints it under -o.
func (o *runOptions) report(r *v1alpha1.TransformRun) error {
	var p printers.ResourcePrinter
	switch o.output {
	case "":
		suffix := map[string]string{"none": "", "client": " (dry run)", "server": " (server dry run)"}[o.dryRun]
		fmt.Fprintf(o.env.Out, "transformrun.etl.mlkube.io/%s created%s\n", orGenerated(r), suffix)
		return nil
	case "name":
		fmt.Fprintf(o.env.Out, "transformrun.etl.mlkube.io/%s\n", orGenerated(r))
		return nil
	case "json":
		p = &printers.JSONPrinter{}
	default:
		p = &printers.YAMLPrinter{}
	}
	return cli.PrintObject(&printers.OmitManagedFieldsPrinter{Delegate: p}, r, o.env.Scheme, o.env.Out)
}

// orGenerated is a run's name, or before the API server named it, its generateName and "*".
func orGenerated(r *v1alpha1.TransformRun) string {
	if r.Name != "" {
		return r.Name
	}
	return r.GenerateName + "*"
}

// followRun draws a run's progress until it ends: 0 when it succeeded, ExitFailed with its
// recent failures on stderr when it failed.
func followRun(ctx context.Context, env *cli.Env, w *runWatch) error {
	p := NewProgress(env.Out, isTerminal(env.Out))
	defer p.Done()
	return w.until(ctx, func(run *v1alpha1.TransformRun) (bool, error) {
		p.UpdateNodes(run.Status)
		if !finished(run.Status.Phase) {
			return false, nil
		}
		p.Done()
		if run.Status.Phase == v1alpha1.RunFailed && len(run.Status.Errors) > 0 {
			tbl := ErrorTable(run, run.Status.Errors, env.Clock.Now())
			if err := cli.NewPrintFlags(true).TablePrinter(false).PrintObj(tbl, env.ErrOut); err != nil {
				return true, err
			}
		}
		return true, runFinished(run)
	})
}

// printPlan waits for a counting run (spec.dryRun) to end and prints what each node would
// transform; its progress would say "0/N objects", since a count transforms none.
func printPlan(ctx context.Context, w *runWatch, out io.Writer) error {
	return w.until(ctx, func(run *v1alpha1.TransformRun) (bool, error) {
		if !finished(run.Status.Phase) {
			return false, nil
		}
		if run.Status.Phase == v1alpha1.RunFailed {
			return true, runFinished(run)
		}
		return true, cli.NewPrintFlags(true).TablePrinter(false).PrintObj(PlanTable(run), out)
	})
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
