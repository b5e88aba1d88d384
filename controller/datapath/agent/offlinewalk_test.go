package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// TestOfflineWalkFeedsWorkers: the walk of src goes only a few objects ahead
// of the workers, instead of listing the whole directory first; Total is
// every object once the run ends.
func TestOfflineWalkFeedsWorkers(t *testing.T) {
	const n = 100
	e := newEnv(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.addTransform("t", etlv1alpha1.CommHPush, "", func(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		once.Do(func() {
			close(entered)
			<-release
		})
		return in, nil
	})
	for i := range n {
		e.writeObject(fmt.Sprintf("raw/%03d", i), []byte("x"))
	}
	a, s := e.startOffline("t", wire.RunRequest{Src: "raw", Dst: "out", Workers: 1})
	if a.status != http.StatusAccepted {
		t.Fatalf("POST: %d %s", a.status, a.body)
	}
	<-entered
	// The worker holds one object, the channel one more, the walk waits
	// with a third: however far the walk got, it is blocked there.
	if got := e.offlineStatus(s.ID).Total; got > 3 {
		t.Errorf("while the first object is transformed, %d objects are queued: the walk ran ahead of the workers", got)
	}
	close(release)
	<-e.agent.offline.get(s.ID).done
	if s = e.offlineStatus(s.ID); s.State != wire.RunSucceeded || s.Total != n || s.Counters.Objects != n {
		t.Errorf("status %+v, want Succeeded with %d objects", s, n)
	}
}

// TestOfflineDryRunPlansAtMostTheLimit: a dry run counts every object and
// plans the first wire.RunMaxPlanned.
func TestOfflineDryRunPlansAtMostTheLimit(t *testing.T) {
	const n = wire.RunMaxPlanned + 5
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	for i := range n {
		e.writeObject(fmt.Sprintf("raw/%04d", i), nil)
	}
	s := e.runOffline("t", wire.RunRequest{Src: "raw", Dst: "out", DryRun: true})
	if s.State != wire.RunSucceeded || s.Total != n || len(s.Planned) != wire.RunMaxPlanned {
		t.Fatalf("dry run %s total %d planned %d, want Succeeded, %d, %d", s.State, s.Total, len(s.Planned), n, wire.RunMaxPlanned)
	}
	if last := s.Planned[len(s.Planned)-1].Object; last != fmt.Sprintf("raw/%04d", wire.RunMaxPlanned-1) {
		t.Errorf("last planned %q: the plan is not the first objects in order", last)
	}
}
