// Package podsecurity judges a pod spec by the restricted Pod Security Standard with the
// evaluator the API server's admission uses (k8s.io/pod-security-admission/policy), and names
// the fields that fail it. The verdict is upstream's: mlkube only finds where in the spec each
// failure is, so that the Transform webhook's refusal points at the line to change.
package podsecurity

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// latest is the level judged: restricted at the newest version this evaluator knows, since the
// API server a user talks to may be newer than the one mlkube was built against.
var latest = psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}

// check is one upstream check with an evaluator of its own, for attribution only.
type check struct {
	id   policy.CheckID
	eval policy.Evaluator
}

var (
	// full is the evaluator whose verdict counts, as the API server builds it.
	full policy.Evaluator
	// checks are the checks full runs at the restricted level, one evaluator each: the baseline
	// checks a restricted check overrides are left out, as full leaves them out.
	checks []check
)

func init() {
	var err error
	if full, err = policy.NewEvaluator(policy.DefaultChecks(), nil); err != nil {
		panic(fmt.Sprintf("the upstream Pod Security checks: %v", err)) // a bad upgrade; tests catch it
	}
	for _, c := range effectiveChecks() {
		eval, err := policy.NewEvaluator([]policy.Check{c}, nil)
		if err != nil {
			panic(fmt.Sprintf("the upstream Pod Security check %s: %v", c.ID, err))
		}
		checks = append(checks, check{id: c.ID, eval: eval})
	}
}

// effectiveChecks are policy.DefaultChecks() without the baseline checks that a restricted
// check overrides at its newest version.
func effectiveChecks() []policy.Check {
	all := policy.DefaultChecks()
	overridden := map[policy.CheckID]bool{}
	for _, c := range all {
		if c.Level == psapi.LevelRestricted {
			for _, id := range c.Versions[len(c.Versions)-1].OverrideCheckIDs {
				overridden[id] = true
			}
		}
	}
	return slices.DeleteFunc(all, func(c policy.Check) bool { return overridden[c.ID] })
}

// Restricted returns the fields of spec that keep it from the restricted Pod Security Standard
// at the latest version, as the API server's admission judges it, under base (e.g.
// spec.podTemplate.spec). It returns nothing exactly when upstream's evaluator allows the pod.
func Restricted(base *field.Path, meta *metav1.ObjectMeta, spec *corev1.PodSpec) field.ErrorList {
	if meta == nil {
		meta = &metav1.ObjectMeta{}
	}
	var refused []policy.CheckResult
	for _, r := range full.EvaluatePod(latest, meta, spec) {
		if !r.Allowed {
			refused = append(refused, r)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	var errs field.ErrorList
	for _, c := range checks {
		if r, ok := failure(c.eval, meta, spec); ok {
			errs = append(errs, attribute(base, c.id, r, meta, spec)...)
		}
	}
	if len(errs) == 0 {
		// Should the per-check evaluators ever disagree with the full one, the refusal stands
		// and says what upstream said.
		for _, r := range refused {
			errs = append(errs, field.Forbidden(base, message(r, "")))
		}
	}
	return errs
}

// failure evaluates spec with one check's evaluator and returns its failure, if any.
func failure(eval policy.Evaluator, meta *metav1.ObjectMeta, spec *corev1.PodSpec) (policy.CheckResult, bool) {
	for _, r := range eval.EvaluatePod(latest, meta, spec) {
		if !r.Allowed {
			return r, true
		}
	}
	return policy.CheckResult{}, false
}

// attribute finds where a failed check fails: in the pod-level fields (the spec without its
// containers), and in each container judged alone with them. A failure that only appears, or
// says more, with a container is that container's.
func attribute(base *field.Path, id policy.CheckID, r policy.CheckResult, meta *metav1.ObjectMeta, spec *corev1.PodSpec) field.ErrorList {
	eval := checkEvaluator(id)
	at := attributions[id]
	podLevel := spec.DeepCopy()
	podLevel.Containers, podLevel.InitContainers, podLevel.EphemeralContainers = nil, nil, nil
	var errs field.ErrorList
	pr, podFails := failure(eval, meta, podLevel)
	if podFails {
		paths := []*field.Path{base}
		if at.pod != nil {
			fails := func(s *corev1.PodSpec) bool { _, f := failure(eval, meta, s); return f }
			if p := at.pod(base, podLevel, fails); len(p) > 0 {
				paths = p
			}
		}
		for _, p := range paths {
			errs = append(errs, field.Forbidden(p, message(pr, at.hint)))
		}
	}
	for _, list := range containerLists(spec) {
		for i, c := range list.containers {
			alone := podLevel.DeepCopy()
			alone.Containers = []corev1.Container{c}
			cr, ok := failure(eval, meta, alone)
			if !ok || (podFails && cr.ForbiddenDetail == pr.ForbiddenDetail) {
				continue
			}
			p := base.Child(list.name).Index(i)
			if at.container != nil {
				p = at.container(p, &c)
			}
			errs = append(errs, field.Forbidden(p, message(cr, at.hint)))
		}
	}
	if len(errs) == 0 {
		errs = append(errs, field.Forbidden(base, message(r, at.hint)))
	}
	return errs
}

func checkEvaluator(id policy.CheckID) policy.Evaluator {
	for _, c := range checks {
		if c.id == id {
			return c.eval
		}
	}
	return full
}

type containerList struct {
	name       string
	containers []corev1.Container
}

// containerLists are spec's containers of every kind, under their fields' names.
func containerLists(spec *corev1.PodSpec) []containerList {
	eph := make([]corev1.Container, len(spec.EphemeralContainers))
	for i := range spec.EphemeralContainers {
		eph[i] = corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
	}
	return []containerList{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}, {"ephemeralContainers", eph}}
}

// message is the refusal of one failed check: upstream's reason and detail, then what to do.
func message(r policy.CheckResult, hint string) string {
	msg := "the restricted Pod Security Standard forbids " + r.ForbiddenReason
	if r.ForbiddenDetail != "" {
		msg += " (" + r.ForbiddenDetail + ")"
	}
	if hint != "" {
		msg += "; " + hint
	}
	return msg
}
