package transform

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

const (
	required     = "Required value"
	invalid      = "Invalid value"
	forbidden    = "Forbidden"
	notSupported = "Unsupported value"
)

const echoImage = "mlkube/transformer-echo:dev"

func TestValidateCreate(t *testing.T) {
	spec := func(f func(*v1alpha1.TransformSpec)) *v1alpha1.Transform {
		return builders.Transform("md5").Runtime(echoImage).Spec(f).Obj()
	}
	cases := map[string]struct {
		t    *v1alpha1.Transform
		want []string
	}{
		// rule: exactly one of runtime, podTemplate, code
		"runtime form": {t: builders.Transform("md5").Runtime(echoImage).Obj()},
		"podTemplate form": {t: func() *v1alpha1.Transform {
			tr := builders.Transform("md5").PodTemplate(echoImage).Obj()
			Default(tr)
			return tr
		}()},
		"code form": {t: builders.Transform("md5").Code("python3.11", "def transform(b):\n    return b\n").Obj()},
		"no form":   {t: builders.Transform("md5").Obj(), want: []string{"spec: " + required}},
		"two forms": {
			t:    builders.Transform("md5").Runtime(echoImage).Code("python3.11", "x").Obj(),
			want: []string{"spec.code: " + forbidden},
		},
		"three forms": {
			t: func() *v1alpha1.Transform {
				tr := builders.Transform("md5").Runtime(echoImage).PodTemplate(echoImage).Code("python3.11", "x").Obj()
				Default(tr)
				return tr
			}(),
			want: []string{"spec.podTemplate: " + forbidden, "spec.code: " + forbidden},
		},
		// rule: runtime needs an image
		"runtime without image": {
			t:    builders.Transform("md5").Runtime(" ").Obj(),
			want: []string{"spec.runtime.image: " + required},
		},
		"runtime bad env": {
			t:    spec(func(s *v1alpha1.TransformSpec) { s.Runtime.Env = []corev1.EnvVar{{Name: "A B"}} }),
			want: []string{"spec.runtime.env[0].name: " + invalid},
		},
		// rule: podTemplate has exactly one container, with an image and a port named default
		"podTemplate with two containers": {
			t: func() *v1alpha1.Transform {
				tr := builders.Transform("md5").PodTemplate(echoImage).Obj()
				c := tr.Spec.PodTemplate.Spec.Containers[0]
				tr.Spec.PodTemplate.Spec.Containers = append(tr.Spec.PodTemplate.Spec.Containers, c)
				return tr
			}(),
			want: []string{"spec.podTemplate.spec.containers: " + invalid},
		},
		"podTemplate without port named default": {
			t:    builders.Transform("md5").PodTemplate(echoImage).Obj(),
			want: []string{"spec.podTemplate.spec.containers[0].ports: " + required},
		},
		"podTemplate container without image": {
			t: func() *v1alpha1.Transform {
				tr := builders.Transform("md5").PodTemplate("").Obj()
				Default(tr)
				return tr
			}(),
			want: []string{"spec.podTemplate.spec.containers[0].image: " + required},
		},
		// rule: code runtime supported, source present, function an identifier, chunkSize >= 0
		"code with unknown runtime": {
			t:    builders.Transform("md5").Code("ruby3", "x").Obj(),
			want: []string{"spec.code.runtime: " + notSupported},
		},
		"code without source": {
			t:    builders.Transform("md5").Code("python3.11", "").Obj(),
			want: []string{"spec.code.source: " + required},
		},
		"code with a bad function name and negative chunk size": {
			t: func() *v1alpha1.Transform {
				tr := builders.Transform("md5").Code("python3.11", "x").Obj()
				tr.Spec.Code.Function, tr.Spec.Code.ChunkSize = "not-a-name", -1
				return tr
			}(),
			want: []string{"spec.code.function: " + invalid, "spec.code.chunkSize: " + invalid},
		},
		// rule: communication in its enum, "hpush://" spelling accepted
		"every communication": {t: spec(func(s *v1alpha1.TransformSpec) { s.Communication = v1alpha1.CommWS })},
		"scheme spelling":     {t: spec(func(s *v1alpha1.TransformSpec) { s.Communication = "hpull://" })},
		"unknown communication": {
			t:    spec(func(s *v1alpha1.TransformSpec) { s.Communication = "grpc" }),
			want: []string{"spec.communication: " + notSupported},
		},
		// rule: argument in its enum
		"fqn argument": {t: spec(func(s *v1alpha1.TransformSpec) { s.Argument = v1alpha1.ArgFQN })},
		"unknown argument": {
			t:    spec(func(s *v1alpha1.TransformSpec) { s.Argument = "path" }),
			want: []string{"spec.argument: " + notSupported},
		},
		// rule: failure policy in its enum
		"restart failure policy": {t: spec(func(s *v1alpha1.TransformSpec) { s.FailurePolicy = v1alpha1.FailureRestart })},
		"unknown failure policy": {
			t:    spec(func(s *v1alpha1.TransformSpec) { s.FailurePolicy = "Ignore" }),
			want: []string{"spec.failurePolicy: " + notSupported},
		},
		// rule: timeouts positive
		"explicit timeouts": {t: spec(func(s *v1alpha1.TransformSpec) {
			s.InitTimeout, s.ObjectTimeout = &metav1.Duration{Duration: time.Minute}, &metav1.Duration{Duration: time.Second}
		})},
		"timeouts at their limits": {t: spec(func(s *v1alpha1.TransformSpec) {
			s.InitTimeout, s.ObjectTimeout = &metav1.Duration{Duration: v1alpha1.MaxInitTimeout}, &metav1.Duration{Duration: v1alpha1.MaxObjectTimeout}
		})},
		"timeouts past their limits": {
			t: spec(func(s *v1alpha1.TransformSpec) {
				s.InitTimeout, s.ObjectTimeout = &metav1.Duration{Duration: v1alpha1.MaxInitTimeout + time.Second}, &metav1.Duration{Duration: 24 * time.Hour}
			}),
			want: []string{"spec.initTimeout: " + invalid, "spec.objectTimeout: " + invalid},
		},
		"zero and negative timeouts": {
			t: spec(func(s *v1alpha1.TransformSpec) {
				s.InitTimeout, s.ObjectTimeout = &metav1.Duration{}, &metav1.Duration{Duration: -time.Second}
			}),
			want: []string{"spec.initTimeout: " + invalid, "spec.objectTimeout: " + invalid},
		},
		// rule: io needs the command it runs per object
		"io with a command": {
			t: builders.Transform("md5").Runtime(echoImage, "md5sum").Comm(v1alpha1.CommIO).Obj(),
		},
		"io runtime without a command": {
			t:    builders.Transform("md5").Runtime(echoImage).Comm(v1alpha1.CommIO).Obj(),
			want: []string{"spec.runtime.command: " + required},
		},
		"io podTemplate without a command": {
			t: func() *v1alpha1.Transform {
				tr := builders.Transform("md5").PodTemplate(echoImage).Comm(v1alpha1.CommIO).Obj()
				Default(tr)
				return tr
			}(),
			want: []string{"spec.podTemplate.spec.containers[0].command: " + required},
		},
		// rule: ioMode is one of its values, and only with io
		"io persistent": {
			t: builders.Transform("md5").Runtime(echoImage, "md5").Comm(v1alpha1.CommIO).Spec(func(s *v1alpha1.TransformSpec) { s.IOMode = v1alpha1.IOPersistent }).Obj(),
		},
		"io with an unknown mode": {
			t:    builders.Transform("md5").Runtime(echoImage, "md5").Comm(v1alpha1.CommIO).Spec(func(s *v1alpha1.TransformSpec) { s.IOMode = "Forever" }).Obj(),
			want: []string{"spec.ioMode: " + notSupported},
		},
		"ioMode without io": {
			t:    spec(func(s *v1alpha1.TransformSpec) { s.IOMode = v1alpha1.IOPersistent }),
			want: []string{"spec.ioMode: " + forbidden},
		},
		// rule: env, node selector and tolerations well formed
		"bad env, selector and toleration": {
			t: spec(func(s *v1alpha1.TransformSpec) {
				s.Env = []corev1.EnvVar{{Name: "9X"}}
				s.NodeSelector = map[string]string{"disk": "fast ssd"}
				s.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: "Maybe"}, {Operator: corev1.TolerationOpExists, Value: "v"}}
			}),
			want: []string{
				"spec.env[0].name: " + invalid,
				"spec.nodeSelector[disk]: " + invalid,
				"spec.tolerations[0].operator: " + notSupported,
				"spec.tolerations[1].value: " + invalid,
			},
		},
		"good selector and tolerations": {
			t: spec(func(s *v1alpha1.TransformSpec) {
				s.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
				s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}, {Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "a100", Effect: corev1.TaintEffectNoSchedule}}
			}),
		},
		// rule: the name is a DNS label short enough for "<name>-<node hash>"
		"name at the maximum": {t: builders.Transform(strings.Repeat("a", 54)).Runtime(echoImage).Obj()},
		"name over the maximum": {
			t:    builders.Transform(strings.Repeat("a", 55)).Runtime(echoImage).Obj(),
			want: []string{"metadata.name: " + invalid},
		},
		"name with a dot": {
			t:    builders.Transform("md5.v2").Runtime(echoImage).Obj(),
			want: []string{"metadata.name: " + invalid},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := webhooktest.Keys(ValidateCreate(tc.t))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateCreate() errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessagesSayWhatToDo(t *testing.T) {
	msg := webhooktest.Messages(ValidateCreate(builders.Transform("md5").Obj()))
	want := "spec: Required value: describe the transformer with exactly one of spec.runtime (an image), spec.podTemplate (a full pod) or spec.code (source for a runtime)"
	if !strings.Contains(msg, want) {
		t.Errorf("message %q does not contain %q", msg, want)
	}
	msg = webhooktest.Messages(ValidateCreate(builders.Transform(strings.Repeat("a", 60)).Runtime(echoImage).Obj()))
	if !strings.Contains(msg, "must be no more than 54 characters (is 60)") {
		t.Errorf("message %q does not name the maximum", msg)
	}
}

// TestUpdateKeepsThePodSecurityVerdictOfCreate: a Transform stored before its template was held to
// restricted can still be stopped or relabelled; the verdict of create stands, because Pod Security
// depends only on fields that cannot change.
func TestUpdateKeepsThePodSecurityVerdictOfCreate(t *testing.T) {
	old := builders.Transform("md5").Runtime(echoImage).Obj()
	old.Spec.Runtime = nil
	old.Spec.PodTemplate = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{HostNetwork: true,
		Containers: []corev1.Container{{Name: "transformer", Image: echoImage}}}}
	Default(old)
	if errs := ValidateCreate(old); len(errs) == 0 {
		t.Fatal("a hostNetwork template passed create; the case shows nothing")
	}
	tr := old.DeepCopy()
	tr.Spec.Stopped = true
	tr.Labels = map[string]string{"team": "a"}
	if errs := ValidateUpdate(old, tr); len(errs) != 0 {
		t.Errorf("ValidateUpdate() of a stored Transform's mutable fields = %v, want none", errs)
	}
}

