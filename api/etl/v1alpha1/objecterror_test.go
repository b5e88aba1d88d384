package v1alpha1

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestObjectErrorTruncated(t *testing.T) {
	long := strings.Repeat("é", MaxObjectErrorText) // 2 bytes each: a cut can fall inside one
	cases := map[string]struct {
		in       string
		wantLen  int // in bytes; -1 for unchanged
		wantMark bool
	}{
		"short stays":      {in: "object.bin", wantLen: -1},
		"at the limit":     {in: strings.Repeat("a", MaxObjectErrorText), wantLen: -1},
		"one over is cut":  {in: strings.Repeat("a", MaxObjectErrorText+1), wantLen: MaxObjectErrorText, wantMark: true},
		"multibyte is cut": {in: long, wantLen: MaxObjectErrorText - 1, wantMark: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ObjectError{Object: tc.in, Message: tc.in, Node: "n"}.Truncated()
			for field, v := range map[string]string{"object": got.Object, "message": got.Message} {
				if tc.wantLen < 0 {
					if v != tc.in {
						t.Errorf("%s changed: %d bytes from %d", field, len(v), len(tc.in))
					}
					continue
				}
				if len(v) != tc.wantLen || !utf8.ValidString(v) || strings.HasSuffix(v, "…") != tc.wantMark {
					t.Errorf("%s: %d bytes, valid UTF-8 %v, ends with … %v; want %d bytes, valid, %v",
						field, len(v), utf8.ValidString(v), strings.HasSuffix(v, "…"), tc.wantLen, tc.wantMark)
				}
			}
			if got.Node != "n" {
				t.Errorf("node = %q, want it kept", got.Node)
			}
		})
	}
}
