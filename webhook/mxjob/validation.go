package mxjob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/webhook/internal/fieldcheck"
)

// maxLabelLen is the length limit of a DNS-1035 label, which every replica's pod and Service
// name must be.
const maxLabelLen = 63

var (
	specPath     = field.NewPath("spec")
	replicasPath = specPath.Child("replicaSpecs")
	runPath      = specPath.Child("runPolicy")

	modes           = []string{string(v1beta1.LocalMode), string(v1beta1.DistMode)}
	replicaTypes    = []string{string(v1beta1.ReplicaTypeScheduler), string(v1beta1.ReplicaTypeServer), string(v1beta1.ReplicaTypeWorker)}
	restartPolicies = []string{string(v1beta1.RestartPolicyNever), string(v1beta1.RestartPolicyOnFailure), string(v1beta1.RestartPolicyAlways), string(v1beta1.RestartPolicyExitCode)}
	cleanPolicies   = []string{string(v1beta1.CleanPodPolicyNone), string(v1beta1.CleanPodPolicyRunning), string(v1beta1.CleanPodPolicyAll)}
	successPolicies = []string{string(v1beta1.SuccessPolicyDefault), string(v1beta1.SuccessPolicyAllWorkers)}
)

// ValidateCreate returns every problem of a new job. Unset optional fields count as their defaults,
// so a job is judged the same before and after defaulting.
func ValidateCreate(job *v1beta1.MxJob) field.ErrorList {
	errs := validateName(job)
	errs = append(errs, validateSpec(&job.Spec)...)
	return append(errs, validateDeclaredPorts(&job.Spec)...)
}

// ValidateUpdate returns every problem of an update: the new job must be valid, and its spec may
// change only in runPolicy.suspend (and in what defaulting adds).
func ValidateUpdate(old, job *v1beta1.MxJob) field.ErrorList {
	if job.DeletionTimestamp != nil {
		return nil // let finalizers be removed whatever the spec holds
	}
	errs := validateSpec(&job.Spec)
	return append(errs, validateImmutable(&old.Spec, &job.Spec)...)
}

// schedulingDirectives copies the parts of each template that may change while the job is
// suspended (Kueue sets them on admission and restores them on eviction, as for Kubernetes Jobs'
// mutable scheduling directives) from the new spec onto the old, so that the comparison ignores
// them; only when old or new is suspended, and only between replica specs of the same type.
func schedulingDirectives(o, n *v1beta1.MxJobSpec) {
	if !o.RunPolicy.Suspended() && !n.RunPolicy.Suspended() {
		return
	}
	for i := range o.ReplicaSpecs {
		to := o.ReplicaSpecs[i].Template
		from := n.ReplicaSpecFor(o.ReplicaSpecs[i].MxReplicaType)
		if to == nil || from == nil || from.Template == nil {
			continue
		}
		to.Labels, to.Annotations = from.Template.Labels, from.Template.Annotations
		to.Spec.NodeSelector, to.Spec.Affinity = from.Template.Spec.NodeSelector, from.Template.Spec.Affinity
		to.Spec.Tolerations, to.Spec.SchedulingGates = from.Template.Spec.Tolerations, from.Template.Spec.SchedulingGates
	}
}

func validateName(job *v1beta1.MxJob) field.ErrorList {
	name := fieldcheck.EffectiveName(job.Name, job.GenerateName)
	longest := 0
	example := ""
	for _, rs := range job.Spec.ReplicaSpecs {
		// The longest name is the last replica's: the job's name with an empty name before it.
		suffix := v1beta1.ReplicaName("", typeOrDefault(rs.MxReplicaType), int(rs.ReplicaCount())-1)
		if len(suffix) > longest {
			longest, example = len(suffix), suffix
		}
	}
	why := "so that the replica names stay valid 63-character DNS labels"
	if example != "" {
		why = fmt.Sprintf("so that replica names like %q stay valid 63-character DNS labels", "<name>"+example)
	}
	return fieldcheck.DNSLabelName(field.NewPath("metadata", "name"), name, maxLabelLen-longest, why)
}

