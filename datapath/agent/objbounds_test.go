package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mlkube/mlkube/datapath/internal/dataroot"
	"github.com/mlkube/mlkube/internal/status"
)

// gatedBody yields its first head bytes, then waits for open before the
// rest: the PUTs of a test are all admitted before any can end.
type gatedBody struct {
	data []byte
	head int
	open <-chan struct{}
}

func (g *gatedBody) Read(p []byte) (int, error) {
	if len(g.data) == 0 {
		return 0, io.EOF
	}
	if g.head <= 0 {
		<-g.open
		g.head = len(g.data)
	}
	n := copy(p[:min(len(p), g.head)], g.data)
	g.data, g.head = g.data[n:], g.head-n
	return n, nil
}

// sizedBody is a gatedBody that e.request sends with its Content-Length.
type sizedBody struct {
	*gatedBody
	n int
}

func (s sizedBody) Len() int { return s.n }

// admissionGate returns a channel closed once e admitted n PUTs (each asks
// the data root's free space once), or after a while, in case some never
// are.
func admissionGate(t *testing.T, e *env, n int32) <-chan struct{} {
	open := make(chan struct{})
	var once sync.Once
	var admitted atomic.Int32
	late := time.AfterFunc(10*time.Second, func() {
		t.Errorf("only %d of %d PUTs were admitted", admitted.Load(), n)
		once.Do(func() { close(open) })
	})
	t.Cleanup(func() { late.Stop() })
	e.agent.objects.bounds.freeBytes = func() (int64, error) {
		if admitted.Add(1) == n {
			late.Stop()
			once.Do(func() { close(open) })
		}
		return 1 << 40, nil
	}
	return open
}

// TestQuotaConcurrentPuts: PUTs that run at once, of known length and of
// unknown, never take a namespace past its quota, and each ends with its
// object stored (201) or refused naming the quota (507), leaving no
// temporary file. Every PUT is admitted before any ends, so none sees the
// others' bytes stored yet.
func TestQuotaConcurrentPuts(t *testing.T) {
	const (
		puts  = 16
		size  = 64 << 10
		quota = 256 << 10
	)
	e := newObjectEnv(t, func(o *Options) { o.NamespaceQuota = quota })
	open := admissionGate(t, e, puts)
	codes := make([]int, puts)
	var wg sync.WaitGroup
	for i := range puts {
		// A known length passes the client's write buffer whole but for
		// its last byte; a chunked body is sent as it is read.
		sized := i%2 == 0
		g := &gatedBody{data: bytes.Repeat([]byte{byte('a' + i)}, size), head: 1, open: open}
		var body io.Reader = g
		if sized {
			g.head = size - 1
			body = sizedBody{g, size}
		}
		wg.Go(func() {
			resp, answer := e.request(http.MethodPut, e.objectURL(fmt.Sprint("o", i)), body)
			codes[i] = resp.code
			if resp.code != http.StatusCreated && (resp.code != http.StatusInsufficientStorage || !strings.Contains(string(answer), "--namespace-quota")) {
				t.Errorf("PUT %d (known length %v): %d %s, want 201 or 507 naming the quota", i, sized, resp.code, answer)
			}
		})
	}
	wg.Wait()
	var stored []string
	for i, code := range codes {
		if code == http.StatusCreated {
			stored = append(stored, fmt.Sprint("default/o", i))
		}
	}
	if len(stored) == 0 || len(stored)*size > quota {
		t.Errorf("%d PUTs of %d bytes stored under a quota of %d", len(stored), size, quota)
	}
	wantHeld(t, e, stored, int64(len(stored)*size))
}

