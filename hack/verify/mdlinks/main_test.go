package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// writeTree writes files (path relative to dir → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheck(t *testing.T) {
	// Every case's tree has these besides its own files.
	base := map[string]string{
		"LICENSE":            "Apache-2.0",
		"docs/guide.md":      "# Guide\n",
		"docs/design/x.md":   "# X\n",
		"api/types.go":       "package api\n",
		"docs/img/a b.svg":   "<svg/>",
		"docs/paren(1).md":   "# P\n",
		"examples/README.md": "# Examples\n",
	}
	tests := []struct {
		name string
		file string // the document checked, relative to the root
		doc  string
		want []string // problems as printed
	}{
		{
			name: "file, directory, anchor, path with anchor, title, image",
			file: "README.md",
			doc: "See [the guide](docs/guide.md), [design](docs/design/) and [types](api/types.go#L1).\n" +
				"[top](#top) ![logo](docs/img/a%20b.svg \"the logo\") [lic](<LICENSE>)\n" +
				"[p](docs/paren(1).md) [root](/docs/guide.md) [q](docs/guide.md?plain=1)\n",
		},
		{
			name: "schemes and protocol-relative links are not checked",
			file: "README.md",
			doc:  "[a](https://example.com/x.md) [b](http://x) [c](mailto:a@b.c) [d](//cdn.example/x)\n",
		},
		{
			name: "relative to the document's own directory",
			file: "docs/design/y.md",
			doc:  "[up](../guide.md) [same](x.md) [root](../../LICENSE) [ex](../../examples)\n",
		},
		{
			name: "missing file",
			file: "README.md",
			doc:  "# T\n\nSee [gone](docs/gone.md).\n",
			want: []string{`README.md:3: "docs/gone.md": no such file or directory: docs/gone.md`},
		},
		{
			name: "missing file behind an anchor",
			file: "docs/guide2.md",
			doc:  "[x](design/z.md#section)\n",
			want: []string{`docs/guide2.md:1: "design/z.md#section": no such file or directory: docs/design/z.md`},
		},
		{
			name: "escaping the repository",
			file: "README.md",
			doc:  "Notes: [overview](../notes/overview.md).\n",
			want: []string{`README.md:1: "../notes/overview.md": points outside the repository`},
		},
		{
			name: "escaping from a subdirectory, even to a file that exists",
			file: "docs/design/y.md",
			doc:  "[x](../../../outside.md)\n",
			want: []string{`docs/design/y.md:1: "../../../outside.md": points outside the repository`},
		},
		{
			name: "reference definitions and HTML attributes",
			file: "README.md",
			doc:  "[ok]: docs/guide.md\n[bad]: docs/nope.md \"title\"\n<img src=\"docs/img/none.svg\"> <a href=\"LICENSE\">l</a>\n",
			want: []string{
				`README.md:2: "docs/nope.md": no such file or directory: docs/nope.md`,
				`README.md:3: "docs/img/none.svg": no such file or directory: docs/img/none.svg`,
			},
		},
		{
			name: "code blocks and code spans hold no links",
			file: "README.md",
			doc: "```sh\necho [x](nope.md)\n```\n~~~~\n```\n[y](nope.md)\n~~~~\n" +
				"`[z](nope.md)` and ``a ` [w](nope.md)``\n" +
				"after the code: [v](nope.md)\n",
			want: []string{`README.md:9: "nope.md": no such file or directory: nope.md`},
		},
		{
			name: "several on a line, each reported",
			file: "README.md",
			doc:  "[a](a.md) [ok](LICENSE) [b](b/)\n",
			want: []string{
				`README.md:1: "a.md": no such file or directory: a.md`,
				`README.md:1: "b/": no such file or directory: b`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "repo")
			writeTree(t, root, base)
			writeTree(t, filepath.Dir(root), map[string]string{"outside.md": "# outside\n"})
			writeTree(t, root, map[string]string{tc.file: tc.doc})
			problems, err := check(root, []string{filepath.FromSlash(tc.file)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestMarkdownFiles: only git-tracked *.md files are checked, at any depth.
func TestMarkdownFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"README.md":        "x",
		"docs/a.md":        "x",
		"docs/notes.txt":   "x",
		"untracked.md":     "x",
		"deep/er/still.md": "x",
	})
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "README.md", "docs", "deep"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	got, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"README.md", filepath.FromSlash("deep/er/still.md"), filepath.FromSlash("docs/a.md")}
	if !slices.Equal(got, want) {
		t.Errorf("markdownFiles = %q, want %q", got, want)
	}
}
