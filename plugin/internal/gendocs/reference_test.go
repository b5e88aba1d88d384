package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

func TestPageFile(t *testing.T) {
	for in, want := range map[string]string{
		"kubectl_mxjob.md":                   "kubectl-mxjob.md",
		"kubectl_mxjob_submit.md":            "kubectl-mxjob_submit.md",
		"kubectl_etl_completion_install.md":  "kubectl-etl_completion_install.md",
		"kubectl_etl_kubectl_something.md":   "kubectl-etl_kubectl_something.md",
		"other_command.md":                   "other_command.md",
		"kubectlish_command_not_a_plugin.md": "kubectlish_command_not_a_plugin.md",
	} {
		if got := pageFile(in); got != want {
			t.Errorf("pageFile(%q) = %q, want %q", in, got, want)
		}
	}
}

// testRoot is a plugin root as cli.NewRoot makes it: named kubectl-demo, shown as "kubectl demo".
func testRoot() *cobra.Command {
	root := &cobra.Command{Use: "kubectl-demo", Short: "Demo plugin",
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl demo"}}
	root.PersistentFlags().String("cache-dir", "/home/ada/.kube/cache", "Default cache directory")
	run := func(*cobra.Command, []string) {}
	sub := &cobra.Command{Use: "sub", Short: "A command with one below", Run: run}
	sub.Flags().String("dir", "/home/adamant", "Not in the home directory, only alike")
	sub.AddCommand(&cobra.Command{Use: "leaf NAME", Short: "The leaf", Run: run})
	root.AddCommand(sub, &cobra.Command{Use: "hidden", Hidden: true, Run: run})
	return root
}

func TestWriteReference(t *testing.T) {
	dir := t.TempDir()
	// A page of a command that is gone, and a file that is not a page, from an earlier run.
	for _, f := range []string{"kubectl-demo_gone.md", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := testRoot()
	portableDefaults(root, "/home/ada/")
	if err := writeReference(dir, []*cobra.Command{root}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	want := []string{"README.md", "kubectl-demo.md", "kubectl-demo_sub.md", "kubectl-demo_sub_leaf.md", "notes.txt"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}

	index := read(t, dir, "README.md")
	for _, line := range []string{
		"- [kubectl demo](kubectl-demo.md) — Demo plugin\n",
		"  - [kubectl demo sub](kubectl-demo_sub.md) — A command with one below\n",
		"    - [kubectl demo sub leaf](kubectl-demo_sub_leaf.md) — The leaf\n",
	} {
		if !strings.Contains(index, line) {
			t.Errorf("index lacks %q:\n%s", line, index)
		}
	}

	sub := read(t, dir, "kubectl-demo_sub.md")
	for _, s := range []string{
		"## kubectl demo sub\n",
		"kubectl demo sub [flags]",
		"* [kubectl demo](kubectl-demo.md)",
		"* [kubectl demo sub leaf](kubectl-demo_sub_leaf.md)",
		`(default "$HOME/.kube/cache")`,
		`(default "/home/adamant")`,
	} {
		if !strings.Contains(sub, s) {
			t.Errorf("kubectl-demo_sub.md lacks %q:\n%s", s, sub)
		}
	}
	for _, page := range files {
		if body := read(t, dir, page); strings.Contains(body, "Auto generated") {
			t.Errorf("%s carries a generation date:\n%s", page, body)
		}
	}
}

// The real plugins: every command has its page, the pages name commands as the user types
// them, and two runs write the same bytes.
func TestPluginReferenceIsStable(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if err := run(dir); err != nil {
			t.Fatal(err)
		}
	}
	pages, err := filepath.Glob(filepath.Join(a, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pages {
		names = append(names, filepath.Base(p))
		if x, y := read(t, a, filepath.Base(p)), read(t, b, filepath.Base(p)); x != y {
			t.Errorf("%s differs between two runs", filepath.Base(p))
		}
	}
	for _, want := range []string{"kubectl-mxjob.md", "kubectl-mxjob_submit.md", "kubectl-mxjob_completion_install.md",
		"kubectl-etl.md", "kubectl-etl_init_code.md", "kubectl-etl_object.md"} {
		if !slices.Contains(names, want) {
			t.Errorf("no page %s among %v", want, names)
		}
	}
	if s := read(t, a, "kubectl-etl_run.md"); !strings.Contains(s, "kubectl etl run NAME --dst PREFIX (--src PREFIX | --list OBJECTS | --template TEMPLATE)") {
		t.Errorf("kubectl-etl_run.md does not show the usage as typed:\n%s", s)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
