package agent

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the agent's Prometheus metrics, labelled by Transform
// ("namespace/name") and communication, in a registry of their own.
type metrics struct {
	registry *prometheus.Registry
	objects  *prometheus.CounterVec
	bytesIn  *prometheus.CounterVec
	bytesOut *prometheus.CounterVec
	errors   *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	panics   *prometheus.CounterVec
	// handles caches the labelled series of each Transform and
	// communication, so that an object costs no label lookups.
	handles sync.Map // handleKey → *seriesHandles
}

type handleKey struct{ transform, communication string }

type seriesHandles struct {
	objects, bytesIn, bytesOut prometheus.Counter
	latency                    prometheus.Observer
}

func newMetrics() *metrics {
	labels := []string{"transform", "communication"}
	m := &metrics{
		registry: prometheus.NewRegistry(),
		objects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "mlkube", Subsystem: "datapath", Name: "objects_total",
			Help: "Objects transformed, failed ones included.",
		}, labels),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "mlkube", Subsystem: "datapath", Name: "bytes_in_total",
			Help: "Bytes handed to transformers.",
		}, labels),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "mlkube", Subsystem: "datapath", Name: "bytes_out_total",
			Help: "Bytes transformers answered.",
		}, labels),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "mlkube", Subsystem: "datapath", Name: "errors_total",
			Help: "Failed objects, by the status they were answered with.",
		}, append(labels, "code")),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "mlkube", Subsystem: "datapath", Name: "object_duration_seconds",
			Help: "Time from an object's request to the end of its answer.",
			// 100 µs (a small object on the node) to about 100 s.
			Buckets: prometheus.ExponentialBuckets(100e-6, 4, 11),
		}, labels),
	}
	m.panics = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "mlkube", Subsystem: "datapath", Name: "panics_total",
		Help: "Panics recovered in the agent's goroutines, by goroutine; each is a bug, logged with its stack.",
	}, []string{"goroutine"})
	m.registry.MustRegister(m.objects, m.bytesIn, m.bytesOut, m.errors, m.latency, m.panics)
	return m
}

func (m *metrics) series(transform, communication string) *seriesHandles {
	k := handleKey{transform, communication}
	if h, ok := m.handles.Load(k); ok {
		return h.(*seriesHandles)
	}
	h, _ := m.handles.LoadOrStore(k, &seriesHandles{
		objects:  m.objects.WithLabelValues(transform, communication),
		bytesIn:  m.bytesIn.WithLabelValues(transform, communication),
		bytesOut: m.bytesOut.WithLabelValues(transform, communication),
		latency:  m.latency.WithLabelValues(transform, communication),
	})
	return h.(*seriesHandles)
}

// observe records one object through one Transform; code is 0 on success.
func (m *metrics) observe(transform, communication string, bytesIn, bytesOut int64, d time.Duration, code int) {
	s := m.series(transform, communication)
	s.objects.Inc()
	s.bytesIn.Add(float64(bytesIn))
	s.bytesOut.Add(float64(bytesOut))
	s.latency.Observe(d.Seconds())
	if code != 0 {
		m.errors.WithLabelValues(transform, communication, strconv.Itoa(code)).Inc()
	}
}

// forget drops every series of transform: the stats recorder forgot it
// (recorder.forget), and the registry must not keep what it let go.
func (m *metrics) forget(transform string) {
	m.handles.Range(func(k, _ any) bool {
		if k.(handleKey).transform == transform {
			m.handles.Delete(k)
		}
		return true
	})
	match := prometheus.Labels{"transform": transform}
	m.objects.DeletePartialMatch(match)
	m.bytesIn.DeletePartialMatch(match)
	m.bytesOut.DeletePartialMatch(match)
	m.errors.DeletePartialMatch(match)
	m.latency.DeletePartialMatch(match)
}
