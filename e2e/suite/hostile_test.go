package suite

import "testing"

// hostileTransform is a Transform of the podTemplate form whose template's spec ends in extra
// (YAML indented under spec:), and whose container ends in container.
func hostileTransform(name, extra, container string) string {
	return `apiVersion: etl.mlkube.io/v1alpha1
kind: Transform
metadata:
  name: ` + name + `
spec:
  podTemplate:
    spec:
      containers:
      - name: transformer
        image: mlkube/transformer-md5:dev
        ports:
        - name: default
          containerPort: 8000
` + container + extra
}

// TestHostileTemplateRefused: a namespace editor cannot get host access through a Transform's
// template (issue 24, finding 4). The plain template, with no securityContext, runs in the
// namespace enforcing restricted; each hostile template is refused at kubectl apply with the
// field named, while the same template without it is admitted, so the refusal is the webhook's
// Pod Security and reserved-name rules, not the editor's rights.
func TestHostileTemplateRefused(t *testing.T) {
	ns := onboard(t, "mallory")
	mallory := newShell(t).as("mallory")

	mallory.file("plain.yaml", hostileTransform("plain", "", ""))
	mallory.want([]string{"apply", "-n", ns, "-f", "plain.yaml"}, "transform.etl.mlkube.io/plain created")
	// With no securityContext of its own, its pods get the controller's restricted defaults and
	// run where restricted is enforced.
	mallory.do(ns, "wait --for=jsonpath={.status.stage}=Running transforms.etl.mlkube.io/plain --timeout=3m", "condition met")

	for name, tc := range map[string]struct{ extra, container, field string }{
		"host-network": {extra: "      hostNetwork: true\n", field: "spec.podTemplate.spec.hostNetwork"},
		"privileged": {container: "        securityContext:\n          privileged: true\n",
			field: "spec.podTemplate.spec.containers[0].securityContext.privileged"},
		"host-path": {extra: "      volumes:\n      - name: root\n        hostPath: {path: /}\n", field: "spec.podTemplate.spec.volumes[0]"},
		"data-root": {container: "        volumeMounts:\n        - name: mlkube-data\n          mountPath: /data\n",
			field: "spec.podTemplate.spec.containers[0].volumeMounts[0].name"},
	} {
		file := name + ".yaml"
		mallory.file(file, hostileTransform(name, tc.extra, tc.container))
		mallory.refused([]string{"apply", "-n", ns, "-f", file}, "", tc.field+": Forbidden")
		if code, _, _ := mallory.exec("get", "-n", ns, "transforms.etl.mlkube.io", name); code == 0 {
			t.Errorf("the hostile Transform %s exists after its refusal", name)
		}
	}
	if t.Failed() {
		dumpDiagnostics(t, ns)
	}
}
