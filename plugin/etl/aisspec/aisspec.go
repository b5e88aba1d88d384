// Package aisspec converts AIStore's ETL specs into Transforms: the runtime spec AIStore
// recommends (name, runtime.image/command/env, communication, argument, init_timeout, obj_timeout,
// support_direct_put, resources) and its older Pod spec with the communication_type, wait_timeout
// and support_direct_put annotations. Each conversion lists every change, as `kubectl mxjob
// create` does for Kubeflow's MXJobs: what moved where, what was dropped and why. A field with no
// mlkube equivalent that would change what the transformer does is refused, naming the field.
//
// It is a package of plain functions, a document in and a Transform out, so that the whole
// published corpus is tested without a cluster (testdata/).
package aisspec

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/restricted"
)

// What each form is called in messages and in the change report.
const (
	RuntimeSpec = "AIStore ETL runtime spec"
	PodSpec     = "AIStore ETL pod spec"
)

// AIStore's annotations of an ETL pod spec (aistore ext/etl/api.go).
const (
	annotationComm        = "communication_type"
	annotationWaitTimeout = "wait_timeout"
	annotationDirectPut   = "support_direct_put"
)

// Conversion is a Transform made from an AIStore spec, with what changed on the way.
type Conversion struct {
	Transform *v1alpha1.Transform
	// From names the form converted: RuntimeSpec or PodSpec.
	From string
	// Changes are the report's lines, in the order of the spec's fields.
	Changes []string
}

// Form says which AIStore spec a document is: RuntimeSpec (no apiVersion or kind, a runtime
// field), PodSpec (kind Pod of apiVersion v1), or "" for neither.
func Form(doc []byte) string {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Runtime    any    `json:"runtime"`
	}
	if yaml.Unmarshal(doc, &head) != nil {
		return ""
	}
	switch {
	case head.Kind == "Pod" && (head.APIVersion == "v1" || head.APIVersion == ""):
		return PodSpec
	case head.APIVersion == "" && head.Kind == "" && head.Runtime != nil:
		return RuntimeSpec
	}
	return ""
}

// Convert converts an AIStore spec, of either form, into a Transform in namespace (unless a pod
// spec names its own). name, if not empty, names the Transform instead of the spec's name.
func Convert(doc []byte, name, namespace string) (*Conversion, error) {
	switch Form(doc) {
	case RuntimeSpec:
		return convertRuntime(doc, name, namespace)
	case PodSpec:
		return convertPod(doc, name, namespace)
	}
	return nil, errors.New("not an AIStore ETL spec: want a runtime spec (name, runtime.image, …) or a Pod (apiVersion v1, kind Pod)")
}

// aisRuntimeSpec is AIStore's ETLSpecMsg (aistore ext/etl/api.go) with the argument field of
// ais-etl's published specs. Decoded strictly: a misspelt field is an error, not lost.
type aisRuntimeSpec struct {
	Name             string                       `json:"name"`
	Communication    string                       `json:"communication,omitempty"`
	Argument         *string                      `json:"argument,omitempty"`
	Env              []corev1.EnvVar              `json:"env,omitempty"`
	InitTimeout      string                       `json:"init_timeout,omitempty"`
	ObjTimeout       string                       `json:"obj_timeout,omitempty"`
	SupportDirectPut *bool                        `json:"support_direct_put,omitempty"`
	Resources        *corev1.ResourceRequirements `json:"resources,omitempty"`
	Runtime          struct {
		Image   string          `json:"image"`
		Command []string        `json:"command,omitempty"`
		Env     []corev1.EnvVar `json:"env,omitempty"`
	} `json:"runtime"`
}

func convertRuntime(doc []byte, name, namespace string) (*Conversion, error) {
	var ais aisRuntimeSpec
	if err := yaml.UnmarshalStrict(doc, &ais); err != nil {
		return nil, fmt.Errorf("reading the %s: %w", RuntimeSpec, err)
	}
	if strings.TrimSpace(ais.Runtime.Image) == "" {
		return nil, errors.New("runtime.image is required: the transformer's image")
	}
	r := report{changes: []string{RuntimeSpec + " -> " + v1alpha1.GroupVersion.String() + ", kind Transform (spec.runtime)"}}
	name, err := r.name(name, ais.Name, "name")
	if err != nil {
		return nil, err
	}
	spec := v1alpha1.TransformSpec{Runtime: &v1alpha1.RuntimeSpec{
		Image: ais.Runtime.Image, Command: ais.Runtime.Command, Env: ais.Runtime.Env,
	}}
	r.add("runtime.%s -> spec.runtime", fields(spec.Runtime))
	r.templates("runtime.env", ais.Runtime.Env)
	if ais.Resources != nil {
		spec.Runtime.Resources = *ais.Resources
		r.add("resources -> spec.runtime.resources")
	}
	if len(ais.Env) > 0 {
		spec.Env = ais.Env
		r.add("env -> spec.env")
		r.templates("env", ais.Env)
	}
	if ais.Communication != "" {
		if spec.Communication, err = r.communication("communication", ais.Communication); err != nil {
			return nil, err
		}
	}
	if ais.Argument != nil {
		if spec.Argument, err = r.argument(*ais.Argument); err != nil {
			return nil, err
		}
	}
	if spec.InitTimeout, err = r.timeout("init_timeout", ais.InitTimeout, "spec.initTimeout", v1alpha1.MaxInitTimeout); err != nil {
		return nil, err
	}
	if spec.ObjectTimeout, err = r.timeout("obj_timeout", ais.ObjTimeout, "spec.objectTimeout", v1alpha1.MaxObjectTimeout); err != nil {
		return nil, err
	}
	if ais.SupportDirectPut != nil {
		r.directPut("support_direct_put")
	}
	r.security(nil)
	return r.done(RuntimeSpec, name, namespace, spec), nil
}

