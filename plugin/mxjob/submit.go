package mxjob

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/restricted"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// gpuResource is the extended resource NVIDIA's device plugin advertises.
const gpuResource corev1.ResourceName = "nvidia.com/gpu"

// submitSpec is what submit's flags say; buildSubmitJob turns it into an MxJob.
type submitSpec struct {
	name, namespace string
	mode            string
	image           string
	workers         int32
	servers         int32
	port            int32
	env             []string
	command         []string
	restartPolicy   string
	successPolicy   string
	backoffLimit    int32
	// runAsUser is the uid every replica runs as (package restricted).
	runAsUser int64
	// Per role (worker, server, scheduler): image and resources; empty means the default.
	roles map[v1beta1.ReplicaType]*roleFlags
	// data is spec.dataset and the workers' ServiceAccount.
	data datasetFlags
	// kueue is the LocalQueue and priority of a job Kueue queues.
	kueue kueueFlags
}

// roleFlags are the role-prefixed flags, as arena names them: --worker-image, --server-cpu.
type roleFlags struct {
	image, cpu, memory string
	gpus               int64
}

// buildSubmitJob is the MxJob of a submit: local runs one worker; dist runs a scheduler,
// servers and workers, all running the command, as DMLC's launcher does.
func buildSubmitJob(s submitSpec) (*v1beta1.MxJob, error) {
	env, err := envVars(s.env)
	if err != nil {
		return nil, err
	}
	dataset, err := parseDataset(s.data)
	if err != nil {
		return nil, err
	}
	queued, err := kueueLabels(s.kueue)
	if err != nil {
		return nil, err
	}
	job := &v1beta1.MxJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "MxJob"},
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.namespace, Labels: queued},
		Spec: v1beta1.MxJobSpec{JobMode: v1beta1.JobMode(s.mode), Dataset: dataset,
			SuccessPolicy: v1beta1.SuccessPolicy(s.successPolicy)},
	}
	if s.backoffLimit >= 0 {
		job.Spec.RunPolicy.BackoffLimit = ptr.To(s.backoffLimit)
	}
	counts := map[v1beta1.ReplicaType]int32{v1beta1.ReplicaTypeWorker: s.workers}
	if s.mode == string(v1beta1.DistMode) {
		counts[v1beta1.ReplicaTypeScheduler], counts[v1beta1.ReplicaTypeServer] = 1, s.servers
	}
	for _, t := range v1beta1.ReplicaTypes {
		n, ok := counts[t]
		if !ok || n == 0 {
			continue
		}
		rf := s.roles[t]
		if rf == nil {
			rf = &roleFlags{}
		}
		c, err := container(s, rf, env)
		if err != nil {
			return nil, fmt.Errorf("--%s-*: %w", t.Role(), err)
		}
		rs := v1beta1.ReplicaSpec{
			MxReplicaType: t,
			Replicas:      ptr.To(n),
			RestartPolicy: v1beta1.RestartPolicy(s.restartPolicy),
			// Restricted, so that a namespace enforcing that Pod Security Standard admits it.
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				SecurityContext: restricted.Pod(s.runAsUser),
				Containers:      []corev1.Container{c},
			}},
		}
		if t == v1beta1.ReplicaTypeWorker {
			// Only the workers read the dataset, so only they run as its reader.
			rs.Template.Spec.ServiceAccountName = s.data.serviceAccount
		}
		if t == v1beta1.ReplicaTypeScheduler && s.port > 0 {
			rs.PsRootPort = ptr.To(s.port)
		}
		job.Spec.ReplicaSpecs = append(job.Spec.ReplicaSpecs, rs)
	}
	return job, nil
}

