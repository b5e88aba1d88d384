package mountinfo

import "testing"

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		"/plain":                  "/plain",
		`/with\040space`:          "/with space",
		`/tab\011nl\012bs\134end`: "/tab\tnl\nbs\\end",
		`/not\08octal`:            `/not\08octal`,
		`/short\04`:               `/short\04`,
		`/at-end\040`:             "/at-end ",
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}