// TestQuotaChunkedRefusedAsItArrives: a body of unknown length is refused
// once its bytes pass the quota, not once it ends (so never written past
// it): the 507 comes while the client still holds its last byte. The agent
// drops the rest of the body rather than read more than net/http's
// allowance (256 KiB) of it after the refusal.
func TestQuotaChunkedRefusedAsItArrives(t *testing.T) {
	const quota = 64 << 10
	e := newObjectEnv(t, func(o *Options) { o.NamespaceQuota = quota })
	open := make(chan struct{})
	late := time.AfterFunc(5*time.Second, func() { close(open) })
	data := bytes.Repeat([]byte("x"), quota+512<<10)
	resp, answer := e.request(http.MethodPut, e.objectURL("big"), &gatedBody{data: data, head: len(data) - 1, open: open})
	if !late.Stop() {
		t.Errorf("the PUT was answered once its body ended: %d %s", resp.code, answer)
	} else {
		close(open)
	}
	if resp.code != http.StatusInsufficientStorage || !strings.Contains(string(answer), "--namespace-quota") {
		t.Errorf("PUT: %d %s, want 507 naming the quota", resp.code, answer)
	}
	wantHeld(t, e, nil, 0)
}

// wantHeld checks that the files under e's data root are want (paths under
// it, in any order) and hold n bytes, which the agent counts for namespace
// default with nothing reserved once its PUTs ended.
func wantHeld(t *testing.T, e *env, want []string, n int64) {
	t.Helper()
	got := files(t, e.base)
	slices.Sort(want)
	var held int64
	for _, f := range got {
		fi, err := os.Stat(filepath.Join(e.base, f))
		if err != nil {
			t.Fatal(err)
		}
		held += fi.Size()
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || held != n {
		t.Errorf("the data root holds %v, %d bytes; want %v, %d bytes", got, held, want, n)
	}
	wantLedger(t, &e.agent.objects.bounds, "default", held, 0)
}

// TestQuotaOverwrite: the quota counts what a namespace holds once its PUTs
// land, so an overwrite needs only what its object adds over the one it
// replaces (both are on disk until it lands, which the free space bound
// counts, not the quota): under a nearly full quota it fits when it is no
// larger than the quota left plus the object it replaces, and one that
// shrinks its object frees the difference.
func TestQuotaOverwrite(t *testing.T) {
	for _, sized := range []bool{true, false} {
		t.Run(fmt.Sprint("known length ", sized), func(t *testing.T) {
			e := newObjectEnv(t, func(o *Options) { o.NamespaceQuota = 100 })
			put := func(object string, n, want int) {
				t.Helper()
				data := bytes.Repeat([]byte(object), n)
				var body io.Reader = bytes.NewReader(data)
				if !sized {
					body = io.MultiReader(body)
				}
				resp, answer := e.request(http.MethodPut, e.objectURL(object), body)
				if resp.code != want {
					t.Fatalf("PUT %s of %d bytes: %d %s, want %d", object, n, resp.code, answer, want)
				}
			}
			put("a", 60, http.StatusCreated)
			put("b", 30, http.StatusCreated)
			put("a", 70, http.StatusCreated)             // adds the 10 bytes left
			put("a", 71, http.StatusInsufficientStorage) // adds 1 to a full quota
			put("a", 20, http.StatusCreated)             // frees 50
			put("c", 50, http.StatusCreated)             // takes them
			put("d", 1, http.StatusInsufficientStorage)  // full again
			wantHeld(t, e, []string{"default/a", "default/b", "default/c"}, 100)
		})
	}
}

// testBounds are the bounds of a store on an empty data root under quota,
// with all the space they ask for.
func testBounds(t *testing.T, quota int64) *storeBounds {
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	b := &storeBounds{node: testNode, size: newSizeLimit(-1, testNode), quota: quota, freeBytes: func() (int64, error) { return 1 << 40, nil }}
	b.usage.root = func(ns string) *dataroot.Namespace { return dataroot.Of(root, ns, "") }
	return b
}

// wantLedger checks what b counts for namespace ns: its walk done, stored
// bytes landed and reserved bytes held by PUTs in flight.
func wantLedger(t *testing.T, b *storeBounds, ns string, stored, reserved int64) {
	t.Helper()
	sp := b.usage.space(ns)
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if want := (ledger{walked: true, stored: stored, reserved: reserved}); sp.ledger != want {
		t.Errorf("namespace %s counted %+v, want %+v", ns, sp.ledger, want)
	}
}

// wantRefused checks that err is the quota's 507.
func wantRefused(t *testing.T, err error) {
	t.Helper()
	if status.Of(err) != http.StatusInsufficientStorage || !strings.Contains(err.Error(), "--namespace-quota") {
		t.Errorf("got %v, want the quota's 507", err)
	}
}

func renameOK() error { return nil }

func replacesNothing() int64 { return 0 }

// TestReservations: what PUTs in flight hold and what they store once they
// land never pass the quota together, and a PUT that ends without landing
// gives back all it held.
func TestReservations(t *testing.T) {
	b := testBounds(t, 100)
	_, known, err := b.admit("ns", 60, 0, putAdvice)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = b.admit("ns", 41, 0, putAdvice)
	wantRefused(t, err)
	_, unknown, err := b.admit("ns", -1, 0, putAdvice)
	if err != nil {
		t.Fatal(err)
	}
	if err := unknown.cover(40); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, unknown.cover(41))
	wantLedger(t, b, "ns", 0, 100)
	if err := known.land(60, replacesNothing, renameOK); err != nil {
		t.Fatal(err)
	}
	known.release()
	wantLedger(t, b, "ns", 60, 40)
	unknown.release() // its client went away
	wantLedger(t, b, "ns", 60, 0)
	failed := errors.New("rename failed")
	_, r, _ := b.admit("ns", 10, 0, putAdvice)
	if err := r.land(10, replacesNothing, func() error { return failed }); !errors.Is(err, failed) {
		t.Errorf("a failed rename: %v", err)
	}
	r.release()
	wantLedger(t, b, "ns", 60, 0)
}

