package transform

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/fieldcheck"
)

var (
	specPath = field.NewPath("spec")

	communications = []string{string(v1alpha1.CommHPush), string(v1alpha1.CommHPull), string(v1alpha1.CommIO), string(v1alpha1.CommWS)}
	arguments      = []string{string(v1alpha1.ArgBytes), string(v1alpha1.ArgFQN), string(v1alpha1.ArgURL)}
	failurePolicy  = []string{string(v1alpha1.FailureAbort), string(v1alpha1.FailureRestart)}
	ioModes        = []string{string(v1alpha1.IOPerObject), string(v1alpha1.IOPersistent)}

	pythonIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// ValidateCreate returns every problem of a new Transform. Unset optional fields count as their
// defaults, so a Transform is judged the same before and after defaulting.
func ValidateCreate(t *v1alpha1.Transform) field.ErrorList {
	name := fieldcheck.EffectiveName(t.Name, t.GenerateName)
	errs := fieldcheck.DNSLabelName(field.NewPath("metadata", "name"), name, v1alpha1.MaxNameLength,
		fmt.Sprintf("so that per-node pod names \"<name>-<%d-character node hash>\" stay valid DNS labels", v1alpha1.NodeHashLength))
	errs = append(errs, validateSpec(&t.Spec)...)
	return append(errs, validatePodSecurity(&t.Spec)...)
}

// ValidateUpdate returns every problem of an update: the new Transform must be valid and what
// defines the transformer must not change. Pod Security is not judged again: it depends only on
// the immutable fields, so the verdict given at create stands, and a Transform admitted before a
// rule tightened can still be relabelled or have its mutable fields changed.
func ValidateUpdate(old, t *v1alpha1.Transform) field.ErrorList {
	if t.DeletionTimestamp != nil {
		return nil // let finalizers be removed whatever the spec holds
	}
	errs := validateSpec(&t.Spec)
	return append(errs, validateImmutable(&old.Spec, &t.Spec)...)
}

func validateSpec(spec *v1alpha1.TransformSpec) field.ErrorList {
	errs := validateForm(spec)
	comm := strings.TrimSuffix(string(spec.Communication), "://")
	if comm != "" {
		errs = append(errs, fieldcheck.OneOf(specPath.Child("communication"), comm, communications)...)
	}
	errs = append(errs, fieldcheck.OneOf(specPath.Child("argument"), string(spec.Argument), arguments)...)
	if spec.FailurePolicy != "" {
		errs = append(errs, fieldcheck.OneOf(specPath.Child("failurePolicy"), string(spec.FailurePolicy), failurePolicy)...)
	}
	errs = append(errs, timeout(specPath.Child("initTimeout"), spec.InitTimeout, v1alpha1.MaxInitTimeout)...)
	errs = append(errs, timeout(specPath.Child("objectTimeout"), spec.ObjectTimeout, v1alpha1.MaxObjectTimeout)...)
	errs = append(errs, fieldcheck.MaxItems(specPath.Child("env"), len(spec.Env), v1alpha1.MaxEnv)...)
	errs = append(errs, fieldcheck.Env(specPath.Child("env"), spec.Env)...)
	errs = append(errs, fieldcheck.MaxItems(specPath.Child("nodeSelector"), len(spec.NodeSelector), v1alpha1.MaxNodeSelector)...)
	errs = append(errs, fieldcheck.NodeSelector(specPath.Child("nodeSelector"), spec.NodeSelector)...)
	errs = append(errs, fieldcheck.MaxItems(specPath.Child("tolerations"), len(spec.Tolerations), v1alpha1.MaxTolerations)...)
	errs = append(errs, fieldcheck.Tolerations(specPath.Child("tolerations"), spec.Tolerations)...)
	if comm == string(v1alpha1.CommIO) {
		errs = append(errs, validateIOCommand(spec)...)
	}
	return append(errs, validateIOMode(spec.IOMode, comm)...)
}

// validateIOMode checks spec.ioMode, which only communication io has.
func validateIOMode(mode v1alpha1.IOMode, comm string) field.ErrorList {
	p := specPath.Child("ioMode")
	switch {
	case mode == "":
		return nil
	case comm != string(v1alpha1.CommIO):
		return field.ErrorList{field.Forbidden(p, fmt.Sprintf(
			"ioMode applies to communication io only, and spec.communication is %q; remove spec.ioMode or set spec.communication: io",
			cmp.Or(comm, string(v1alpha1.DefaultCommunication))))}
	}
	return fieldcheck.OneOf(p, string(mode), ioModes)
}

// validateForm checks that exactly one of runtime, podTemplate and code describes the transformer,
// then checks that one.
func validateForm(spec *v1alpha1.TransformSpec) field.ErrorList {
	var set []string
	var errs field.ErrorList
	if spec.Runtime != nil {
		set = append(set, "runtime")
		errs = append(errs, validateRuntime(specPath.Child("runtime"), spec.Runtime)...)
	}
	if spec.PodTemplate != nil {
		set = append(set, "podTemplate")
		errs = append(errs, validatePodTemplate(specPath.Child("podTemplate"), spec.PodTemplate)...)
	}
	if spec.Code != nil {
		set = append(set, "code")
		errs = append(errs, validateCode(specPath.Child("code"), spec.Code)...)
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(specPath, "describe the transformer with exactly one of spec.runtime (an image), spec.podTemplate (a full pod) or spec.code (source for a runtime)"))
	case 1:
	default:
		for _, f := range set[1:] {
			errs = append(errs, field.Forbidden(specPath.Child(f), fmt.Sprintf(
				"only one of spec.runtime, spec.podTemplate and spec.code may be set, and spec.%s is set too; remove one", set[0])))
		}
	}
	return errs
}

