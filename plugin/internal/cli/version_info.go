package cli

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// servedVersions maps each wanted group to the versions the server serves, the preferred
// first; a group the server lacks maps to nothing, which printVersion reports.
func servedVersions(groups []metav1.APIGroup, wanted []string) map[string][]string {
	out := make(map[string][]string, len(wanted))
	for _, name := range wanted {
		out[name] = nil
		for _, g := range groups {
			if g.Name != name {
				continue
			}
			vs := []string{g.PreferredVersion.Version}
			for _, v := range g.Versions {
				if v.Version != g.PreferredVersion.Version {
					vs = append(vs, v.Version)
				}
			}
			out[name] = vs
		}
	}
	return out
}

// managerImage is the image of the manager Deployment's first container; a Deployment being
// rolled out says so.
func managerImage(d *appsv1.Deployment) string {
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return "<no container>"
	}
	img := d.Spec.Template.Spec.Containers[0].Image
	if d.Status.UpdatedReplicas < d.Status.Replicas {
		img += " (rolling out)"
	}
	return img
}

func printVersion(env *Env, p Plugin, v VersionInfo) {
	w := env.Out
	fmt.Fprintf(w, "Plugin:   kubectl-%s %s (%s)\n", p.Name, v.Plugin, v.Go)
	if v.Server != "" {
		fmt.Fprintf(w, "Server:   %s\n", v.Server)
	}
	for _, g := range p.Groups {
		vs, ok := v.APIs[g]
		switch {
		case !ok:
			continue
		case len(vs) == 0:
			fmt.Fprintf(w, "API:      %s not served; install mlkube's CRDs\n", g)
		default:
			fmt.Fprintf(w, "API:      %s %s\n", g, strings.Join(vs, ", "))
		}
	}
	if v.Manager != "" {
		fmt.Fprintf(w, "Manager:  %s\n", v.Manager)
	}
	for _, e := range v.Errors {
		fmt.Fprintf(env.ErrOut, "warning: %s\n", e)
	}
}
