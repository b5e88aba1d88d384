package proc

import (
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	for name, tc := range map[string]struct {
		size   int
		writes []string
		want   string
	}{
		"nothing":         {size: 8, want: ""},
		"fits":            {size: 8, writes: []string{"ab", "cd\n"}, want: "abcd"},
		"exactly":         {size: 4, writes: []string{"abcd"}, want: "abcd"},
		"cut":             {size: 4, writes: []string{"abc", "def"}, want: "…cdef"},
		"one large write": {size: 3, writes: []string{strings.Repeat("x", 100) + "end"}, want: "…end"},
		"cut in a rune":   {size: 4, writes: []string{"aé€"}, want: "…€"},
	} {
		t.Run(name, func(t *testing.T) {
			tail := &Tail{Size: tc.size}
			for _, w := range tc.writes {
				if n, err := tail.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := tail.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			tail.Reset()
			if got := tail.String(); got != "" {
				t.Errorf("after Reset: %q", got)
			}
		})
	}
}
