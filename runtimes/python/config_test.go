package python

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigFromEnv(t *testing.T) {
	for name, tc := range map[string]struct {
		env     map[string]string
		want    Config
		wantErr []string
	}{
		"defaults": {
			env:  map[string]string{EnvSource: "def transform(b): return b"},
			want: Config{Source: "def transform(b): return b", Function: "transform"},
		},
		"everything": {
			env:  map[string]string{EnvSource: "s", EnvFunction: "f", EnvDependencies: "numpy\n", EnvChunkSize: " 4096 "},
			want: Config{Source: "s", Function: "f", Dependencies: "numpy\n", ChunkSize: 4096},
		},
		"zero chunk size": {
			env:  map[string]string{EnvSource: "s", EnvChunkSize: "0"},
			want: Config{Source: "s", Function: "transform"},
		},
		"no source":          {env: map[string]string{}, wantErr: []string{EnvSource + " is empty"}},
		"blank source":       {env: map[string]string{EnvSource: " \n"}, wantErr: []string{EnvSource}},
		"negative chunk":     {env: map[string]string{EnvSource: "s", EnvChunkSize: "-1"}, wantErr: []string{EnvChunkSize + `="-1"`}},
		"chunk not a number": {env: map[string]string{EnvSource: "s", EnvChunkSize: "1k"}, wantErr: []string{EnvChunkSize}},
		"both wrong": {
			env:     map[string]string{EnvChunkSize: "x"},
			wantErr: []string{EnvSource, EnvChunkSize},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("ConfigFromEnv = %+v, want an error", got)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