func validateRuntime(p *field.Path, rt *v1alpha1.RuntimeSpec) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(rt.Image) == "" {
		errs = append(errs, field.Required(p.Child("image"), "the transformer's image is required"))
	}
	errs = append(errs, fieldcheck.MaxLen(p.Child("image"), rt.Image, v1alpha1.MaxImage)...)
	errs = append(errs, words(p.Child("command"), rt.Command)...)
	errs = append(errs, words(p.Child("args"), rt.Args)...)
	errs = append(errs, fieldcheck.MaxItems(p.Child("env"), len(rt.Env), v1alpha1.MaxEnv)...)
	return append(errs, fieldcheck.Env(p.Child("env"), rt.Env)...)
}

// words bounds a command or its args: how many words, and each word.
func words(p *field.Path, ws []string) field.ErrorList {
	errs := fieldcheck.MaxItems(p, len(ws), v1alpha1.MaxCommandItems)
	for i, w := range ws {
		errs = append(errs, fieldcheck.MaxLen(p.Index(i), w, v1alpha1.MaxCommandItem)...)
	}
	return errs
}

func validatePodTemplate(p *field.Path, tmpl *corev1.PodTemplateSpec) field.ErrorList {
	cp := p.Child("spec", "containers")
	containers := tmpl.Spec.Containers
	if len(containers) != 1 {
		return field.ErrorList{field.Invalid(cp, len(containers), "exactly one container (the transformer) is required")}
	}
	errs := fieldcheck.Containers(cp, containers)
	errs = append(errs, validateReservedNames(p.Child("spec"), &tmpl.Spec)...)
	c := &containers[0]
	if v1alpha1.TransformerPort(c.Ports) == nil {
		errs = append(errs, field.Required(cp.Index(0).Child("ports"), fmt.Sprintf(
			"a port named %q is required: the node agent talks to the transformer there", v1alpha1.DefaultPortName)))
	}
	return errs
}

