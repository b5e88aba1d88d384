package wire

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestControlRoundTrip(t *testing.T) {
	cases := map[string]struct {
		c    Control
		want string
	}{
		"object only": {c: Control{Object: "a/b c%"}, want: `{"object":"a/b c%"}`},
		"all":         {c: Control{Object: "o", Args: "decompress", FQN: "/data/o"}, want: `{"object":"o","args":"decompress","fqn":"/data/o"}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := MarshalControl(tc.c)
			if err != nil || string(b) != tc.want {
				t.Fatalf("MarshalControl = %s, %v; want %s", b, err, tc.want)
			}
			got, err := ParseControl(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.c, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseControl(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    Control
		wantErr bool
	}{
		"unknown fields ignored": {in: `{"object":"o","x":1}`, want: Control{Object: "o"}},
		"missing object parses":  {in: `{"args":"a"}`, want: Control{Args: "a"}},
		"not json":               {in: `object=o`, wantErr: true},
		"wrong type":             {in: `{"object":1}`, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseControl([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseControl(%s) error = %v, want error %v", tc.in, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    string
		wantErr bool
	}{
		"message":     {in: `{"error":"boom \"x\""}`, want: `boom "x"`},
		"empty error": {in: `{"error":""}`, wantErr: true},
		"no error":    {in: `{"object":"o"}`, wantErr: true},
		"not json":    {in: `boom`, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseError([]byte(tc.in))
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("ParseError(%s) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
	if got, err := ParseError(MarshalError(`quote " and \ slash`)); err != nil || got != `quote " and \ slash` {
		t.Errorf("MarshalError round trip = %q, %v", got, err)
	}
}