func container(s submitSpec, rf *roleFlags, env []corev1.EnvVar) (corev1.Container, error) {
	c := corev1.Container{Name: v1beta1.DefaultContainerName, Image: s.image, Command: s.command, Env: env,
		SecurityContext: restricted.Container()}
	if rf.image != "" {
		c.Image = rf.image
	}
	limits := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: rf.cpu, corev1.ResourceMemory: rf.memory} {
		if v == "" {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return c, fmt.Errorf("%s %q: %w", name, v, err)
		}
		limits[name] = q
	}
	if rf.gpus > 0 {
		limits[gpuResource] = *resource.NewQuantity(rf.gpus, resource.DecimalSI)
	}
	if len(limits) > 0 {
		// Requests equal to limits: a training replica that gets less than it asked for only
		// runs slower and holds its peers back.
		c.Resources = corev1.ResourceRequirements{Limits: limits, Requests: limits.DeepCopy()}
	}
	return c, nil
}

// envVars parses K=V pairs.
func envVars(pairs []string) ([]corev1.EnvVar, error) {
	var out []corev1.EnvVar
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q is not KEY=VALUE", p)
		}
		out = append(out, corev1.EnvVar{Name: k, Value: v})
	}
	return out, nil
}

// restartPolicies are the values of --restart-policy.
var restartPolicies = []string{string(v1beta1.RestartPolicyNever), string(v1beta1.RestartPolicyOnFailure), string(v1beta1.RestartPolicyAlways), string(v1beta1.RestartPolicyExitCode)}

type submitOptions struct {
	env    *cli.Env
	cmd    *cobra.Command
	spec   submitSpec
	dryRun string
	print  *cli.PrintFlags
}

