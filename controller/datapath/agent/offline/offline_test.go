package offline

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		req         Request
		wantErr     string // a part of the error; "" for valid
		wantSrc     string
		wantWorkers int
	}{
		"defaults":              {req: Request{Src: "raw/", Dst: "out"}, wantSrc: "raw", wantWorkers: DefaultWorkers},
		"nested dirs":           {req: Request{Src: "a/raw", Dst: "a/out", Workers: 8}, wantSrc: "a/raw", wantWorkers: 8},
		"sibling with a prefix": {req: Request{Src: "raw", Dst: "raw2"}, wantSrc: "raw", wantWorkers: DefaultWorkers},
		"no src":                {req: Request{Dst: "out"}, wantErr: `src ""`},
		"root as src":           {req: Request{Src: ".", Dst: "out"}, wantErr: "not the root itself"},
		"absolute dst":          {req: Request{Src: "raw", Dst: "/tmp/out"}, wantErr: "dst: object \"/tmp/out\" is an absolute path"},
		"escaping src":          {req: Request{Src: "../etc", Dst: "out"}, wantErr: "src: object \"../etc\" contains .."},
		"unclean dst":           {req: Request{Src: "raw", Dst: "out//x"}, wantErr: `write it as "out/x"`},
		"same dirs":             {req: Request{Src: "raw", Dst: "raw/"}, wantErr: "overlaps"},
		"dst inside src":        {req: Request{Src: "raw", Dst: "raw/out"}, wantErr: "overlaps"},
		"src inside dst":        {req: Request{Src: "out/raw", Dst: "out"}, wantErr: "overlaps"},
		"negative workers":      {req: Request{Src: "raw", Dst: "out", Workers: -1}, wantErr: "workers -1: must be between 1 and 64"},
		"too many workers":      {req: Request{Src: "raw", Dst: "out", Workers: 65}, wantErr: "workers 65"},
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

func TestDestinationAndTempName(t *testing.T) {
	if got := Destination("a/raw", "out", "a/raw/x/y.jpg"); got != "out/x/y.jpg" {
		t.Errorf("Destination = %q, want out/x/y.jpg", got)
	}
	if got := TempName("out/x/y.jpg", "r1"); got != "out/x/.y.jpg.r1.tmp" {
		t.Errorf("TempName = %q, want out/x/.y.jpg.r1.tmp", got)
	}
	if got := TempName("y", "r1"); got != ".y.r1.tmp" {
		t.Errorf("TempName of a top-level name = %q", got)
	}
}
