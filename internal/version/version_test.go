package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	for name, tc := range map[string]struct {
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		"stamped wins over the module": {
			stamped: "v0.1.0", info: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.9"}}, want: "v0.1.0",
		},
		"go install records the module's version": {
			stamped: "dev", info: &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, want: "v0.2.0",
		},
		"a checkout without a stamp": {
			stamped: "dev", info: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, want: "dev",
		},
		"an empty stamp is no stamp": {stamped: "", info: &debug.BuildInfo{}, want: "dev"},
		"no build info":              {stamped: "dev", want: "dev"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := resolve(tc.stamped, tc.info); got != tc.want {
				t.Errorf("resolve(%q) = %q, want %q", tc.stamped, got, tc.want)
			}
		})
	}
}

func TestAsked(t *testing.T) {
	for args, want := range map[string]bool{"--version": true, "-version": true, "--workers": false} {
		if got := Asked([]string{args}); got != want {
			t.Errorf("Asked(%q) = %v, want %v", args, got, want)
		}
	}
	if Asked([]string{"--", "prog", "--version"}) {
		t.Error("Asked took a wrapped command's --version for the shim's")
	}
}
