package agent

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/recent"
)

// recorder keeps the counters and recent errors of every Transform for
// GET /v1/stats. Counters are atomics; only failed objects take a lock.
type recorder struct {
	node       string
	transforms sync.Map // "namespace/name" → *transformRecord
}

// transformRecord counts objects: those of one Transform, or of one
// offline run.
type transformRecord struct {
	objects, bytesIn, bytesOut, errors atomic.Int64
	recent                             recent.Errors
}

// observe counts one object; a non-zero code records it as failed with msg.
func (t *transformRecord) observe(node string, bytesIn, bytesOut int64, object string, code int, msg string, now time.Time) {
	t.objects.Add(1)
	t.bytesIn.Add(bytesIn)
	t.bytesOut.Add(bytesOut)
	if code == 0 {
		return
	}
	t.errors.Add(1)
	t.recent.Add(etlv1alpha1.ObjectError{
		Object: object, Message: msg, StatusCode: int32(code), Node: node, Time: metav1.NewTime(now),
	})
}

func (r *recorder) record(key string) *transformRecord {
	if t, ok := r.transforms.Load(key); ok {
		return t.(*transformRecord)
	}
	t, _ := r.transforms.LoadOrStore(key, &transformRecord{})
	return t.(*transformRecord)
}

// observe counts one object; a non-zero code records it as failed with msg.
func (r *recorder) observe(key string, bytesIn, bytesOut int64, object string, code int, msg string, now time.Time) {
	r.record(key).observe(r.node, bytesIn, bytesOut, object, code, msg, now)
}

// report returns a snapshot of everything recorded.
func (r *recorder) report() wire.StatsReport {
	rep := wire.StatsReport{Node: r.node, Transforms: map[string]wire.TransformStats{}}
	r.transforms.Range(func(k, v any) bool {
		rep.Transforms[k.(string)] = v.(*transformRecord).snapshot()
		return true
	})
	return rep
}

func (t *transformRecord) snapshot() wire.TransformStats {
	return wire.TransformStats{
		Counters: etlv1alpha1.Counters{
			Objects: t.objects.Load(), BytesIn: t.bytesIn.Load(), BytesOut: t.bytesOut.Load(), Errors: t.errors.Load(),
		},
		Errors: t.recent.Snapshot(),
	}
}

func (r *recorder) serve(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(r.report()) // a client that went away has nothing to be told
}
