package agent

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/durable"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// TestObjectPutFullDisk fills a real file system, a 2 MiB tmpfs, through the
// object API with the real statfs and --min-free-bytes 0: every PUT that
// finds no room is answered 507 with what to do, leaves neither a temporary
// file nor a partial object, and the objects stored before read back whole.
func TestObjectPutFullDisk(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.DataRoot = mountTmpfs(t, "size=2m")
		o.MinFreeBytes = 0
	})
	stored := map[string][]byte{}
	// intact checks that the data root holds exactly the stored objects
	// (no temporary file, no partial object), each byte for byte.
	intact := func(t *testing.T) {
		t.Helper()
		var want []string
		for name, data := range stored {
			want = append(want, filepath.Join("default", name))
			if resp, body := e.request(http.MethodGet, e.objectURL(name), nil); resp.code != http.StatusOK || !bytes.Equal(body, data) {
				t.Errorf("GET %s: %d, %d bytes, want 200 and the %d bytes stored", name, resp.code, len(body), len(data))
			}
		}
		slices.Sort(want)
		if diff := cmp.Diff(want, files(t, e.base)); diff != "" {
			t.Errorf("the data root holds other files than the objects (-objects +files):\n%s", diff)
		}
	}
	put := func(t *testing.T, name string, data []byte) (reply, []byte) {
		t.Helper()
		resp, body := e.request(http.MethodPut, e.objectURL(name), bytes.NewReader(data))
		if resp.code == http.StatusCreated {
			stored[name] = data
		}
		return resp, body
	}
	// refusal checks a 507 whose message says each of says.
	refusal := func(t *testing.T, what string, resp reply, body []byte, says ...string) {
		t.Helper()
		if resp.code != http.StatusInsufficientStorage {
			t.Errorf("%s: %d %s, want 507", what, resp.code, body)
			return
		}
		msg := answer{resp.code, body}.apiError(t).Error
		for _, s := range says {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: the refusal %q does not say %q", what, msg, s)
			}
		}
	}
	// Each object of the filling is under the 256 KiB net/http reads of a
	// body its handler left, so a refusal keeps the connection.
	const size = 192 << 10

	if !t.Run("known length", func(t *testing.T) {
		for i := 0; ; i++ {
			name := fmt.Sprintf("o%d", i)
			resp, body := put(t, name, pattern(i, size))
			if resp.code == http.StatusCreated && i < 20 {
				continue
			}
			if i == 0 {
				t.Fatalf("the first PUT: %d %s", resp.code, body)
			}
			free := freeBytes(t, e.base)
			refusal(t, fmt.Sprintf("PUT %s of %d bytes with %d free", name, size, free), resp, body,
				fmt.Sprintf("has %d bytes free", free), "--min-free-bytes", "?node=")
			break
		}
		intact(t)
	}) {
		return
	}

	t.Run("unknown length", func(t *testing.T) {
		free := freeBytes(t, e.base)
		n := int(free) + 64<<10
		// No Content-Length: the bound is found while the body streams.
		resp, body := e.request(http.MethodPut, e.objectURL("chunked"), io.MultiReader(bytes.NewReader(pattern(99, n))))
		refusal(t, fmt.Sprintf("PUT of %d bytes of unknown length with %d free", n, free), resp, body,
			fmt.Sprintf("has %d bytes free", free), "--min-free-bytes", "?node=")
		intact(t)
	})

	// A PUT admitted while there was room, whose room another PUT takes
	// before the rest of its body comes: its write fails with ENOSPC.
	t.Run("space taken mid-copy", func(t *testing.T) {
		const chunk = 16 << 10
		if free := freeBytes(t, e.base); free < 2*chunk {
			t.Fatalf("%d bytes free, want at least %d", free, 2*chunk)
		}
		type result struct {
			resp reply
			body []byte
			err  error
		}
		done := make(chan result, 1)
		body, upload := io.Pipe()
		defer upload.Close()
		go func() {
			resp, data, err := e.send(http.MethodPut, e.objectURL("late"), body)
			done <- result{resp, data, err}
		}()
		if _, err := upload.Write(pattern(7, chunk)); err != nil {
			r := <-done
			t.Fatalf("the PUT ended before its body was sent: %d %s %v", r.resp.code, r.body, r.err)
		}
		waitUntil(t, func() bool { // its first chunk in its temporary file
			entries, _ := os.ReadDir(e.root)
			for _, d := range entries {
				if fi, err := d.Info(); err == nil && durable.IsTempOf(d.Name(), putTag) && fi.Size() == chunk {
					return true
				}
			}
			return false
		})
		if resp, body := put(t, "taker", pattern(8, int(freeBytes(t, e.base)))); resp.code != http.StatusCreated {
			t.Fatalf("PUT of the rest of the space: %d %s", resp.code, body)
		}
		// Within the bound the late PUT was admitted with: only the disk
		// refuses it.
		_, _ = upload.Write(pattern(9, chunk))
		upload.Close()
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		refusal(t, "PUT whose write found the disk full", r.resp, r.body, "data root is full", "?node=")
		intact(t)
	})

	t.Run("space given back", func(t *testing.T) {
		data := pattern(10, size)
		resp, body := put(t, "again", data)
		refusal(t, fmt.Sprintf("PUT of %d bytes on a full disk", size), resp, body)
		if resp, body := e.request(http.MethodDelete, e.objectURL("o0"), nil); resp.code != http.StatusOK {
			t.Fatalf("DELETE: %d %s", resp.code, body)
		}
		delete(stored, "o0")
		if resp, body := put(t, "again", data); resp.code != http.StatusCreated {
			t.Fatalf("PUT of %d bytes once %d were deleted: %d %s", size, size, resp.code, body)
		}
		intact(t)
	})
}

