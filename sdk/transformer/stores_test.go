package transformer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
)

const testCaller = "10.0.0.5:41234"

// writeStores writes origins, one a line, to a new file in a temporary directory.
func writeStores(t *testing.T, origins ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), wire.TransformerStoresKey)
	if err := os.WriteFile(path, []byte(strings.Join(origins, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkSrcRefusal returns checkSrc's error message, "" when src is accepted.
func checkSrcRefusal(src string, stores *storesFile) string {
	if err := checkSrc(testCaller, src, stores); err != nil {
		return err.Error()
	}
	return ""
}

// A src on a listed store origin passes whatever its path and query; the origin must match in
// scheme, host and port, and the URL carry nothing a presigned GET does not.
func TestCheckSrcStoreOrigins(t *testing.T) {
	path := writeStores(t, "http://store.example:9000", "https://secure.example:443")
	stores := newStoresFile(path)
	notListed := func(origin string) string { return "origin " + origin + " is not in " + path }
	for name, tc := range map[string]struct{ src, refused string }{
		"listed, presigned query": {src: "http://store.example:9000/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=ab"},
		"listed, host upper-case": {src: "http://STORE.example:9000/b/k"},
		"listed, implied port":    {src: "https://secure.example/b/k"},
		"unlisted host":           {src: "http://other.example:9000/b/k", refused: notListed("http://other.example:9000")},
		"same host, other port":   {src: "http://store.example:9001/b/k", refused: notListed("http://store.example:9001")},
		"https for http":          {src: "https://store.example:9000/b/k", refused: notListed("https://store.example:9000")},
		"http for https":          {src: "http://secure.example:443/b/k", refused: notListed("http://secure.example:443")},
		"implied port not listed": {src: "http://store.example/b/k", refused: notListed("http://store.example:80")},
		"userinfo":                {src: "http://u:p@store.example:9000/b/k", refused: "it has userinfo or a fragment"},
		"fragment":                {src: "http://store.example:9000/b/k#f", refused: "it has userinfo or a fragment"},
		"other scheme":            {src: "ftp://store.example:9000/b/k", refused: "its scheme is not http or https"},
		"no host":                 {src: "http:store.example:9000/b/k", refused: "it names no host"},
	} {
		t.Run(name, func(t *testing.T) {
			got := checkSrcRefusal(tc.src, stores)
			if tc.refused == "" && got != "" {
				t.Errorf("checkSrc(%q) refused it: %s", tc.src, got)
			}
			if tc.refused != "" && !strings.Contains(got, tc.refused) {
				t.Errorf("checkSrc(%q) = %q, want a refusal saying %q", tc.src, got, tc.refused)
			}
		})
	}
}

// The refusal of a src that is neither gives both reasons and names the src, the caller and the
// stores file.
func TestCheckSrcRefusalMessage(t *testing.T) {
	path := writeStores(t, "http://store.example:9000")
	got := checkSrcRefusal("http://x:1/k", newStoresFile(path))
	want := `src "http://x:1/k" is neither an in-flight URL of the caller 10.0.0.5 (its host x:1 is not an IP address) ` +
		`nor a URL of a store of the namespace (origin http://x:1 is not in ` + path + `): ` +
		`hpull transformers fetch only http://10.0.0.5:<port>/v1/inflight/<id> and presigned URLs of the namespace's stores`
	if got != want {
		t.Errorf("refusal\n= %s\nwant %s", got, want)
	}
}

func TestCheckSrcWithoutStores(t *testing.T) {
	const src = "http://store.example:9000/b/k"
	if got := checkSrcRefusal(src, nil); !strings.Contains(got, "this transformer reads no stores file") {
		t.Errorf("no stores file: %q", got)
	}
	absent := filepath.Join(t.TempDir(), wire.TransformerStoresKey)
	stores := newStoresFile(absent)
	if got := checkSrcRefusal(src, stores); !strings.Contains(got, "origin http://store.example:9000 is not in "+absent+", which does not exist") {
		t.Errorf("absent stores file: %q", got)
	}
	// The first store of the namespace: the file appears and is read.
	if err := os.WriteFile(absent, []byte("http://store.example:9000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := checkSrcRefusal(src, stores); got != "" {
		t.Errorf("after the stores file appeared: %s", got)
	}
}

// A stores file past its bounds refuses every store src and says why, rather than serving part
// of the list or crashing; one within them is read whole.
func TestCheckSrcStoresFileBounds(t *testing.T) {
	const listed = "http://store.example:9000"
	many := func(n int) []string {
		origins := []string{listed}
		for i := 1; i < n; i++ {
			origins = append(origins, "http://s"+strconv.Itoa(i)+".example:9000")
		}
		return origins
	}
	for name, tc := range map[string]struct {
		origins []string
		refused string
	}{
		"at most origins":  {origins: many(wire.MaxStoreOrigins)},
		"too many origins": {origins: many(wire.MaxStoreOrigins + 1), refused: "it lists more than 1024 origins"},
		"too many bytes":   {origins: []string{listed, strings.Repeat(" ", maxStoresBytes)}, refused: "is larger than 262144 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeStores(t, tc.origins...)
			got := checkSrcRefusal(listed+"/b/k", newStoresFile(path))
			if tc.refused == "" && got != "" {
				t.Errorf("refused: %s", got)
			}
			if tc.refused != "" && (!strings.Contains(got, tc.refused) || !strings.Contains(got, "stores file cannot be used") || !strings.Contains(got, path)) {
				t.Errorf("refusal %q, want it to name %s and say %q", got, path, tc.refused)
			}
		})
	}
}

// The kubelet updates a Secret volume by writing a new directory and swapping the ..data symlink
// that the file's own symlink goes through. The new list applies at once, even when the new file
// has the old one's size and modification time.
func TestCheckSrcStoresFileIsReadAgainWhenReplaced(t *testing.T) {
	dir := t.TempDir()
	mtime := time.Now().Add(-time.Hour)
	update := func(version, origin string) {
		t.Helper()
		data := filepath.Join(dir, "..data_"+version)
		if err := os.Mkdir(data, 0o700); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(data, wire.TransformerStoresKey)
		if err := os.WriteFile(file, []byte(origin+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	update("1", "http://a.example:9000")
	path := filepath.Join(dir, wire.TransformerStoresKey)
	if err := os.Symlink(filepath.Join("..data", wire.TransformerStoresKey), path); err != nil {
		t.Fatal(err)
	}
	stores := newStoresFile(path)
	if got := checkSrcRefusal("http://a.example:9000/b/k", stores); got != "" {
		t.Fatalf("the first list: %s", got)
	}
	update("2", "http://b.example:9000")
	if got := checkSrcRefusal("http://a.example:9000/b/k", stores); got == "" {
		t.Error("a store no longer listed is still accepted")
	}
	if got := checkSrcRefusal("http://b.example:9000/b/k", stores); got != "" {
		t.Errorf("the store listed since: %s", got)
	}
}

func TestStoresPath(t *testing.T) {
	for name, tc := range map[string]struct {
		opts []Option
		want string
	}{
		"next to the token file":        {opts: []Option{WithTokenFile("/run/t/token")}, want: "/run/t/" + wire.TransformerStoresKey},
		"token file, WithStoresFile":    {opts: []Option{WithTokenFile("/run/t/token"), WithStoresFile("/s")}, want: "/s"},
		"token file, no stores file":    {opts: []Option{WithTokenFile("/run/t/token"), WithStoresFile("")}, want: ""},
		"fixed token":                   {opts: []Option{WithTokenFile("/run/t/token"), WithToken("x")}, want: ""},
		"fixed token, WithStoresFile":   {opts: []Option{WithToken("x"), WithStoresFile("/s")}, want: "/s"},
		"without auth":                  {opts: []Option{WithTokenFile("/run/t/token"), WithoutAuth()}, want: ""},
		"without auth, WithStoresFile":  {opts: []Option{WithStoresFile("/s"), WithoutAuth()}, want: ""},
		"no token source, no file read": {want: ""},
	} {
		t.Run(name, func(t *testing.T) {
			var o options
			for _, opt := range tc.opts {
				opt(&o)
			}
			if got := storesPath(o); got != tc.want {
				t.Errorf("storesPath = %q, want %q", got, tc.want)
			}
		})
	}
}
