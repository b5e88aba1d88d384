package wire

import (
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestObjectTimeoutRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{time.Millisecond, "1"},
		{1500 * time.Microsecond, "2"}, // rounded up: the transformer must not give up first
		{1001 * time.Microsecond, "2"}, // up, not to the nearest
		{time.Nanosecond, "1"},
		{0, "1"},
		{-time.Second, "1"},
		{10 * time.Second, "10000"},
		{v1alpha1.MaxObjectTimeout, "3600000"},
		{MaxObjectTimeout, "28800000"}, // a pipeline of MaxPipelineStages stages of an hour each
	} {
		got := FormatObjectTimeout(tc.d)
		if got != tc.want {
			t.Errorf("FormatObjectTimeout(%v) = %q, want %q", tc.d, got, tc.want)
			continue
		}
		d, err := ParseObjectTimeout(got)
		if err != nil {
			t.Errorf("ParseObjectTimeout(%q): %v", got, err)
		} else if d < tc.d {
			t.Errorf("ParseObjectTimeout(FormatObjectTimeout(%v)) = %v, shorter than what was left", tc.d, d)
		}
	}
}

func TestObjectTimeoutOutOfBoundsNamesTheHeader(t *testing.T) {
	for _, v := range []string{"", "0", "-5", "1.5", "10s", "28800001", "99999999999999999999", strings.Repeat("9", 4096)} {
		_, err := ParseObjectTimeout(v)
		if err == nil {
			t.Errorf("ParseObjectTimeout(%.20q) accepted", v)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, HeaderObjectTimeout) || !strings.Contains(msg, "28800000") || len(msg) > 200 {
			t.Errorf("ParseObjectTimeout(%.20q) = %q: want the header, the bound, and a short message", v, msg)
		}
	}
}
