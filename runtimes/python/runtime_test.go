package python

import (
	"archive/zip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// python311 is the interpreter the image ships: Debian's, else any
// python3.11 on PATH.
func python311(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3.11"); err == nil {
		return "/usr/bin/python3.11"
	}
	p, err := exec.LookPath("python3.11")
	if err != nil {
		t.Skip("python3.11 is not installed (apt-get install python3.11-minimal libpython3.11-stdlib)")
	}
	return p
}

// start starts a runtime for source and stops it when the test ends.
func start(t *testing.T, conf Config, workers int) *Runtime {
	t.Helper()
	if conf.Function == "" {
		conf.Function = DefaultFunction
	}
	rt, err := Start(t.Context(), conf, Options{Python: python311(t), Workers: workers, Stderr: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return rt
}

func serve(t *testing.T, conf Config, workers int) *transformertest.Server {
	return transformertest.NewServer(t, start(t, conf, workers).Transform)
}

const reverse = `
def transform(data: bytes) -> bytes:
    print("user output goes to the log, not into the framing")
    return data[::-1]
`

func reversed(b []byte) []byte {
	r := make([]byte, len(b))
	for i, c := range b {
		r[len(b)-1-i] = c
	}
	return r
}

func TestRoundTripEveryMechanism(t *testing.T) {
	s := serve(t, Config{Source: reverse}, 2)
	transformertest.ForEach(t, func(t *testing.T, m transformertest.Mechanism, o transformertest.Object) {
		in := o.Bytes()
		got, err := s.Transform(t.Context(), m, o.Name, "", in)
		if err != nil {
			t.Fatal(err)
		}
		transformertest.CheckBytes(t, got, reversed(in))
	})
}

func TestFunctionName(t *testing.T) {
	s := serve(t, Config{Source: "import hashlib\ndef digest(b):\n    return hashlib.md5(b).hexdigest().encode()\n", Function: "digest"}, 1)
	got, err := s.Transform(t.Context(), transformertest.HPush, "o", "", []byte("abc"))
	if err != nil || string(got) != "900150983cd24fb0d6963f7d28e17f72" {
		t.Errorf("got %q, %v", got, err)
	}
}

const failing = `
import os

def check(data):
    if data == b"boom":
        raise ValueError("boom is not allowed")

def transform(data):
    check(data)
    if data == b"crash":
        os._exit(7)
    if data == b"loop":
        while True:
            pass
    if data == b"int":
        return 42
    return data.upper()
`

// TestPythonException: an exception fails its object with the type, message
// and the traceback's end, and the next object works, over HTTP and ws.
func TestPythonException(t *testing.T) {
	s := serve(t, Config{Source: failing}, 1)
	for _, m := range []transformertest.Mechanism{transformertest.HPush, transformertest.WS, transformertest.HPull} {
		_, err := s.Transform(t.Context(), m, "o", "", []byte("boom"))
		re, ok := errors.AsType[*transformertest.RemoteError](err)
		if !ok {
			t.Fatalf("%s: err = %v, want a remote error", m, err)
		}
		for _, want := range []string{"ValueError: boom is not allowed", "Traceback", `"<MLKUBE_CODE_SOURCE>", line 6, in check`} {
			if !strings.Contains(re.Message, want) {
				t.Errorf("%s: message lacks %q:\n%s", m, want, re.Message)
			}
		}
		if strings.Contains(re.Message, "worker.py") {
			t.Errorf("%s: the traceback shows the worker's own frames:\n%s", m, re.Message)
		}
		if m != transformertest.WS && re.Status != 500 {
			t.Errorf("%s: status %d, want 500", m, re.Status)
		}
		got, err := s.Transform(t.Context(), m, "o", "", []byte("next"))
		if err != nil || string(got) != "NEXT" {
			t.Errorf("%s: next object = %q, %v", m, got, err)
		}
	}
}

func TestWrongReturnType(t *testing.T) {
	s := serve(t, Config{Source: failing}, 1)
	_, err := s.Transform(t.Context(), transformertest.HPush, "o", "", []byte("int"))
	if re, ok := errors.AsType[*transformertest.RemoteError](err); !ok || !strings.Contains(re.Message, "TypeError: transform must return bytes, not int") {
		t.Errorf("err = %v", err)
	}
}

// TestCrashedWorkerRestarts: a worker that dies fails its object with its
// exit status, and the next object gets a new worker.
func TestCrashedWorkerRestarts(t *testing.T) {
	s := serve(t, Config{Source: failing}, 1)
	_, err := s.Transform(t.Context(), transformertest.HPush, "o", "", []byte("crash"))
	if re, ok := errors.AsType[*transformertest.RemoteError](err); !ok || !strings.Contains(re.Message, "python worker died while transforming: exit status 7") {
		t.Errorf("err = %v", err)
	}
	got, err := s.Transform(t.Context(), transformertest.HPush, "o", "", []byte("after"))
	if err != nil || string(got) != "AFTER" {
		t.Errorf("next object = %q, %v", got, err)
	}
}

// TestTimeoutKillsWorker: the object's deadline is the only way to stop a
// function that never returns; the worker is killed and replaced.
func TestTimeoutKillsWorker(t *testing.T) {
	rt := start(t, Config{Source: failing}, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	out, err := rt.Transform(ctx, strings.NewReader("loop"), "o", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(out); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
	out.(io.Closer).Close()
	out, err = rt.Transform(t.Context(), strings.NewReader("next"), "o", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(out); string(got) != "NEXT" || err != nil {
		t.Errorf("next object = %q, %v", got, err)
	}
	out.(io.Closer).Close()
}

func TestChunks(t *testing.T) {
	s := serve(t, Config{Source: "def transform(b):\n    return b'[' + b + b']'\n", ChunkSize: 4}, 1)
	for in, want := range map[string]string{
		"":           "[]",
		"ab":         "[ab]",
		"abcd":       "[abcd]",
		"abcdefgh":   "[abcd][efgh]",
		"abcdefghij": "[abcd][efgh][ij]",
	} {
		for _, m := range []transformertest.Mechanism{transformertest.HPush, transformertest.WS} {
			got, err := s.Transform(t.Context(), m, "o", "", []byte(in))
			if err != nil || string(got) != want {
				t.Errorf("%s %q: got %q, %v; want %q", m, in, got, err, want)
			}
		}
	}
}

// TestChunksLarge: many chunks stream through, in order.
func TestChunksLarge(t *testing.T) {
	s := serve(t, Config{Source: reverse, ChunkSize: 64 << 10}, 1)
	in := transformertest.Object{Name: "o", Size: 5<<20 + 3}.Bytes()
	got, err := s.Transform(t.Context(), transformertest.HPush, "o", "", in)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := 0; i < len(in); i += 64 << 10 {
		want = append(want, reversed(in[i:min(i+64<<10, len(in))])...)
	}
	transformertest.CheckBytes(t, got, want)
}

// TestChunkFailureAbortsAnswer: an exception in a later chunk, after the
// answer started, is never taken for a good (truncated) result.
func TestChunkFailureAbortsAnswer(t *testing.T) {
	src := "def transform(b):\n    if b.startswith(b'X'):\n        raise RuntimeError('bad chunk')\n    return b\n"
	s := serve(t, Config{Source: src, ChunkSize: 64 << 10}, 1)
	in := append(make([]byte, 128<<10), 'X')
	if got, err := s.Transform(t.Context(), transformertest.HPush, "o", "", in); err == nil {
		t.Errorf("got %d bytes and no error", len(got))
	}
	got, err := s.Transform(t.Context(), transformertest.HPush, "o", "", []byte("ok"))
	if err != nil || string(got) != "ok" {
		t.Errorf("next object = %q, %v", got, err)
	}
}

func TestLoadErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		conf Config
		want []string
	}{
		"syntax error": {Config{Source: "def transform(b)\n    return b\n", Function: "transform"},
			[]string{"MLKUBE_CODE_SOURCE does not compile", "SyntaxError", "line 1"}},
		"no function": {Config{Source: "def other(b):\n    return b\n", Function: "transform"},
			[]string{"MLKUBE_CODE_SOURCE defines no 'transform'", "MLKUBE_CODE_FUNCTION"}},
		"not callable": {Config{Source: "transform = 3\n", Function: "transform"},
			[]string{"'transform' (MLKUBE_CODE_FUNCTION) is a int, not a function"}},
		"raises at load": {Config{Source: "import no_such_module_mlkube\n", Function: "transform"},
			[]string{"MLKUBE_CODE_SOURCE failed to load", "ModuleNotFoundError", "no_such_module_mlkube"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Start(t.Context(), tc.conf, Options{Python: python311(t), Workers: 2})
			le, ok := errors.AsType[*LoadError](err)
			if !ok {
				t.Fatalf("err = %v, want a *LoadError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(le.Message, w) {
					t.Errorf("message lacks %q:\n%s", w, le.Message)
				}
			}
		})
	}
}

func TestPythonMissing(t *testing.T) {
	_, err := Start(t.Context(), Config{Source: reverse, Function: "transform"}, Options{Python: "/nonexistent/python3"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/python3") {
		t.Errorf("err = %v, want one naming the interpreter", err)
	}
}

// TestDependencies installs a wheel built here (no index is reachable) and
// imports it from the source.
func TestDependencies(t *testing.T) {
	requirePip(t, python311(t))
	wheel := buildWheel(t, "mlkubedep", "def shout(b):\n    return b.upper() + b'!'\n")
	t.Setenv("PIP_NO_INDEX", "1")
	src := "import mlkubedep\ndef transform(b):\n    return mlkubedep.shout(b)\n"
	s := serve(t, Config{Source: src, Dependencies: wheel + "\n"}, 1)
	got, err := s.Transform(t.Context(), transformertest.HPush, "o", "", []byte("hey"))
	if err != nil || string(got) != "HEY!" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestDependenciesFail(t *testing.T) {
	python := python311(t)
	requirePip(t, python)
	t.Setenv("PIP_NO_INDEX", "1")
	_, err := Start(t.Context(), Config{Source: reverse, Function: "transform", Dependencies: "mlkube-no-such-package==1.0\n"},
		Options{Python: python})
	if err == nil || !strings.Contains(err.Error(), "MLKUBE_CODE_DEPENDENCIES: pip install failed") ||
		!strings.Contains(err.Error(), "mlkube-no-such-package") {
		t.Errorf("err = %v", err)
	}
}

func TestDependenciesWithoutPip(t *testing.T) {
	// An interpreter whose pip is missing, as in the runtime image.
	fake := filepath.Join(t.TempDir(), "python3")
	script := "#!/bin/sh\necho \"$0: No module named pip\" >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Start(t.Context(), Config{Source: reverse, Function: "transform", Dependencies: "x\n"}, Options{Python: fake})
	if err == nil || !strings.Contains(err.Error(), "MLKUBE_CODE_DEPENDENCIES is set, but pip is not available") ||
		!strings.Contains(err.Error(), "No module named pip") {
		t.Errorf("err = %v", err)
	}
}

// requirePip skips a test that installs with pip when python has none; hack/build/install-deps.sh
// installs Debian's python3-pip, so this happens only outside the project's own set-up.
func requirePip(t *testing.T, python string) {
	t.Helper()
	if exec.Command(python, "-m", "pip", "--version").Run() != nil {
		t.Skip("pip is not installed for " + python + " (apt-get install python3-pip, or run hack/build/install-deps.sh)")
	}
}

// buildWheel writes a minimal pure-Python wheel holding module name.
func buildWheel(t *testing.T, name, module string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+"-1.0-py3-none-any.whl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	info := name + "-1.0.dist-info/"
	for _, e := range []struct{ name, body string }{
		{name + ".py", module},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: mlkube-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{info + "RECORD", name + ".py,,\n" + info + "METADATA,,\n" + info + "WHEEL,,\n" + info + "RECORD,,\n"},
	} {
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, e.body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWorkersRunConcurrently: with two workers, two objects are transformed at the same time:
// each call waits (up to a deadline) until both have started.
func TestWorkersRunConcurrently(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MLKUBE_TEST_DIR", dir)
	src := `import os, time
def transform(data):
    d = os.environ["MLKUBE_TEST_DIR"]
    open(os.path.join(d, str(os.getpid())), "w").close()
    deadline = time.monotonic() + 20
    while len(os.listdir(d)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    return b"together" if len(os.listdir(d)) >= 2 else b"alone"
`
	s := serve(t, Config{Source: src}, 2)
	results := make(chan string, 2)
	for range 2 {
		go func() {
			got, err := s.Transform(t.Context(), transformertest.HPush, "o", "", nil)
			if err != nil {
				results <- err.Error()
				return
			}
			results <- string(got)
		}()
	}
	for range 2 {
		if got := <-results; got != "together" {
			t.Errorf("got %q, want together", got)
		}
	}
}
