// Package fieldcheck holds the validation rules the MxJob, Transform and TransformRun webhooks
// share: object names, containers, ports, environment variables, scheduling fields, and the data
// path's directories and pipelines of Transforms. Every function returns
// field errors with the path it was given, so callers report every problem at once.
package fieldcheck

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// generatedSuffixLen is how many characters the API server appends to metadata.generateName.
const generatedSuffixLen = 5

// EffectiveName returns the name an object will have, standing in generated characters for a
// generateName, so name-length rules hold for generated names too.
func EffectiveName(name, generateName string) string {
	if name != "" {
		return name
	}
	if generateName == "" {
		return ""
	}
	return generateName + strings.Repeat("x", generatedSuffixLen)
}

// DNSLabelName checks that name is a DNS-1035 label of at most max characters. why says what
// the limit protects and appears in the message.
func DNSLabelName(path *field.Path, name string, max int, why string) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		return errs // the API server itself rejects a missing name
	}
	if len(name) > max {
		errs = append(errs, field.Invalid(path, name, fmt.Sprintf(
			"must be no more than %d characters (is %d) %s; choose a shorter name", max, len(name), why)))
		return errs
	}
	for _, msg := range validation.IsDNS1035Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// Port checks a TCP/UDP port number.
func Port(path *field.Path, port int32) field.ErrorList {
	if port < 1 || port > 65535 {
		return field.ErrorList{field.Invalid(path, port, "must be a port number between 1 and 65535")}
	}
	return nil
}

// Containers checks what every container of a pod template needs: an image, valid ports and
// valid environment variable names.
func Containers(path *field.Path, containers []corev1.Container) field.ErrorList {
	var errs field.ErrorList
	for i := range containers {
		c := &containers[i]
		p := path.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "every container needs a name"))
		}
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, field.Required(p.Child("image"),
				fmt.Sprintf("container %q needs an image", c.Name)))
		}
		for j, port := range c.Ports {
			pp := p.Child("ports").Index(j)
			errs = append(errs, Port(pp.Child("containerPort"), port.ContainerPort)...)
			if port.HostPort != 0 {
				errs = append(errs, Port(pp.Child("hostPort"), port.HostPort)...)
			}
		}
		errs = append(errs, Env(p.Child("env"), c.Env)...)
	}
	return errs
}

// Env checks environment variable names.
func Env(path *field.Path, env []corev1.EnvVar) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		for _, msg := range validation.IsEnvVarName(e.Name) {
			errs = append(errs, field.Invalid(path.Index(i).Child("name"), e.Name, msg))
		}
	}
	return errs
}

// NodeSelector checks label keys and values.
func NodeSelector(path *field.Path, selector map[string]string) field.ErrorList {
	var errs field.ErrorList
	for k, v := range selector {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path.Key(k), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(path.Key(k), v, msg))
		}
	}
	return errs
}

var tolerationOperators = []string{string(corev1.TolerationOpExists), string(corev1.TolerationOpEqual)}
var taintEffects = []string{"", string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}

// Tolerations checks the operator, effect and key/value pairing of each toleration.
func Tolerations(path *field.Path, tolerations []corev1.Toleration) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		p := path.Index(i)
		if t.Operator != "" {
			errs = append(errs, OneOf(p.Child("operator"), string(t.Operator), tolerationOperators)...)
		}
		errs = append(errs, OneOf(p.Child("effect"), string(t.Effect), taintEffects)...)
		if t.Key != "" {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
			}
		}
		if t.Operator == corev1.TolerationOpExists && t.Value != "" {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value,
				"must be empty when operator is Exists; remove the value or use operator Equal"))
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator,
				"must be Exists when key is empty; set a key or use operator Exists"))
		}
	}
	return errs
}

// OneOf checks that value is one of allowed, listing them in the error.
func OneOf(path *field.Path, value string, allowed []string) field.ErrorList {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(path, value, allowed)}
}

// NonNegative checks an optional count or duration in seconds.
func NonNegative[T ~int32 | ~int64](path *field.Path, v *T) field.ErrorList {
	if v != nil && *v < 0 {
		return field.ErrorList{field.Invalid(path, *v, "must be greater than or equal to 0")}
	}
	return nil
}

// AtMost checks an optional count or duration in seconds against mlkube's upper bound for it.
func AtMost[T ~int32 | ~int64](path *field.Path, v *T, max T) field.ErrorList {
	if v != nil && *v > max {
		return field.ErrorList{field.Invalid(path, *v, fmt.Sprintf("must be at most %d, mlkube's limit for this field", max))}
	}
	return nil
}

// MaxLen refuses s when it is longer than max bytes (a CRD's maxLength counts characters, so the
// webhook is the stricter of the two), naming the field and the bound.
func MaxLen(path *field.Path, s string, max int) field.ErrorList {
	if len(s) > max {
		return field.ErrorList{field.TooLong(path, "", max)}
	}
	return nil
}

// MaxItems refuses a list or map of n items when n is over max, naming the field and the bound.
func MaxItems(path *field.Path, n, max int) field.ErrorList {
	if n > max {
		return field.ErrorList{field.TooMany(path, n, max)}
	}
	return nil
}

// ObjectName checks that name can name an object of kind in the namespace: a DNS-1123
// subdomain, as the API server requires of every name.
func ObjectName(path *field.Path, name, kind string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(path, name, fmt.Sprintf("names no %s: %s", kind, msg)))
	}
	return errs
}
