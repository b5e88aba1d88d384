package cluster

import "testing"

func TestProviderName(t *testing.T) {
	for name, tc := range map[string]struct {
		env     string
		engine  bool
		want    string
		wantErr bool
	}{
		"engine answers":                 {engine: true, want: "kind"},
		"no engine":                      {engine: false, want: "local"},
		"forced local despite an engine": {env: "local", engine: true, want: "local"},
		"forced kind without an engine":  {env: "kind", engine: false, want: "kind"},
		"unknown provider":               {env: "minikube", wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := providerName(tc.env, func() bool { return tc.engine })
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("providerName(%q) = %q, %v; want %q (error: %v)", tc.env, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
