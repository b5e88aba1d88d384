package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// noSysResource is a bounding set with every capability but CAP_SYS_RESOURCE (24), as in the
// sandboxes this wrapper exists for.
const noSysResource = uint64(0x1fffeffffff)

func TestSpecFile(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		ok   bool
	}{
		{[]string{"--root", "/run/r", "--log", "l.json", "create", "--bundle", "/b", "--pid-file", "p", "id"}, "/b/config.json", true},
		{[]string{"--root=/run/r", "run", "-b", "/b2", "id"}, "/b2/config.json", true},
		{[]string{"create", "id"}, "config.json", true},
		{[]string{"--log-format", "json", "exec", "--process", "/tmp/p.json", "--detach", "id"}, "/tmp/p.json", true},
		{[]string{"exec", "-p=/tmp/q.json", "id"}, "/tmp/q.json", true},
		{[]string{"exec", "id", "sh"}, "", false},
		{[]string{"--root", "/run/r", "start", "id"}, "", false},
		{[]string{"--root", "create", "state", "id"}, "", false}, // "create" is --root's value
	} {
		got, ok := specFile(tc.args)
		if got != tc.want || ok != tc.ok {
			t.Errorf("specFile(%q) = %q, %v; want %q, %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBoundSpecDropsOnlyCapabilitiesOutsideTheBoundingSet(t *testing.T) {
	in := []byte(`{"ociVersion":"1.0.2","process":{"user":{"uid":0},"capabilities":{
		"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE","CAP_NEW_ONE"],"effective":["CAP_SYS_RESOURCE"],
		"permitted":["CAP_SYS_ADMIN","CAP_SYS_RESOURCE"]}},"root":{"path":"rootfs"}}`)
	out, changed, err := boundSpec(in, noSysResource)
	if err != nil || !changed {
		t.Fatalf("boundSpec = changed %v, %v; want a change", changed, err)
	}
	var spec struct {
		OCIVersion string `json:"ociVersion"`
		Process    struct {
			User         map[string]int      `json:"user"`
			Capabilities map[string][]string `json:"capabilities"`
		} `json:"process"`
		Root map[string]string `json:"root"`
	}
	if err := json.Unmarshal(out, &spec); err != nil {
		t.Fatal(err)
	}
	caps := spec.Process.Capabilities
	for set, want := range map[string][]string{
		"bounding": {"CAP_CHOWN", "CAP_NEW_ONE"}, "effective": {}, "permitted": {"CAP_SYS_ADMIN"},
	} {
		if !slices.Equal(caps[set], want) || caps[set] == nil {
			t.Errorf("capabilities.%s = %#v, want %q", set, caps[set], want)
		}
	}
	if _, ok := caps["ambient"]; ok {
		t.Error("an absent set was added")
	}
	if spec.OCIVersion != "1.0.2" || spec.Root["path"] != "rootfs" || spec.Process.User["uid"] != 0 {
		t.Errorf("other fields changed: %s", out)
	}
}

func TestBoundSpecOfAnExecProcessAndOfAFullBoundingSet(t *testing.T) {
	proc := []byte(`{"args":["sh"],"capabilities":{"bounding":["CAP_SYS_RESOURCE","CAP_KILL"]}}`)
	out, changed, err := boundSpec(proc, noSysResource)
	if err != nil || !changed || string(out) != `{"args":["sh"],"capabilities":{"bounding":["CAP_KILL"]}}` {
		t.Errorf("exec process: %s, %v, %v", out, changed, err)
	}
	if out, changed, err := boundSpec(proc, ^uint64(0)); err != nil || changed || string(out) != string(proc) {
		t.Errorf("with every capability bounded the spec must be left as it is: %s, %v, %v", out, changed, err)
	}
	if _, _, err := boundSpec([]byte(`{"process":{"capabilities":{"bounding":"CAP_KILL"}}}`), noSysResource); err == nil {
		t.Error("a malformed capability set was accepted")
	}
}

func TestBoundFileRewritesInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(`{"process":{"capabilities":{"effective":["CAP_SYS_RESOURCE"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := boundFile(path, noSysResource); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != `{"process":{"capabilities":{"effective":[]}}}` {
		t.Errorf("config.json = %s", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left %d files behind, want only config.json", len(entries))
	}
}

func TestReadBounding(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status")
	if err := os.WriteFile(path, []byte("Name:\tx\nCapBnd:\t000001fffeffffff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := readBounding(path); err != nil || got != noSysResource {
		t.Errorf("readBounding = %x, %v", got, err)
	}
	if !allowed("CAP_KILL", noSysResource) || allowed("CAP_SYS_RESOURCE", noSysResource) || !allowed("CAP_FUTURE", 0) {
		t.Error("allowed is wrong")
	}
}