func newSubmitCommand(env *cli.Env) *cobra.Command {
	o := &submitOptions{env: env, print: cli.NewPrintFlags(false), spec: submitSpec{roles: map[v1beta1.ReplicaType]*roleFlags{}}}
	cmd := &cobra.Command{
		Use:   "submit NAME --image IMAGE [flags] -- COMMAND [ARGS...]",
		Short: "Submit an MxJob from flags, without writing YAML",
		Example: `  # A distributed job: 1 scheduler, 2 servers and 4 workers with one GPU each
  kubectl mxjob submit mnist --image mxnet/python:1.9.1-gpu --servers 2 --workers 4 --worker-gpus 1 \
    --env EPOCHS=10 -- python /code/train.py --kv-store dist_sync

  # A single worker, no parameter servers
  kubectl mxjob submit quick --mode local --image mxnet/python:1.9.1 -- python train.py

  # Two workers, one per node, each reading the decoded objects under train/ through its node's agent
  kubectl mxjob submit resnet --mode dist --workers 2 --image trainer:1 --dataset etl:train/ --transform decode \
    --service-account trainer -- python train.py

  # Queue it in Kueue: it starts once the LocalQueue team has room for all of its replicas
  kubectl mxjob submit mnist --image mxnet/python:1.9.1 --workers 4 --worker-cpu 2 --server-cpu 1 --scheduler-cpu 500m \
    --queue team --priority-class high -- python train.py

  # Show the MxJob instead of submitting it
  kubectl mxjob submit mnist --image mxnet/python:1.9.1 --dry-run=client -o yaml -- python train.py`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() == 0 || len(args) == 0 {
				return cli.UsageError(cmd, "NAME is required")
			}
			if cmd.ArgsLenAtDash() < 0 {
				return cli.UsageError(cmd, "the command to run is required after --")
			}
			if cmd.ArgsLenAtDash() > 1 {
				return cli.UsageError(cmd, "unexpected argument %q before --", args[1])
			}
			return nil
		},
		RunE: cli.RunE(o),
	}
	f := cmd.Flags()
	s := &o.spec
	f.StringVar(&s.image, "image", "", "Image of every replica (required unless each role has its own).")
	f.StringVar(&s.mode, "mode", string(v1beta1.DistMode), "dist (scheduler, servers and workers) or local (one worker).")
	f.Int32Var(&s.workers, "workers", 1, "Number of workers.")
	f.Int32Var(&s.servers, "servers", 1, "Number of parameter servers (dist).")
	f.Int32Var(&s.port, "port", 0, "Port of the scheduler (DMLC_PS_ROOT_PORT); defaults to 9091.")
	f.StringArrayVar(&s.env, "env", nil, "Environment variable KEY=VALUE of every replica; repeatable.")
	f.StringVar(&s.restartPolicy, "restart-policy", string(v1beta1.RestartPolicyNever), strings.Join(restartPolicies, ", ")+".")
	f.StringVar(&s.successPolicy, "success-policy", "",
		"When a dist job has succeeded: unset, when its scheduler has; AllWorkers, when every worker has (a scheduler that only hosts the rendezvous).")
	f.Int32Var(&s.backoffLimit, "backoff-limit", -1, "Restarts allowed before the job fails; unset means no limit.")
	f.Int64Var(&s.runAsUser, "run-as-user", restricted.DefaultUser,
		"The uid (and gid) every replica runs as. Replicas run non-root, without privilege escalation or capabilities, with the runtime's seccomp profile: the restricted Pod Security Standard.")
	f.StringVar(&s.data.dataset, "dataset", "",
		"Objects of the namespace's data the workers read through their node's agent: etl:DIR/ or etl:TEMPLATE (etl:shard-{000..999}.tar). Workers get a data path token and spread one per node.")
	f.StringVar(&s.data.transform, "transform", "", "Transform (or pipeline a>>b) the --dataset objects go through on their node.")
	f.StringVar(&s.data.args, "transform-args", "", "Arguments of --transform, at most 4 KiB.")
	f.StringVar(&s.data.serviceAccount, "service-account", "", "ServiceAccount the workers run as and read --dataset with; defaults to the namespace's default.")
	f.StringVar(&s.kueue.queue, "queue", "",
		"LocalQueue of the namespace to queue the job in (label kueue.x-k8s.io/queue-name): Kueue starts it once the queue's quota holds all of its replicas, charging their requests (--worker-cpu, ...).")
	f.StringVar(&s.kueue.priorityClass, "priority-class", "",
		"WorkloadPriorityClass of a --queue job (label kueue.x-k8s.io/priority-class): Kueue admits it before, and may preempt for it, jobs of lower priority.")
	f.StringVar(&o.dryRun, "dry-run", "none", "none, client (print the MxJob) or server (the API server checks it, nothing is stored).")
	for _, t := range v1beta1.ReplicaTypes {
		rf := &roleFlags{}
		s.roles[t] = rf
		role := t.Role()
		f.StringVar(&rf.image, role+"-image", "", fmt.Sprintf("Image of the %s, instead of --image.", role))
		f.StringVar(&rf.cpu, role+"-cpu", "", fmt.Sprintf("CPU of each %s, e.g. 4 or 500m.", role))
		f.StringVar(&rf.memory, role+"-memory", "", fmt.Sprintf("Memory of each %s, e.g. 8Gi.", role))
		f.Int64Var(&rf.gpus, role+"-gpus", 0, fmt.Sprintf("GPUs (%s) of each %s.", gpuResource, role))
	}
	_ = cmd.RegisterFlagCompletionFunc("mode", cobra.FixedCompletions([]string{"dist", "local"}, cobra.ShellCompDirectiveNoFileComp))
	o.print.AddFlags(cmd)
	return cmd
}

func (o *submitOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd = cmd
	o.spec.name, o.spec.command = args[0], args[1:]
	ns, _, err := o.env.Clients.Namespace()
	o.spec.namespace = ns
	return err
}

