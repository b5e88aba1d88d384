package wire

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestObjectPathRoundTrip(t *testing.T) {
	cases := map[string]struct {
		object   string
		wantPath string
	}{
		"plain":          {object: "a.jpg", wantPath: "/a.jpg"},
		"slashes":        {object: "dir/sub/a.jpg", wantPath: "/dir/sub/a.jpg"},
		"spaces":         {object: "my file.txt", wantPath: "/my%20file.txt"},
		"percent":        {object: "100%/x%2Fy", wantPath: "/100%25/x%252Fy"},
		"query chars":    {object: "a?b#c&d=e", wantPath: "/a%3Fb%23c&d=e"},
		"dot segments":   {object: "a/./../b", wantPath: "/a/%2E/%2E%2E/b"},
		"empty segments": {object: "a//b/", wantPath: "/a//b/"},
		"leading slash":  {object: "/abs", wantPath: "//abs"},
		"unicode":        {object: "données/é", wantPath: "/donn%C3%A9es/%C3%A9"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gotPath := ObjectPath(tc.object)
			if gotPath != tc.wantPath {
				t.Errorf("ObjectPath(%q) = %q, want %q", tc.object, gotPath, tc.wantPath)
			}
			// What a server sees: the path as parsed by net/url.
			u, err := url.Parse("http://h" + gotPath)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseObjectPath(u.EscapedPath())
			if err != nil || got != tc.object {
				t.Errorf("ParseObjectPath(%q) = %q, %v; want %q", u.EscapedPath(), got, err, tc.object)
			}
		})
	}
}

func TestParseObjectPath(t *testing.T) {
	cases := map[string]struct {
		path    string
		want    string
		wantErr bool
	}{
		"escaped slash": {path: "/a%2Fb", want: "a/b"},
		"raw":           {path: "/a/b c", want: "a/b c"},
		"root":          {path: "/", wantErr: true},
		"no slash":      {path: "a", wantErr: true},
		"bad escape":    {path: "/a%zz", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseObjectPath(tc.path)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("ParseObjectPath(%q) = %q, %v; want %q, error %v", tc.path, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestObjectURL(t *testing.T) {
	cases := map[string]struct {
		base   string
		object string
		q      Query
		want   string
	}{
		"no query":  {base: "http://p:8000", object: "a b", want: "http://p:8000/a%20b"},
		"args":      {base: "http://p:8000/", object: "x/y", q: Query{Args: "level=9&x"}, want: "http://p:8000/x/y?args=level%3D9%26x"},
		"fqn":       {base: "http://p:8000", object: "o", q: Query{FQN: "/data/o"}, want: "http://p:8000/o?fqn=%2Fdata%2Fo"},
		"src, args": {base: "http://p", object: "o", q: Query{Src: "http://a/o?x=1", Args: "z"}, want: "http://p/o?args=z&src=http%3A%2F%2Fa%2Fo%3Fx%3D1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ObjectURL(tc.base, tc.object, tc.q)
			if got != tc.want {
				t.Errorf("ObjectURL = %q, want %q", got, tc.want)
			}
			u, err := url.Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.q, ParseQuery(u.Query())); diff != "" {
				t.Errorf("ParseQuery round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckObject(t *testing.T) {
	for object, ok := range map[string]bool{
		"a":                                  true,
		"a/b/c.jpg":                          true,
		"a/./b":                              true,
		"..a/b..":                            true,
		"":                                   false,
		"/etc/passwd":                        false,
		"a/../b":                             false,
		"..":                                 false,
		"a/..":                               false,
		"a\x00b":                             false,
		"a/":                                 true,
		"a//..":                              false,
		"../\x00":                            false,
		strings.Repeat("a", MaxObjectName):   true,
		strings.Repeat("a", MaxObjectName+1): false,
	} {
		err := CheckObject(object)
		if (err == nil) != ok {
			t.Errorf("CheckObject(%q) = %v, want ok %v", object, err, ok)
		}
		if inBuffer := checkObject([]byte(object)); fmt.Sprint(inBuffer) != fmt.Sprint(err) {
			t.Errorf("checkObject of the bytes of %q = %v; of the string %v", object, inBuffer, err)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("CheckObject's error is %d bytes long; it must not echo a long name", len(err.Error()))
		}
	}
}
