package main

import (
	"strings"
	"testing"
	"time"
)

func TestReplaceBlock(t *testing.T) {
	doc := "# Benchmarks\n\n<!-- BEGIN cluster -->\nold table\n<!-- END cluster -->\n\n<!-- BEGIN bench -->\nkept\n<!-- END bench -->\n"
	got, err := replaceBlock([]byte(doc), "cluster", "new table\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Benchmarks\n\n<!-- BEGIN cluster -->\nnew table\n<!-- END cluster -->\n\n<!-- BEGIN bench -->\nkept\n<!-- END bench -->\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := replaceBlock([]byte(doc), "missing", "x"); err == nil || !strings.Contains(err.Error(), "BEGIN missing") {
		t.Errorf("a missing block: %v, want the marker named", err)
	}
	if _, err := replaceBlock([]byte("<!-- BEGIN cluster -->\nx\n"), "cluster", "x"); err == nil || !strings.Contains(err.Error(), "END cluster") {
		t.Errorf("an unended block: %v", err)
	}
}

func TestProvenanceSaysWhenAndWhere(t *testing.T) {
	p := provenance(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	for _, want := range []string{"2026-11-24 09:00 UTC", "CPUs", "go1."} {
		if !strings.Contains(p, want) {
			t.Errorf("provenance %q lacks %q", p, want)
		}
	}
}