func validateCode(p *field.Path, code *v1alpha1.CodeSpec) field.ErrorList {
	errs := fieldcheck.MaxLen(p.Child("runtime"), code.Runtime, v1alpha1.MaxCodeRuntime)
	if len(errs) == 0 {
		errs = fieldcheck.OneOf(p.Child("runtime"), code.Runtime, v1alpha1.CodeRuntimes)
	}
	if strings.TrimSpace(code.Source) == "" {
		errs = append(errs, field.Required(p.Child("source"), "the transformer's source code is required"))
	}
	errs = append(errs, fieldcheck.MaxLen(p.Child("source"), code.Source, v1alpha1.MaxCodeSource)...)
	errs = append(errs, fieldcheck.MaxLen(p.Child("dependencies"), code.Dependencies, v1alpha1.MaxCodeDependencies)...)
	if tooLong := fieldcheck.MaxLen(p.Child("function"), code.Function, v1alpha1.MaxCodeFunction); tooLong != nil {
		return append(errs, tooLong...)
	}
	if code.Function != "" && !pythonIdentifier.MatchString(code.Function) {
		errs = append(errs, field.Invalid(p.Child("function"), code.Function,
			"must be the name of a function defined in spec.code.source, e.g. transform"))
	}
	if code.ChunkSize < 0 {
		errs = append(errs, field.Invalid(p.Child("chunkSize"), code.ChunkSize, "must be 0 (whole objects) or a positive number of bytes"))
	}
	return errs
}

// validateIOCommand: the io shim runs the container's command once per object, and without a
// registry nothing can look up an image's entrypoint, so the command must be spelled out.
func validateIOCommand(spec *v1alpha1.TransformSpec) field.ErrorList {
	switch {
	case spec.Runtime != nil && len(spec.Runtime.Command) == 0:
		return field.ErrorList{field.Required(specPath.Child("runtime", "command"),
			"communication io runs this command (stdin in, stdout out); set it")}
	case spec.PodTemplate != nil && len(spec.PodTemplate.Spec.Containers) == 1 && len(spec.PodTemplate.Spec.Containers[0].Command) == 0:
		return field.ErrorList{field.Required(specPath.Child("podTemplate", "spec", "containers").Index(0).Child("command"),
			"communication io runs this command (stdin in, stdout out); set it")}
	}
	return nil
}

// timeout checks an optional timeout: positive and at most max.
func timeout(p *field.Path, d *metav1.Duration, max time.Duration) field.ErrorList {
	switch {
	case d == nil:
		return nil
	case d.Duration <= 0:
		return field.ErrorList{field.Invalid(p, d.Duration.String(), "must be a positive duration, e.g. 30s")}
	case d.Duration > max:
		return field.ErrorList{field.Invalid(p, d.Duration.String(), fmt.Sprintf("must be at most %s, mlkube's limit for this timeout", max))}
	}
	return nil
}

// validateImmutable rejects changes to what defines the transformer; stopped, failurePolicy,
// timeouts and node placement may change.
func validateImmutable(oldSpec, newSpec *v1alpha1.TransformSpec) field.ErrorList {
	o, n := oldSpec.DeepCopy(), newSpec.DeepCopy()
	DefaultSpec(o)
	DefaultSpec(n)
	const msg = "field is immutable: it defines the running transformer; delete the Transform and create it again to change it"
	var errs field.ErrorList
	check := func(name string, a, b any) {
		if !equality.Semantic.DeepEqual(a, b) {
			errs = append(errs, field.Forbidden(specPath.Child(name), msg))
		}
	}
	check("runtime", o.Runtime, n.Runtime)
	check("podTemplate", o.PodTemplate, n.PodTemplate)
	check("code", o.Code, n.Code)
	check("communication", o.Communication, n.Communication)
	check("ioMode", o.IOMode, n.IOMode)
	check("argument", o.Argument, n.Argument)
	check("env", o.Env, n.Env)
	return errs
}
