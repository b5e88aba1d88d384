package wire

import (
	"strings"
	"testing"
)

func TestRunRequestValidate(t *testing.T) {
	cases := map[string]struct {
		req         RunRequest
		wantErr     string // a part of the error; "" for valid
		wantSrc     string
		wantWorkers int
	}{
		"defaults":              {req: RunRequest{Src: "raw/", Dst: "out"}, wantSrc: "raw", wantWorkers: RunDefaultWorkers},
		"nested dirs":           {req: RunRequest{Src: "a/raw", Dst: "a/out", Workers: 8}, wantSrc: "a/raw", wantWorkers: 8},
		"sibling with a prefix": {req: RunRequest{Src: "raw", Dst: "raw2"}, wantSrc: "raw", wantWorkers: RunDefaultWorkers},
		"no src":                {req: RunRequest{Dst: "out"}, wantErr: `src ""`},
		"root as src":           {req: RunRequest{Src: ".", Dst: "out"}, wantErr: "not the root itself"},
		"absolute dst":          {req: RunRequest{Src: "raw", Dst: "/tmp/out"}, wantErr: "dst: object \"/tmp/out\" is an absolute path"},
		"escaping src":          {req: RunRequest{Src: "../etc", Dst: "out"}, wantErr: "src: object \"../etc\" contains .."},
		"unclean dst":           {req: RunRequest{Src: "raw", Dst: "out//x"}, wantErr: `write it as "out/x"`},
		"same dirs":             {req: RunRequest{Src: "raw", Dst: "raw/"}, wantErr: "overlaps"},
		"dst inside src":        {req: RunRequest{Src: "raw", Dst: "raw/out"}, wantErr: "overlaps"},
		"src inside dst":        {req: RunRequest{Src: "out/raw", Dst: "out"}, wantErr: "overlaps"},
		"negative workers":      {req: RunRequest{Src: "raw", Dst: "out", Workers: -1}, wantErr: "workers -1: must be between 1 and 64"},
		"too many workers":      {req: RunRequest{Src: "raw", Dst: "out", Workers: 65}, wantErr: "workers 65"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := tc.req
			err := req.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Validate = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			if req.Src != tc.wantSrc || req.Workers != tc.wantWorkers {
				t.Errorf("after Validate src %q workers %d, want %q %d", req.Src, req.Workers, tc.wantSrc, tc.wantWorkers)
			}
		})
	}
}