func validateSpec(spec *v1beta1.MxJobSpec) field.ErrorList {
	var errs field.ErrorList
	mode := spec.JobMode
	if mode == "" {
		mode = v1beta1.InferMode(spec.ReplicaSpecs)
	}
	errs = append(errs, fieldcheck.OneOf(specPath.Child("jobMode"), string(mode), modes)...)
	if len(spec.ReplicaSpecs) == 0 {
		errs = append(errs, field.Required(replicasPath, "at least one replica spec is required; add a WORKER"))
	}
	seen := map[v1beta1.ReplicaType]int{}
	workers := int32(0)
	for i := range spec.ReplicaSpecs {
		rs := &spec.ReplicaSpecs[i]
		p := replicasPath.Index(i)
		typ := typeOrDefault(rs.MxReplicaType)
		if first, dup := seen[typ]; dup {
			errs = append(errs, field.Duplicate(p.Child("mxReplicaType"), fmt.Sprintf(
				"%s (already at spec.replicaSpecs[%d]): each replica type may appear once; merge them and raise replicas", typ, first)))
		} else {
			seen[typ] = i
		}
		if typ == v1beta1.ReplicaTypeWorker {
			workers += rs.ReplicaCount()
		}
		errs = append(errs, validateReplicaSpec(p, rs, typ)...)
		if mode == v1beta1.LocalMode && typ != v1beta1.ReplicaTypeWorker {
			errs = append(errs, field.Forbidden(p.Child("mxReplicaType"), fmt.Sprintf(
				"local mode runs only a WORKER, not a %s; remove this replica spec or set spec.jobMode to dist", typ)))
		}
	}
	if mode == v1beta1.LocalMode && workers > 1 {
		errs = append(errs, field.Invalid(replicasPath, workers,
			"local mode runs at most one worker; set the WORKER replicas to 1 or set spec.jobMode to dist"))
	}
	if mode == v1beta1.DistMode {
		for _, typ := range v1beta1.ReplicaTypes {
			if _, ok := seen[typ]; !ok {
				errs = append(errs, field.Required(replicasPath, fmt.Sprintf(
					"dist mode needs a %s replica spec; add one or set spec.jobMode to local", typ)))
			}
		}
	}
	errs = append(errs, validateRunPolicy(&spec.RunPolicy)...)
	errs = append(errs, fieldcheck.OneOf(specPath.Child("successPolicy"), string(spec.SuccessPolicy), successPolicies)...)
	return append(errs, validateDataset(spec)...)
}

func validateReplicaSpec(p *field.Path, rs *v1beta1.ReplicaSpec, typ v1beta1.ReplicaType) field.ErrorList {
	errs := fieldcheck.OneOf(p.Child("mxReplicaType"), string(typ), replicaTypes)
	replicas := rs.ReplicaCount()
	switch {
	case replicas < 1:
		errs = append(errs, field.Invalid(p.Child("replicas"), replicas, "must be at least 1"))
	case replicas > v1beta1.MaxReplicas:
		errs = append(errs, field.Invalid(p.Child("replicas"), replicas, fmt.Sprintf(
			"must be at most %d, mlkube's limit for one replica spec; split the work over several jobs", v1beta1.MaxReplicas)))
	case typ == v1beta1.ReplicaTypeScheduler && replicas != 1:
		errs = append(errs, field.Invalid(p.Child("replicas"), replicas, "a job has exactly one SCHEDULER; set replicas to 1"))
	}
	if rs.PsRootPort != nil {
		errs = append(errs, fieldcheck.Port(p.Child("psRootPort"), *rs.PsRootPort)...)
	}
	if rs.RestartPolicy != "" {
		errs = append(errs, fieldcheck.OneOf(p.Child("restartPolicy"), string(rs.RestartPolicy), restartPolicies)...)
	}
	if rs.Template == nil {
		return append(errs, field.Required(p.Child("template"), "a pod template with a container named \"mxnet\" is required"))
	}
	cp := p.Child("template", "spec", "containers")
	if MxnetContainer(rs.Template.Spec.Containers) == nil {
		errs = append(errs, field.Required(cp, "a container named \"mxnet\" is required"))
	}
	return append(errs, fieldcheck.Containers(cp, rs.Template.Spec.Containers)...)
}

