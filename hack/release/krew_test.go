package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// krewPlatform is one platform of a krew manifest, as krew reads it.
type krewPlatform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Bin    string `json:"bin"`
}

// TestReleaseKrewManifestsNameTheReleaseArchives stamps the committed plugins/*.yaml as make
// release does, with fake archives: every platform's uri is the release's archives URL (or, when the
// release names none, the GitHub release of its version) followed by the archive's name, its
// sha256 that archive's, and its bin the binary the archive holds (.exe on windows).
func TestReleaseKrewManifestsNameTheReleaseArchives(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	const version = "v1.2.3"
	platforms := []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}
	archives := t.TempDir()
	sums := map[string]string{}
	var lines strings.Builder
	for i, name := range []string{"etl", "mxjob"} {
		for j, p := range platforms {
			archive := fmt.Sprintf("kubectl-%s_%s.tar.gz", name, strings.ReplaceAll(p, "/", "_"))
			sums[archive] = fmt.Sprintf("ab%062x", i*len(platforms)+j+1) // not all digits, which YAML would read as a number
			fmt.Fprintf(&lines, "%s  %s\n", sums[archive], archive)
		}
	}
	if err := os.WriteFile(filepath.Join(archives, "SHA256SUMS"), []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ archivesURL, wantBase string }{
		{"https://downloads.example/mlkube/v1.2.3/", "https://downloads.example/mlkube/v1.2.3/"},
		{"http://10.250.0.1:8080/krew", "http://10.250.0.1:8080/krew/"},
		{"", githubReleases + version + "/"},
	} {
		t.Run(tc.archivesURL, func(t *testing.T) {
			dir := t.TempDir()
			if err := stampKrew(context.Background(), root, dir, version, tc.archivesURL, archives); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"etl", "mxjob"} {
				data, err := os.ReadFile(filepath.Join(dir, name+".yaml"))
				if err != nil {
					t.Fatal(err)
				}
				var m struct {
					Spec struct {
						Version   string         `json:"version"`
						Platforms []krewPlatform `json:"platforms"`
					} `json:"spec"`
				}
				if err := yaml.Unmarshal(data, &m); err != nil {
					t.Fatal(err)
				}
				if m.Spec.Version != version {
					t.Errorf("%s: version %s, want %s", name, m.Spec.Version, version)
				}
				var got, want []string
				for _, p := range m.Spec.Platforms {
					l := p.Selector.MatchLabels
					got = append(got, fmt.Sprintf("%s/%s %s %s %s", l["os"], l["arch"], p.URI, p.SHA256, p.Bin))
				}
				for _, p := range platforms {
					archive := fmt.Sprintf("kubectl-%s_%s.tar.gz", name, strings.ReplaceAll(p, "/", "_"))
					bin := "kubectl-" + name
					if strings.HasPrefix(p, "windows/") {
						bin += ".exe"
					}
					want = append(want, fmt.Sprintf("%s %s%s %s %s", p, tc.wantBase, archive, sums[archive], bin))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s's platforms (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

func TestCheckRefusesAnArchivesURLKrewCannotDownload(t *testing.T) {
	for _, u := range []string{"downloads.example/mlkube", "file:///srv/krew", "https:///path", "https://h/p?x=1", "https://h/p#a", "ftp://h/p"} {
		c := config{version: "v1.2.3", registry: "registry.example/mlkube", archs: []string{"amd64"}, archivesURL: u}
		err := c.check()
		want := fmt.Sprintf("archives URL %q: want an http(s) URL with a host and no query, the directory the krew archives are published in (ARCHIVES_URL=https://host/path)", u)
		if err == nil || err.Error() != want {
			t.Errorf("%s: check() = %v, want %s", u, err, want)
		}
	}
	c := config{version: "v1.2.3", registry: "registry.example/mlkube", archs: []string{"amd64"}, archivesURL: "https://downloads.example/mlkube/v1.2.3"}
	if err := c.check(); err != nil {
		t.Errorf("check() = %v for an https URL", err)
	}
}
