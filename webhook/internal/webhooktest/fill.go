package webhooktest

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/randfill"
)

// Filler returns a randfill.Filler seeded by fuzz data that builds small objects biased toward
// the values the admission rules care about (enum members, port boundaries, the container names
// mxnet and transformer, long names), so fuzzing reaches the rules rather than only random noise.
// extra adds custom fill functions, e.g. Pick for a kind's enum types.
func Filler(data []byte, extra ...any) *randfill.Filler {
	funcs := append([]any{
		Pick("", "x", "img:1", "python3.11", "transform", "mxnet", "default"),
		PickInt[int32](-1, 0, 1, 2, 3, 100, 8000, 9091, 65535, 65536),
		PickInt[int64](-1, 0, 1, 30, 3600),
		fillObjectMeta,
		fillPodTemplate,
		func(d *metav1.Duration, c randfill.Continue) {
			d.Duration = time.Duration(int64(c.Uint64()%7200)-3600) * time.Second
		},
		func(*corev1.ResourceRequirements, randfill.Continue) {}, // quantities are not ours to check
		func(*corev1.EnvVarSource, randfill.Continue) {},
		Pick[corev1.TolerationOperator]("", corev1.TolerationOpExists, corev1.TolerationOpEqual, "Maybe"),
		Pick[corev1.TaintEffect]("", corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute, "Sometimes"),
	}, extra...)
	return randfill.NewFromGoFuzz(data).NilChance(0.3).NumElements(0, 4).MaxDepth(6).Funcs(funcs...)
}

// Pick returns a fill function choosing one of vals.
func Pick[T ~string](vals ...T) func(*T, randfill.Continue) {
	return func(v *T, c randfill.Continue) { *v = vals[c.Intn(len(vals))] }
}

// PickInt returns a fill function choosing one of vals, or now and then any value.
func PickInt[T ~int32 | ~int64](vals ...T) func(*T, randfill.Continue) {
	return func(v *T, c randfill.Continue) {
		if c.Intn(8) == 0 {
			*v = T(c.Int63())
			return
		}
		*v = vals[c.Intn(len(vals))]
	}
}

func fillObjectMeta(m *metav1.ObjectMeta, c randfill.Continue) {
	names := []string{"", "a", "train", "1bad", "with.dot", strings.Repeat("n", 50+c.Intn(20))}
	m.Name = names[c.Intn(len(names))]
	if c.Intn(4) == 0 {
		m.GenerateName = names[c.Intn(len(names))]
	}
	if c.Intn(10) == 0 {
		m.DeletionTimestamp = &metav1.Time{}
	}
}

func fillPodTemplate(p *corev1.PodTemplateSpec, c randfill.Continue) {
	names := []string{"mxnet", "transformer", "sidecar", ""}
	n := c.Intn(4)
	for range n {
		var ctr corev1.Container
		ctr.Name = names[c.Intn(len(names))]
		c.Fill(&ctr.Image)
		c.Fill(&ctr.Ports)
		c.Fill(&ctr.Env)
		c.Fill(&ctr.Command)
		if c.Bool() {
			ctr.ReadinessProbe = &corev1.Probe{PeriodSeconds: 1}
		}
		p.Spec.Containers = append(p.Spec.Containers, ctr)
	}
	if c.Bool() {
		p.Spec.RestartPolicy = corev1.RestartPolicyAlways
	}
}

// Generate builds an object from fuzz data: one of bases, then up to three of its fields (as
// pointers returned by fields) refilled at random. Starting from valid bases keeps a good share of
// generated objects valid, so properties about valid objects are exercised, while the refills
// reach every rule.
func Generate[T any](data []byte, bases []func() T, fields func(T) []any, extra ...any) T {
	f := Filler(data, extra...)
	var pick struct {
		Base, Count uint8
		Fields      [3]uint16
	}
	f.Fill(&pick)
	obj := bases[int(pick.Base)%len(bases)]()
	ptrs := fields(obj)
	for i := range int(pick.Count % 4) {
		f.Fill(ptrs[int(pick.Fields[i])%len(ptrs)])
	}
	return obj
}

// ValidShare generates n objects from seeds 0..n-1 and returns the share that valid accepts.
func ValidShare[T any](n int, gen func([]byte) T, valid func(T) bool) float64 {
	ok := 0
	for i := range n {
		if valid(gen([]byte{byte(i), byte(i >> 8), byte(i >> 16)})) {
			ok++
		}
	}
	return float64(ok) / float64(n)
}
