// Package restrictedtest checks pod specs against the restricted Pod Security Standard with the
// evaluator the API server's admission uses, for tests of what mlkube writes. The manager links
// the evaluator too, through webhook/internal/podsecurity, which judges users' templates and
// names their fields; this package asks the evaluator alone, so that tests compare mlkube's
// attribution with upstream's verdict rather than with itself (webhook/transform's fuzz test).
package restrictedtest

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// Violations returns what keeps spec from the restricted level at the latest version, one line
// per failed check; none when a namespace enforcing restricted admits it.
func Violations(spec *corev1.PodSpec) ([]string, error) {
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("pod security evaluator: %w", err)
	}
	level := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	var out []string
	for _, r := range eval.EvaluatePod(level, &metav1.ObjectMeta{}, spec) {
		if !r.Allowed {
			out = append(out, strings.TrimSpace(r.ForbiddenReason+": "+r.ForbiddenDetail))
		}
	}
	return out, nil
}
