package agent

import (
	"cmp"
	"encoding/json"
	"math"
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
// GET /v1/stats. Counters are atomics; only failed objects, and a
// Transform's first object, take a lock.
//
// What it keeps is bounded: at most maxStatsRecords Transforms (Transforms
// are a tenant's to create), the one that went longest without an object
// forgotten first (its metrics series too: forget), and each Transform's
// errors a ring of bounded records (package recent).
type recorder struct {
	node string
	// max bounds the records; 0 is maxStatsRecords.
	max int
	// forget, when set, is told of each record forgotten.
	forget func(key string)

	mu         sync.Mutex // guards adding and forgetting records
	n          int
	transforms sync.Map // "namespace/name" → *transformRecord
}

// maxStatsRecords bounds the Transforms an agent keeps statistics of:
// their counters alone come to at most about 3 MiB of report.
const maxStatsRecords = 4096

// maxStatsReport bounds the JSON of a report: half of what the manager
// reads of an agent's answer (8 MiB, controller/internal/agentclient),
// which drops the whole report of a node past it.
const maxStatsReport = 4 << 20

// transformRecord counts objects: those of one Transform, or of one
// offline run.
type transformRecord struct {
	objects, bytesIn, bytesOut, errors atomic.Int64
	// last is when its last object started (Unix nanoseconds).
	last   atomic.Int64
	recent recent.Errors
}

// observe counts one object; a non-zero code records it as failed with msg.
func (t *transformRecord) observe(node string, bytesIn, bytesOut int64, object string, code int, msg string, now time.Time) {
	t.objects.Add(1)
	t.bytesIn.Add(bytesIn)
	t.bytesOut.Add(bytesOut)
	if ns := now.UnixNano(); ns > t.last.Load() {
		t.last.Store(ns) // a race may keep a slightly older time: only eviction's order uses it
	}
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.transforms.Load(key); ok {
		return t.(*transformRecord)
	}
	if r.n >= cmp.Or(r.max, maxStatsRecords) {
		r.forgetOldestLocked()
	}
	t := &transformRecord{}
	r.transforms.Store(key, t)
	r.n++
	return t
}

// forgetOldestLocked forgets the record that went longest without an
// object; r.mu is held.
func (r *recorder) forgetOldestLocked() {
	var oldest string
	at := int64(math.MaxInt64)
	r.transforms.Range(func(k, v any) bool {
		if last := v.(*transformRecord).last.Load(); last < at {
			oldest, at = k.(string), last
		}
		return true
	})
	r.transforms.Delete(oldest)
	r.n--
	if r.forget != nil {
		r.forget(oldest)
	}
}

// observe counts one object; a non-zero code records it as failed with msg.
func (r *recorder) observe(key string, bytesIn, bytesOut int64, object string, code int, msg string, now time.Time) {
	r.record(key).observe(r.node, bytesIn, bytesOut, object, code, msg, now)
}

// report returns a snapshot of everything recorded, within maxStatsReport
// bytes of JSON: every record's counters, and of its errors the newest
// that fit an equal part of the rest.
func (r *recorder) report() wire.StatsReport {
	rep := wire.StatsReport{Node: r.node, Transforms: map[string]wire.TransformStats{}}
	left := maxStatsReport - jsonBound(r.node) - 64
	r.transforms.Range(func(k, v any) bool {
		key := k.(string)
		rep.Transforms[key] = v.(*transformRecord).snapshot()
		left -= jsonBound(key) + countersJSON
		return true
	})
	if len(rep.Transforms) == 0 {
		return rep
	}
	each := max(left, 0) / len(rep.Transforms)
	for key, ts := range rep.Transforms {
		ts.Errors = newestWithin(ts.Errors, each)
		rep.Transforms[key] = ts
	}
	return rep
}

// countersJSON bounds the JSON of a record's counters and its field names.
const countersJSON = 192

// jsonBound bounds the JSON of s as a string: each byte escapes to at most
// six ("\u003c"), and the quotes.
func jsonBound(s string) int { return 6*len(s) + 2 }

// newestWithin returns the newest errors (oldest first, as errs) whose
// JSON comes to at most n bytes.
func newestWithin(errs []etlv1alpha1.ObjectError, n int) []etlv1alpha1.ObjectError {
	i := len(errs)
	for i > 0 {
		e := errs[i-1]
		// Time, code and field names are under 160 bytes.
		size := jsonBound(e.Object) + jsonBound(e.Message) + jsonBound(e.Node) + 160
		if size > n {
			break
		}
		n -= size
		i--
	}
	return errs[i:]
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