// validateDeclaredPorts rejects a psRootPort that differs from the mxjob-port its mxnet container
// declares: the replica's Service and DMLC_PS_ROOT_PORT use psRootPort, so the process listening
// on the declared port would never be reached. Only creates are checked: the spec cannot change
// afterwards, and a job stored with both before this rule must stay suspendable and resumable.
func validateDeclaredPorts(spec *v1beta1.MxJobSpec) field.ErrorList {
	var errs field.ErrorList
	for i, rs := range spec.ReplicaSpecs {
		if rs.PsRootPort == nil || rs.Template == nil {
			continue // an unset psRootPort defaults to the declared port
		}
		c, p := mxjobPort(rs.Template.Spec.Containers)
		if p < 0 {
			continue
		}
		declared := rs.Template.Spec.Containers[c].Ports[p].ContainerPort
		if declared == *rs.PsRootPort {
			continue
		}
		rp := replicasPath.Index(i)
		portPath := rp.Child("template", "spec", "containers").Index(c).Child("ports").Index(p).Child("containerPort")
		errs = append(errs, field.Invalid(rp.Child("psRootPort"), *rs.PsRootPort, fmt.Sprintf(
			"differs from %s (%d), the %q port of container %q; remove psRootPort (it defaults to the declared port) or set it to %d",
			portPath, declared, v1beta1.DefaultPortName, v1beta1.DefaultContainerName, declared)))
	}
	return errs
}

func validateRunPolicy(rp *v1beta1.RunPolicy) field.ErrorList {
	var errs field.ErrorList
	if rp.CleanPodPolicy != "" {
		errs = append(errs, fieldcheck.OneOf(runPath.Child("cleanPodPolicy"), string(rp.CleanPodPolicy), cleanPolicies)...)
	}
	errs = append(errs, fieldcheck.NonNegative(runPath.Child("backoffLimit"), rp.BackoffLimit)...)
	errs = append(errs, fieldcheck.AtMost(runPath.Child("backoffLimit"), rp.BackoffLimit, v1beta1.MaxBackoffLimit)...)
	errs = append(errs, fieldcheck.NonNegative(runPath.Child("activeDeadlineSeconds"), rp.ActiveDeadlineSeconds)...)
	errs = append(errs, fieldcheck.AtMost(runPath.Child("activeDeadlineSeconds"), rp.ActiveDeadlineSeconds, v1beta1.MaxSeconds)...)
	errs = append(errs, fieldcheck.NonNegative(runPath.Child("ttlSecondsAfterFinished"), rp.TTLSecondsAfterFinished)...)
	return append(errs, fieldcheck.AtMost(runPath.Child("ttlSecondsAfterFinished"), rp.TTLSecondsAfterFinished, int32(v1beta1.MaxSeconds))...)
}

// validateImmutable compares the defaulted specs, so an update that only spells out a default is
// no change; runPolicy.suspend is the one field that may change.
func validateImmutable(oldSpec, newSpec *v1beta1.MxJobSpec) field.ErrorList {
	o, n := oldSpec.DeepCopy(), newSpec.DeepCopy()
	DefaultSpec(o)
	DefaultSpec(n)
	schedulingDirectives(o, n)
	o.RunPolicy.Suspend = n.RunPolicy.Suspend
	const msg = "is immutable once the job exists (only spec.runPolicy.suspend may change); delete and recreate the job to change it"
	var errs field.ErrorList
	check := func(p *field.Path, a, b any) {
		if !equality.Semantic.DeepEqual(a, b) {
			errs = append(errs, field.Forbidden(p, "field "+msg))
		}
	}
	check(specPath.Child("jobMode"), o.JobMode, n.JobMode)
	check(specPath.Child("successPolicy"), o.SuccessPolicy, n.SuccessPolicy)
	check(runPath, o.RunPolicy, n.RunPolicy)
	check(datasetPath, o.Dataset, n.Dataset)
	if len(o.ReplicaSpecs) != len(n.ReplicaSpecs) {
		check(replicasPath, len(o.ReplicaSpecs), len(n.ReplicaSpecs))
		return errs
	}
	for i := range o.ReplicaSpecs {
		check(replicasPath.Index(i), o.ReplicaSpecs[i], n.ReplicaSpecs[i])
	}
	return errs
}

func typeOrDefault(t v1beta1.ReplicaType) v1beta1.ReplicaType {
	if t == "" {
		return v1beta1.ReplicaTypeWorker
	}
	return t
}

// Warnings points out template fields the controller overrides, so nobody relies on them.
func Warnings(job *v1beta1.MxJob) []string {
	var warnings []string
	for i, rs := range job.Spec.ReplicaSpecs {
		if rs.Template != nil && rs.Template.Spec.RestartPolicy != "" {
			p := replicasPath.Index(i)
			warnings = append(warnings, fmt.Sprintf("%s is ignored: the controller sets each pod's restart policy from %s",
				p.Child("template", "spec", "restartPolicy"), p.Child("restartPolicy")))
		}
	}
	return warnings
}
