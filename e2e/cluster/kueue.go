package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/mlkube/mlkube/internal/images"
	"github.com/mlkube/mlkube/internal/repo"
)

// KueueNamespace is where Kueue runs on the e2e clusters.
const KueueNamespace = "kueue-system"

// KueueDeadline bounds the wait for Kueue's webhooks to answer.
const KueueDeadline = 3 * time.Minute

// InstallKueue gives p's cluster Kueue, as a cluster admin installs it: Kueue's own manifests
// (config/default of the Kueue module the repository's go.mod pins, rendered by kustomize) with
// the image hack/build/pinned.sh builds from the module proxy. It returns once Kueue's webhook
// admits a dry-run ResourceFlavor through the API server: only then are Kueue's objects usable.
// It runs before mlkube is deployed, so that the manager finds Kueue's API when it starts.
func InstallKueue(ctx context.Context, p Provider, logf func(string, ...any)) error {
	began := time.Now()
	cfg, err := loadImage(ctx, p, images.Kueue)
	if err != nil {
		return err
	}
	objs, err := kueueObjects(ctx)
	if err != nil {
		return err
	}
	if err := applyObjects(ctx, cfg, "Kueue", objs); err != nil {
		return err
	}
	if err := restartBeforeCert(ctx, cfg); err != nil {
		return err
	}
	if err := waitKueue(ctx, cfg); err != nil {
		if ctx.Err() == nil {
			err = fmt.Errorf("the Kueue webhook did not admit a dry-run ResourceFlavor within %v: %w; see 'hack/cluster/kubectl.sh -n %s get pods' and 'hack/cluster/kubectl.sh -n %s logs deploy/kueue-controller-manager'",
				KueueDeadline, err, KueueNamespace, KueueNamespace)
		}
		return err
	}
	logf("Kueue %s admits objects after %v", images.KueueVersion, time.Since(began).Round(100*time.Millisecond))
	return nil
}

// kueueObjects renders Kueue's config/default and fits it to the e2e clusters.
func kueueObjects(ctx context.Context) ([]*unstructured.Unstructured, error) {
	dir, err := repo.ModuleDir(ctx, "sigs.k8s.io/kueue")
	if err != nil {
		return nil, err
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(dir, "config", "default"))
	if err != nil {
		return nil, fmt.Errorf("rendering Kueue's config/default: %w", err)
	}
	manifest, err := res.AsYaml()
	if err != nil {
		return nil, err
	}
	objs, err := manifestObjects("Kueue's config/default", manifest)
	if err != nil {
		return nil, err
	}
	return fitKueue(objs)
}

// fitKueue drops Kueue's visibility APIService (an aggregated API the tests do not use, which
// every namespace deletion would otherwise wait on) and runs the manager from the loaded image
// (never pulled: there is no registry) with requests a 2-core machine shared by every node can
// grant, as the user Kueue's own image runs as.
func fitKueue(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	found := false
	for _, u := range objs {
		switch u.GetKind() {
		case "APIService":
			continue
		case "Deployment":
			var d struct {
				Spec struct {
					Template corev1.PodTemplateSpec `json:"template"`
				} `json:"spec"`
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
				return nil, err
			}
			// Kueue's image runs as distroless' nonroot user; this one names no user.
			sc := d.Spec.Template.Spec.SecurityContext
			if sc == nil {
				sc = &corev1.PodSecurityContext{}
				d.Spec.Template.Spec.SecurityContext = sc
			}
			sc.RunAsUser = ptr.To[int64](65532)
			for i := range d.Spec.Template.Spec.Containers {
				c := &d.Spec.Template.Spec.Containers[i]
				if c.Name != "manager" {
					continue
				}
				found = true
				c.Image, c.ImagePullPolicy = images.Kueue.Ref, corev1.PullIfNotPresent
				c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
			}
			tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&d.Spec.Template)
			if err != nil {
				return nil, err
			}
			if err := unstructured.SetNestedMap(u.Object, tmpl, "spec", "template"); err != nil {
				return nil, err
			}
		}
		out = append(out, u)
	}
	if !found {
		return nil, errors.New("the config/default of Kueue has no Deployment with a container named manager")
	}
	// kustomize keeps the order the files list them in; what others live in goes first.
	sort.SliceStable(out, func(i, j int) bool { return applyOrder(out[i]) < applyOrder(out[j]) })
	return out, nil
}

// applyOrder puts Namespaces first, then CRDs, then the rest, and the webhook configurations last:
// a webhook registered before the server behind it exists would refuse what follows.
func applyOrder(u *unstructured.Unstructured) int {
	switch u.GetKind() {
	case "Namespace":
		return 0
	case "CustomResourceDefinition":
		return 1
	case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		return 3
	}
	return 2
}

// kueueCertSecret is the Secret Kueue's own certificate management fills and its pod mounts.
const kueueCertSecret = "kueue-webhook-server-cert"

// restartBeforeCert waits for Kueue to fill its webhook Secret, then restarts its pods that were
// created before it did. Such a pod mounted the Secret empty, and the kubelet refreshes a mounted
// Secret only on its periodic sync, a minute or more later: until then Kueue's webhooks serve no
// certificate. A replacement mounts the certificate at once.
func restartBeforeCert(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	var filled time.Time
	err = pollUntil(ctx, KueueDeadline, time.Second, func(ctx context.Context) error {
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: KueueNamespace, Name: kueueCertSecret}, &s); err != nil {
			return err
		}
		if len(s.Data[corev1.TLSCertKey]) == 0 {
			return fmt.Errorf("no %s in Secret %s/%s yet", corev1.TLSCertKey, KueueNamespace, kueueCertSecret)
		}
		filled = lastWrite(&s)
		return nil
	})
	if err != nil {
		return fmt.Errorf("waiting for Kueue's webhook certificate: %w", err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(KueueNamespace), client.MatchingLabels{"control-plane": "controller-manager"}); err != nil {
		return err
	}
	for _, p := range stale(pods.Items, filled) {
		if err := c.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// lastWrite is when obj was last written, by its managed fields (to the second).
func lastWrite(obj metav1.Object) time.Time {
	var last time.Time
	for _, f := range obj.GetManagedFields() {
		if f.Time != nil && f.Time.After(last) {
			last = f.Time.Time
		}
	}
	return last
}

// stale is the pods not created after t. Timestamps have whole seconds: a pod of the same second
// as t counts as created before it.
func stale(pods []corev1.Pod, t time.Time) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		if !pods[i].CreationTimestamp.After(t) {
			out = append(out, &pods[i])
		}
	}
	return out
}

// waitKueue creates a ResourceFlavor with dryRun=All until Kueue's validating webhook admits it.
func waitKueue(ctx context.Context, cfg *rest.Config) error {
	s := runtime.NewScheme()
	if err := kueuev1.AddToScheme(s); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	return pollUntil(ctx, KueueDeadline, time.Second, func(ctx context.Context) error {
		rf := &kueuev1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "mlkube-e2e-probe"}}
		return client.IgnoreAlreadyExists(c.Create(ctx, rf, client.DryRunAll))
	})
}
