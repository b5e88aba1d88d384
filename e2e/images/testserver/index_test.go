package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const helloFile = "mlkubehello-1.0.0-py3-none-any.whl"

var hrefs = regexp.MustCompile(`href="([^"]+)"`)

// links returns the links of an index page, resolved against its URL, as pip resolves them.
func links(t *testing.T, page string) []string {
	t.Helper()
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s = %d %s %q; want 200 text/html, the only pages pip reads", page, resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	base, _ := url.Parse(page)
	var out []string
	for _, m := range hrefs.FindAllStringSubmatch(string(body), -1) {
		ref, err := url.Parse(m[1])
		if err != nil {
			t.Fatalf("link %q of %s: %v", m[1], page, err)
		}
		out = append(out, base.ResolveReference(ref).String())
	}
	return out
}

// TestIndexServesAWheelPipAccepts walks the index as pip does, from /simple/ to the wheel, and
// checks what pip checks: the link's digest, the wheel's name and version, and its RECORD.
func TestIndexServesAWheelPipAccepts(t *testing.T) {
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	if diff := cmp.Diff([]string{srv.URL + "/simple/mlkubehello/"}, links(t, srv.URL+"/simple/")); diff != "" {
		t.Fatalf("projects (-want +got):\n%s", diff)
	}
	// pip asks for the normalized name; any spelling of it finds the project.
	if diff := cmp.Diff(links(t, srv.URL+"/simple/mlkubehello/"), links(t, srv.URL+"/simple/MLKubeHello/")); diff != "" {
		t.Errorf("/simple/MLKubeHello/ (-normalized +as asked):\n%s", diff)
	}
	files := links(t, srv.URL+"/simple/mlkubehello/")
	if len(files) != 1 {
		t.Fatalf("files %q; want one wheel", files)
	}
	u, _ := url.Parse(files[0])
	digest, ok := strings.CutPrefix(u.Fragment, "sha256=")
	if path.Base(u.Path) != helloFile || !ok {
		t.Fatalf("link %s; want %s#sha256=<digest>", files[0], helloFile)
	}
	u.Fragment = ""
	data := get(t, u.String())
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != digest {
		t.Errorf("the wheel's sha256 is %x; the link says %s", sum, digest)
	}
	checkWheel(t, data)
}

func get(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d (%v)", u, resp.StatusCode, err)
	}
	return data
}

// checkWheel unzips a wheel and checks that RECORD lists every other file with its digest and
// size, and that METADATA names mlkubehello 1.0.0.
func checkWheel(t *testing.T, data []byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	contents := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		contents[f.Name], err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	const info = "mlkubehello-1.0.0.dist-info/"
	rows, err := csv.NewReader(bytes.NewReader(contents[info+"RECORD"])).ReadAll()
	if err != nil {
		t.Fatalf("RECORD: %v", err)
	}
	var listed []string
	for _, row := range rows {
		name, hash, size := row[0], row[1], row[2]
		listed = append(listed, name)
		if name == info+"RECORD" {
			if hash != "" || size != "" {
				t.Errorf("RECORD lists itself with %q %q; want no digest", hash, size)
			}
			continue
		}
		content, ok := contents[name]
		if !ok {
			t.Errorf("RECORD lists %s, which the wheel lacks", name)
			continue
		}
		if want := recordHash(content); hash != want || size != strconv.Itoa(len(content)) {
			t.Errorf("RECORD says %s is %s of %s bytes; it is %s of %d", name, hash, size, want, len(content))
		}
	}
	slices.Sort(listed)
	want := []string{info + "METADATA", info + "RECORD", info + "WHEEL", "mlkubehello/__init__.py"}
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("RECORD's files (-want +got):\n%s", diff)
	}
	if got := slices.Sorted(maps.Keys(contents)); !slices.Equal(got, want) {
		t.Errorf("the wheel holds %q; want %q", got, want)
	}
	for _, field := range []string{"Name: mlkubehello\n", "Version: 1.0.0\n"} {
		if !bytes.Contains(contents[info+"METADATA"], []byte(field)) {
			t.Errorf("METADATA lacks %q:\n%s", field, contents[info+"METADATA"])
		}
	}
	if !bytes.Contains(contents[info+"WHEEL"], []byte("Tag: py3-none-any\n")) {
		t.Errorf("WHEEL does not tag the file name's py3-none-any:\n%s", contents[info+"WHEEL"])
	}
}

func TestWheelIsReproducible(t *testing.T) {
	if a, b := helloWheel(), helloWheel(); !bytes.Equal(a.data, b.data) {
		t.Error("two builds of the wheel differ; its digest would change between testserver pods")
	}
}

// pipEnv is the environment without pip's settings: no configuration (another index, extra
// links) may change where pip looks; the runtime in the image has none either.
func pipEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PIP_") })
	return append(env, "PIP_CONFIG_FILE="+os.DevNull, "PIP_NO_CACHE_DIR=1", "PIP_DISABLE_PIP_VERSION_CHECK=1")
}

func TestIndexNotFound(t *testing.T) {
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	for _, p := range []string{"/simple/numpy/", "/packages/numpy-1.0-py3-none-any.whl"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d; want 404", p, resp.StatusCode)
		}
	}
}

// TestPipInstallsFromTheIndex has the real pip download the wheel from the index (checking the
// link's digest), then install it as the Python runtime does, from a requirements file naming
// the index, and imports it.
func TestPipInstallsFromTheIndex(t *testing.T) {
	if out, err := exec.Command("python3", "-m", "pip", "--version").CombinedOutput(); err != nil {
		t.Skipf("python3 has no pip (%v: %s); apt-get install python3-pip", err, bytes.TrimSpace(out))
	}
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	dir := t.TempDir()
	pip := func(args ...string) {
		t.Helper()
		cmd := exec.Command("python3", append([]string{"-m", "pip"}, args...)...)
		cmd.Env = pipEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	pip("download", "--no-input", "--index-url", srv.URL+"/simple/", "mlkubehello==1.0.0", "-d", filepath.Join(dir, "download"))
	if _, err := os.Stat(filepath.Join(dir, "download", helloFile)); err != nil {
		t.Errorf("pip download did not save %s: %v", helloFile, err)
	}

	// The runtime's invocation (runtimes/python installDependencies), with the index in the file.
	requirements := filepath.Join(dir, "requirements.txt")
	host, _, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	text := "--index-url " + srv.URL + "/simple/\n--trusted-host " + host + "\nmlkubehello==1.0.0\n"
	if err := os.WriteFile(requirements, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(dir, "site-packages")
	pip("install", "--no-input", "--target", site, "-r", requirements)

	cmd := exec.Command("python3", "-c", "import sys, mlkubehello; sys.stdout.buffer.write(mlkubehello.greet(b'the suite'))")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+site)
	out, err := cmd.CombinedOutput()
	if want := "hello from mlkubehello 1.0.0: the suite"; err != nil || string(out) != want {
		t.Errorf("greet = %q (%v); want %q", out, err, want)
	}
}