// mountTmpfs mounts a tmpfs with options on a directory of the test's,
// unmounted at its end; it skips the test where it cannot mount.
func mountTmpfs(t *testing.T, options string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, options); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): a container without CAP_SYS_ADMIN?", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting the tmpfs: %v (files open under it: %v)", err, openUnder(dir))
			_ = unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	return dir
}

// openUnder lists the files under dir this process holds open.
func openUnder(dir string) []string {
	var open []string
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, dir+"/") {
			open = append(open, target)
		}
	}
	return open
}

// freeBytes is what statfs says is free on the file system of dir.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	free, err := statfsFree(dir)()
	if err != nil {
		t.Fatal(err)
	}
	return free
}

// pattern is n bytes that differ from object to object (seed).
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*31 + i*7 + i>>11)
	}
	return b
}

// TestNodeRunFullDisk: a run's results on a real file system, a 1 MiB tmpfs
// with --min-free-bytes 0, are bounded by its free space as PUTs are: the
// results that do not fit fail with 507 saying what to do, and leave
// neither a temporary file nor a partial result.
func TestNodeRunFullDisk(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.DataRoot = mountTmpfs(t, "size=1m")
		o.MinFreeBytes = 0
	})
	// No fqn root: the transformer would hold the tmpfs open past the test.
	e.addServer("t", etlv1alpha1.CommHPush, "", transformertest.NewServer(t, double))
	const size = 192 << 10
	for i, name := range []string{"raw/a", "raw/b", "raw/c"} {
		e.writeObject(name, pattern(i, size))
	}
	spec := prefixRun("t", 1)
	spec.ContinueOnError = true
	s := e.runToEnd("r1", spec)
	if s.DoneObjects != 1 || s.FailedObjects != 2 {
		t.Fatalf("status %s %q, %+v; want 1 result of %d bytes stored and 2 refused", s.Phase, s.Message, s.RunCounts, 2*size)
	}
	for _, oe := range s.Errors {
		if oe.StatusCode != http.StatusInsufficientStorage || !strings.Contains(oe.Message, "--min-free-bytes") || !strings.Contains(oe.Message, "another node") {
			t.Errorf("%s failed with %d %q, want 507 naming --min-free-bytes", oe.Object, oe.StatusCode, oe.Message)
		}
	}
	if got, _ := e.readObject("out/a"); got != string(append(pattern(0, size), pattern(0, size)...)) {
		t.Errorf("out/a holds %d bytes, want the first result whole", len(got))
	}
	for _, name := range []string{"out/b", "out/c"} {
		if e.exists(name) {
			t.Errorf("%s exists on a full disk", name)
		}
	}
	if left := e.leftovers(); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