func convertPod(doc []byte, name, namespace string) (*Conversion, error) {
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(doc, &pod); err != nil {
		return nil, fmt.Errorf("reading the %s: %w", PodSpec, err)
	}
	r := report{changes: []string{"apiVersion v1, kind Pod -> " + v1alpha1.GroupVersion.String() + ", kind Transform (metadata.labels, metadata.annotations and spec -> spec.podTemplate)"}}
	name, err := r.name(name, pod.Name, "metadata.name")
	if err != nil {
		return nil, err
	}
	if pod.Namespace != "" {
		namespace = pod.Namespace
	}
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pod.Labels}, Spec: pod.Spec}
	spec := v1alpha1.TransformSpec{PodTemplate: tmpl}
	const ap = "metadata.annotations."
	annotations := maps.Clone(pod.Annotations)
	if v, ok := annotations[annotationComm]; ok {
		delete(annotations, annotationComm)
		if spec.Communication, err = r.communication(ap+annotationComm, v); err != nil {
			return nil, err
		}
	}
	if v, ok := annotations[annotationWaitTimeout]; ok {
		delete(annotations, annotationWaitTimeout)
		if spec.InitTimeout, err = r.timeout(ap+annotationWaitTimeout, v, "spec.initTimeout", v1alpha1.MaxInitTimeout); err != nil {
			return nil, err
		}
	}
	if _, ok := annotations[annotationDirectPut]; ok {
		delete(annotations, annotationDirectPut)
		r.directPut(ap + annotationDirectPut)
	}
	if len(annotations) > 0 {
		tmpl.Annotations = annotations
	}
	for i, c := range tmpl.Spec.Containers {
		r.templates(fmt.Sprintf("spec.containers[%d].env", i), c.Env)
	}
	r.hostPaths(&tmpl.Spec)
	if tmpl.Spec.Affinity != nil {
		tmpl.Spec.Affinity = nil
		r.add("spec.affinity dropped: mlkube pins each transformer pod to its node, as AIStore pins it to its target's")
	}
	if !equality.Semantic.DeepEqual(pod.Status, corev1.PodStatus{}) {
		r.add("status dropped")
	}
	r.security(&tmpl.Spec)
	return r.done(PodSpec, name, namespace, spec), nil
}

// report gathers a conversion's changes.
type report struct{ changes []string }

func (r *report) add(format string, a ...any) {
	r.changes = append(r.changes, fmt.Sprintf(format, a...))
}

func (r *report) done(from, name, namespace string, spec v1alpha1.TransformSpec) *Conversion {
	return &Conversion{From: from, Changes: r.changes, Transform: &v1alpha1.Transform{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Transform"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       spec,
	}}
}

// name is the Transform's name: the one given, else the spec's field.
func (r *report) name(given, own, field string) (string, error) {
	switch {
	case given != "":
		if own != "" && own != given {
			r.add("%s %s replaced by the name given, %s", field, own, given)
		}
		return given, nil
	case own == "":
		return "", fmt.Errorf("%s is required: it names the Transform", field)
	}
	r.add("%s %s -> metadata.name", field, own)
	return own, nil
}

// communications are AIStore's communication types (and mlkube's io) as AIStore spells them.
var communications = []string{"hpush://", "hpull://", "ws://", "io://"}

func (r *report) communication(field, value string) (v1alpha1.Communication, error) {
	v, err := r.untemplate(field, value)
	if err != nil {
		return "", err
	}
	comm := strings.TrimSuffix(v, "://")
	if !slices.Contains(v1alpha1.Communications, v1alpha1.Communication(comm)) {
		return "", fmt.Errorf("%s %q is not a communication type: want one of %s", field, value, strings.Join(communications, ", "))
	}
	r.add("%s %s -> spec.communication %s", field, v, comm)
	return v1alpha1.Communication(comm), nil
}