func TestValidateUpdate(t *testing.T) {
	base := func() *v1alpha1.Transform {
		tr := builders.Transform("md5").Runtime(echoImage).Obj()
		Default(tr)
		return tr
	}
	cases := map[string]struct {
		edit func(*v1alpha1.Transform)
		want []string
	}{
		"stop":                    {edit: func(t *v1alpha1.Transform) { t.Spec.Stopped = true }},
		"failure policy":          {edit: func(t *v1alpha1.Transform) { t.Spec.FailurePolicy = v1alpha1.FailureRestart }},
		"object timeout":          {edit: func(t *v1alpha1.Transform) { t.Spec.ObjectTimeout = &metav1.Duration{Duration: time.Minute} }},
		"node selector":           {edit: func(t *v1alpha1.Transform) { t.Spec.NodeSelector = map[string]string{"a": "b"} }},
		"scheme spelling is same": {edit: func(t *v1alpha1.Transform) { t.Spec.Communication = "hpush://" }},
		"image": {
			edit: func(t *v1alpha1.Transform) { t.Spec.Runtime.Image = "other" },
			want: []string{"spec.runtime: " + forbidden},
		},
		"communication": {
			edit: func(t *v1alpha1.Transform) { t.Spec.Communication = v1alpha1.CommWS },
			want: []string{"spec.communication: " + forbidden},
		},
		"argument": {
			edit: func(t *v1alpha1.Transform) { t.Spec.Argument = v1alpha1.ArgFQN },
			want: []string{"spec.argument: " + forbidden},
		},
		"env": {
			edit: func(t *v1alpha1.Transform) { t.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "b"}} },
			want: []string{"spec.env: " + forbidden},
		},
		"switching form": {
			edit: func(t *v1alpha1.Transform) {
				t.Spec.Runtime = nil
				t.Spec.Code = &v1alpha1.CodeSpec{Runtime: "python3.11", Source: "x"}
			},
			want: []string{"spec.runtime: " + forbidden, "spec.code: " + forbidden},
		},
		"being deleted": {edit: func(t *v1alpha1.Transform) {
			t.DeletionTimestamp = &metav1.Time{}
			t.Spec.Runtime = nil
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old, tr := base(), base()
			tc.edit(tr)
			got := webhooktest.Keys(ValidateUpdate(old, tr))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateUpdate() errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIOModeIsImmutable: the mode defines the running transformer's command line; a PerObject
// Transform, defaulted, cannot become Persistent.
func TestIOModeIsImmutable(t *testing.T) {
	old := builders.Transform("md5").Runtime(echoImage, "md5").Comm(v1alpha1.CommIO).Obj()
	Default(old)
	tr := old.DeepCopy()
	tr.Spec.IOMode = ""
	if errs := ValidateUpdate(old, tr); len(errs) != 0 {
		t.Errorf("unsetting the defaulted mode: %v, want no error", errs)
	}
	tr.Spec.IOMode = v1alpha1.IOPersistent
	if diff := cmp.Diff([]string{"spec.ioMode: " + forbidden}, webhooktest.Keys(ValidateUpdate(old, tr))); diff != "" {
		t.Errorf("PerObject to Persistent (-want +got):\n%s", diff)
	}
}