// TestReservationsOverwrite: an overwrite holds what its object adds over
// the one it replaces, and counts at its landing what the rename does
// replace: if that was deleted meanwhile, the rest must fit the quota.
func TestReservationsOverwrite(t *testing.T) {
	b := testBounds(t, 100)
	for _, n := range []int64{60, 30} {
		_, r, _ := b.admit("ns", n, 0, putAdvice)
		if err := r.land(n, replacesNothing, renameOK); err != nil {
			t.Fatal(err)
		}
	}
	_, over, err := b.admit("ns", 70, 60, putAdvice)
	if err != nil {
		t.Fatalf("an overwrite that adds the 10 bytes left: %v", err)
	}
	wantLedger(t, b, "ns", 90, 10)
	if err := b.usage.change("ns", func() (int64, error) { return -60, nil }); err != nil {
		t.Fatal(err)
	}
	_, other, err := b.admit("ns", 60, 0, putAdvice)
	if err != nil {
		t.Fatal(err)
	}
	wantRefused(t, over.land(70, replacesNothing, func() error {
		t.Error("renamed over the quota")
		return nil
	}))
	over.release()
	wantLedger(t, b, "ns", 30, 60)
	if err := other.land(60, replacesNothing, renameOK); err != nil {
		t.Fatal(err)
	}
	_, shrink, _ := b.admit("ns", 20, 60, putAdvice)
	if err := shrink.land(20, func() int64 { return 60 }, renameOK); err != nil {
		t.Fatal(err)
	}
	wantLedger(t, b, "ns", 50, 0)
}

// TestReservationsConcurrent: of PUTs admitted at once, as many as the quota
// holds are, and no more.
func TestReservationsConcurrent(t *testing.T) {
	b := testBounds(t, 256)
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			size := int64(-1) // covered as it comes
			if i%2 == 0 {
				size = 16
			}
			_, r, err := b.admit("ns", size, 0, putAdvice)
			if err == nil {
				err = r.cover(16)
			}
			if err == nil {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if admitted.Load() != 16 {
		t.Errorf("%d PUTs of 16 bytes admitted under a quota of 256", admitted.Load())
	}
	wantLedger(t, b, "ns", 0, 256)
}