func (r *report) argument(value string) (v1alpha1.Argument, error) {
	switch v1alpha1.Argument(value) {
	case v1alpha1.ArgBytes:
		return "", nil // AIStore's default and mlkube's: the bytes
	case v1alpha1.ArgFQN:
		r.add("argument fqn -> spec.argument fqn (the transformer opens the object by path: mlkube mounts the namespace's data of the node read-only at %s)", wire.DataRoot)
		return v1alpha1.ArgFQN, nil
	case v1alpha1.ArgURL:
		r.add("argument url -> spec.argument url")
		return v1alpha1.ArgURL, nil
	}
	return "", fmt.Errorf(`argument %q is not an argument type: want "" (the bytes) or fqn (the object's path on the node)`, value)
}

// timeout converts an AIStore duration (Go's syntax, as AIStore parses it) within mlkube's bound.
func (r *report) timeout(field, value, to string, maxD time.Duration) (*metav1.Duration, error) {
	if value == "" {
		return nil, nil
	}
	d, err := time.ParseDuration(value)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s %q is not a duration: write one such as 45s or 5m", field, value)
	case d <= 0:
		return nil, fmt.Errorf("%s %s must be positive; remove it for mlkube's default", field, value)
	case d > maxD:
		return nil, fmt.Errorf("%s %s is over mlkube's limit of %s for %s; lower it", field, value, maxD, to)
	}
	r.add("%s %s -> %s %s", field, value, to, d)
	return &metav1.Duration{Duration: d}, nil
}

func (r *report) directPut(field string) {
	r.add("%s dropped: every node's agent writes the results of its own objects, so there is no other node to put to", field)
}

// security says what a transformer pod runs as: the controller fills what the restricted Pod
// Security Standard asks and the spec leaves unset (docs/transforms.md), and an AIStore image
// that expects root learns it here rather than from a crash. A template that names its own user
// says so itself.
func (r *report) security(spec *corev1.PodSpec) {
	if spec != nil && namesUser(spec) {
		return
	}
	r.add("the transformer runs as uid %d (non-root, no privilege escalation, capabilities dropped: the restricted Pod Security Standard); an image that needs root must be rebuilt", restricted.DefaultUser)
}

func namesUser(spec *corev1.PodSpec) bool {
	if spec.SecurityContext != nil && spec.SecurityContext.RunAsUser != nil {
		return true
	}
	for _, c := range spec.Containers {
		if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
			return true
		}
	}
	return false
}

// hostPaths drops hostPath volumes and their mounts. AIStore's specs mount the target's disks
// that way for fqn; the restricted Pod Security Standard forbids it, and mlkube's fqn mounts the
// data itself.
func (r *report) hostPaths(spec *corev1.PodSpec) {
	var kept []corev1.Volume
	for i, v := range spec.Volumes {
		if v.HostPath == nil {
			kept = append(kept, v)
			continue
		}
		r.add("spec.volumes[%d] %s (hostPath %s) dropped, with its volumeMounts: the restricted Pod Security Standard forbids hostPath; for objects by path use --arg-type fqn, which mounts the namespace's data of the node read-only at %s",
			i, v.Name, v.HostPath.Path, wire.DataRoot)
		for j := range spec.Containers {
			c := &spec.Containers[j]
			c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == v.Name })
			if len(c.VolumeMounts) == 0 {
				c.VolumeMounts = nil
			}
		}
	}
	spec.Volumes = kept
}

// shellParam is a whole value that is an unsubstituted shell parameter, ${NAME} or
// ${NAME:-default}: ais-etl's pod specs are templates for envsubst or the shell.
var shellParam = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-(.*))?\}$`)

// untemplate returns value, or the default of an unsubstituted template, as the shell would give
// it (quotes and backslashes removed).
func (r *report) untemplate(field, value string) (string, error) {
	m := shellParam.FindStringSubmatch(value)
	if m == nil {
		return value, nil
	}
	def := strings.NewReplacer(`\`, "", `"`, "", `'`, "").Replace(m[2])
	if def == "" {
		return "", fmt.Errorf("%s is the unsubstituted template %s: substitute it first (%s=hpush:// envsubst < pod.yaml) or remove it and pass --comm-type", field, value, m[1])
	}
	r.add("%s %s is an unsubstituted template: its default %s is used", field, value, def)
	return def, nil
}

// templates notes environment values left as shell templates: AIStore passes them as they are,
// and so does mlkube, but the transformer then sees "${…}" rather than a value.
func (r *report) templates(field string, env []corev1.EnvVar) {
	for _, e := range env {
		if strings.Contains(e.Value, "${") {
			r.add("%s %s keeps the unsubstituted template %s as its value, as AIStore does; substitute the file first (envsubst) to set it", field, e.Name, e.Value)
		}
	}
}

// fields is "image", or "{image,command,env}" for the runtime fields a spec sets.
func fields(rt *v1alpha1.RuntimeSpec) string {
	names := []string{"image"}
	if len(rt.Command) > 0 {
		names = append(names, "command")
	}
	if len(rt.Env) > 0 {
		names = append(names, "env")
	}
	if len(names) == 1 {
		return names[0]
	}
	return "{" + strings.Join(names, ",") + "}"
}
