package mxjob

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

type createOptions struct {
	env       *cli.Env
	cmd       *cobra.Command
	filenames []string
	dryRun    string
	print     *cli.PrintFlags

	explicitNS bool
	namespace  string
	jobs       []*v1beta1.MxJob
}

func newCreateCommand(env *cli.Env) *cobra.Command {
	o := &createOptions{env: env, print: cli.NewPrintFlags(false)}
	cmd := &cobra.Command{
		Use:   "create -f FILENAME",
		Short: "Create MxJobs from files, URLs or stdin; Kubeflow MXJobs are converted",
		Long: `Create MxJobs from YAML or JSON, any number of documents per file. Kubeflow MXJobs (kubeflow.org/v1
and v1beta1) are converted to mxnet.mlkube.io/v1beta1 MxJobs; each change is printed to stderr.
Kubeflow's Scheduler port (the mxnet container's port named mxjob-port) becomes psRootPort.
Kueue, which admits all of a queued MxJob's pods at once, stands in for Kubeflow's gang
scheduling: runPolicy.schedulingPolicy.queue becomes the label kueue.x-k8s.io/queue-name (the
LocalQueue the job waits in), its priorityClass the priorityClassName of each template that names
none, and its minAvailable, minResources and scheduleTimeoutSeconds are dropped.`,
		Example: `  # Create the jobs of a file
  kubectl mxjob create -f mnist.yaml

  # Convert a Kubeflow MXJob and show the MxJob without creating it
  kubectl mxjob create -f kubeflow-mxjob.yaml --dry-run=client -o yaml

  # From a URL, or from stdin
  kubectl mxjob create -f https://example.com/jobs/mnist.yaml
  cat mnist.yaml | kubectl mxjob create -f -`,
		Args: cli.ExactArgs(),
		RunE: cli.RunE(o),
	}
	cmd.Flags().StringSliceVarP(&o.filenames, "filename", "f", nil, "File, URL or - (stdin) holding MxJobs or Kubeflow MXJobs; repeatable.")
	cmd.Flags().StringVar(&o.dryRun, "dry-run", "none", "none, client (print what would be created) or server (the API server checks and defaults it, and stores nothing).")
	o.print.AddFlags(cmd)
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

func (o *createOptions) Complete(cmd *cobra.Command, _ []string) error {
	o.cmd = cmd
	ns, explicit, err := o.env.Clients.Namespace()
	o.namespace, o.explicitNS = ns, explicit
	return err
}

func (o *createOptions) Validate() error {
	if len(o.filenames) == 0 {
		return cli.UsageError(o.cmd, "-f FILENAME is required")
	}
	switch o.dryRun {
	case "none", "client", "server":
	default:
		return cli.UsageError(o.cmd, "--dry-run must be none, client or server, not %q", o.dryRun)
	}
	if o.print.Output() == "" {
		return nil
	}
	return o.print.Validate()
}

func (o *createOptions) Run(ctx context.Context) error {
	for _, f := range o.filenames {
		docs, err := cli.ReadDocuments(ctx, f, o.env.In)
		if err != nil {
			return err
		}
		for i, doc := range docs {
			if cli.EmptyDocument(doc) {
				continue
			}
			job, changes, err := decodeJob(doc)
			if err != nil {
				return fmt.Errorf("%s, document %d: %w", f, i+1, err)
			}
			if err := o.setNamespace(job); err != nil {
				return err
			}
			cli.ReportConversion(o.env, "Kubeflow MXJob", job.Name, changes)
			o.jobs = append(o.jobs, job)
		}
	}
	return o.create(ctx)
}

// create creates every job read, all documents having been read first, so a mistake in the last
// document creates nothing.
func (o *createOptions) create(ctx context.Context) error {
	return cli.CreateEach(ctx, o.env, o.dryRun, o.jobs,
		func(job *v1beta1.MxJob, err error) error {
			return fmt.Errorf("creating MxJob %q: %w", job.Name, err)
		},
		o.printCreated)
}

func (o *createOptions) printCreated(job *v1beta1.MxJob) error {
	suffix := map[string]string{"none": "", "client": " (dry run)", "server": " (server dry run)"}[o.dryRun]
	return cli.ReportCreated(o.env, o.print, job, "mxjob.mxnet.mlkube.io/"+job.Name+" created"+suffix)
}

// setNamespace puts a job into the namespace of -n or the context, refusing a document naming
// another namespace than an explicit -n, as kubectl does.
func (o *createOptions) setNamespace(job *v1beta1.MxJob) error {
	switch {
	case job.Namespace == "":
		job.Namespace = o.namespace
	case o.explicitNS && job.Namespace != o.namespace:
		return fmt.Errorf("MxJob %q names namespace %q but -n says %q; drop one of them", job.Name, job.Namespace, o.namespace)
	}
	return nil
}