func (o *submitOptions) Validate() error {
	s := o.spec
	switch {
	case s.mode != string(v1beta1.DistMode) && s.mode != string(v1beta1.LocalMode):
		return cli.UsageError(o.cmd, "--mode must be dist or local, not %q", s.mode)
	case s.mode == string(v1beta1.LocalMode) && s.workers != 1:
		return cli.UsageError(o.cmd, "--mode local runs one worker; drop --workers or use --mode dist")
	case s.mode == string(v1beta1.LocalMode) && o.cmd.Flags().Changed("servers"):
		return cli.UsageError(o.cmd, "--mode local has no servers; drop --servers or use --mode dist")
	case s.workers < 1 || s.workers > v1beta1.MaxReplicas:
		return cli.UsageError(o.cmd, "--workers must be 1 to %d", v1beta1.MaxReplicas)
	case s.mode == string(v1beta1.DistMode) && (s.servers < 1 || s.servers > v1beta1.MaxReplicas):
		return cli.UsageError(o.cmd, "--servers must be 1 to %d in dist mode", v1beta1.MaxReplicas)
	case s.runAsUser < 1 || s.runAsUser > math.MaxInt32:
		return cli.UsageError(o.cmd, "--run-as-user must be a non-root uid, 1 to %d", math.MaxInt32)
	case s.port < 0 || s.port > 65535:
		return cli.UsageError(o.cmd, "--port must be 1 to 65535")
	case s.successPolicy != "" && s.successPolicy != string(v1beta1.SuccessPolicyAllWorkers):
		return cli.UsageError(o.cmd, "--success-policy must be AllWorkers or unset, not %q", s.successPolicy)
	case s.successPolicy != "" && s.mode == string(v1beta1.LocalMode):
		return cli.UsageError(o.cmd, "--mode local succeeds with its worker; drop --success-policy or use --mode dist")
	case o.dryRun != "none" && o.dryRun != "client" && o.dryRun != "server":
		return cli.UsageError(o.cmd, "--dry-run must be none, client or server, not %q", o.dryRun)
	}
	if _, err := parseDataset(s.data); err != nil {
		return cli.UsageError(o.cmd, "%v", err)
	}
	if _, err := kueueLabels(s.kueue); err != nil {
		return cli.UsageError(o.cmd, "%v", err)
	}
	if !slices.Contains(restartPolicies, s.restartPolicy) {
		return cli.UsageError(o.cmd, "--restart-policy %q is not one of %s", s.restartPolicy, strings.Join(restartPolicies, ", "))
	}
	// Quantities are checked here, naming the flag, rather than by the API server's regular
	// expression.
	for _, t := range v1beta1.ReplicaTypes {
		rf := s.roles[t]
		for _, q := range []struct{ flag, value, example string }{{"cpu", rf.cpu, "4 or 500m"}, {"memory", rf.memory, "8Gi or 512Mi"}} {
			if _, err := resource.ParseQuantity(q.value); q.value != "" && err != nil {
				return cli.UsageError(o.cmd, "--%s-%s %q is not a quantity; use e.g. %s", t.Role(), q.flag, q.value, q.example)
			}
		}
		if rf.gpus < 0 {
			return cli.UsageError(o.cmd, "--%s-gpus must not be negative", t.Role())
		}
	}
	if s.image == "" {
		for _, t := range v1beta1.ReplicaTypes {
			if s.roles[t].image == "" && o.runs(t) {
				return cli.UsageError(o.cmd, "--image is required (or --%s-image)", t.Role())
			}
		}
	}
	if o.print.Output() != "" {
		return o.print.Validate()
	}
	return nil
}

// runs says whether the job has replicas of type t.
func (o *submitOptions) runs(t v1beta1.ReplicaType) bool {
	return t == v1beta1.ReplicaTypeWorker || o.spec.mode == string(v1beta1.DistMode)
}

func (o *submitOptions) Run(ctx context.Context) error {
	job, err := buildSubmitJob(o.spec)
	if err != nil {
		return err
	}
	c := &createOptions{env: o.env, dryRun: o.dryRun, print: o.print, jobs: []*v1beta1.MxJob{job}}
	return c.create(ctx)
}
