package wire

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// n is a limit of count objects, and bytes enough for the names of the tests.
func n(count int) Limits { return Limits{Objects: count, Bytes: 1 << 20} }

func TestParseTemplate(t *testing.T) {
	cases := map[string]struct {
		template string
		lim      Limits
		want     []string
		wantErr  string // a part of the error; "" for valid
	}{
		"literal":             {template: "a/b.tar", lim: n(10), want: []string{"a/b.tar"}},
		"padded range":        {template: "shard-{0000..0003}.tar", lim: n(10), want: []string{"shard-0000.tar", "shard-0001.tar", "shard-0002.tar", "shard-0003.tar"}},
		"padding of wider":    {template: "{08..010}", lim: n(10), want: []string{"008", "009", "010"}},
		"padding from end":    {template: "{1..03}", lim: n(10), want: []string{"01", "02", "03"}},
		"no padding":          {template: "{8..10}", lim: n(10), want: []string{"8", "9", "10"}},
		"zero is not padding": {template: "{0..2}", lim: n(10), want: []string{"0", "1", "2"}},
		"one-name range":      {template: "x{5..5}", lim: n(1), want: []string{"x5"}},
		"list":                {template: "{a,b,c}.jpg", lim: n(10), want: []string{"a.jpg", "b.jpg", "c.jpg"}},
		"empty list item":     {template: "a{,b}", lim: n(10), want: []string{"a", "ab"}},
		"groups multiply":     {template: "{x,y}/{1..2}-{a,b}", lim: n(8), want: []string{"x/1-a", "x/1-b", "x/2-a", "x/2-b", "y/1-a", "y/1-b", "y/2-a", "y/2-b"}},
		"exactly max":         {template: "{0..9}", lim: n(10), want: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}},
		"duplicates kept":     {template: "{a,a}", lim: n(10), want: []string{"a", "a"}},
		"one past max":        {template: "{0..10}", lim: n(10), wantErr: "more than 10 objects"},
		"product past max":    {template: "{0..9}{0..9}{0..9}", lim: n(999), wantErr: "more than 999 objects"},
		"huge product":        {template: strings.Repeat("{0..4294967295}", 4), lim: n(100000), wantErr: "more than 100000 objects"},
		"huge range":          {template: "{0..18446744073709551615}", lim: n(100000), wantErr: "too large"},
		"bound overflows":     {template: "{0..99999999999999999999}", lim: n(10), wantErr: "too large"},
		"unclosed":            {template: "shard-{0..9.tar", lim: n(10), wantErr: "never closed"},
		"stray close":         {template: "shard-0..9}.tar", lim: n(10), wantErr: "closes no {"},
		"nested":              {template: "{a,{b,c}}", lim: n(10), wantErr: "nested braces"},
		"backwards range":     {template: "{9..0}", lim: n(10), wantErr: "ends before it starts"},
		"letters":             {template: "{a..z}", lim: n(100), wantErr: `bound "a" is not a non-negative integer`},
		"negative":            {template: "{-1..3}", lim: n(100), wantErr: `bound "-1"`},
		"step":                {template: "{0..9..2}", lim: n(100), wantErr: `bound "9..2"`},
		"neither":             {template: "x{ab}", lim: n(100), wantErr: "neither a range"},
		"empty group":         {template: "x{}", lim: n(100), wantErr: "neither a range"},
		"empty":               {template: "", lim: n(10), wantErr: "no object name"},
		"empty name":          {template: "{,a}", lim: n(10), wantErr: "no object name"},
		"absolute":            {template: "/{a,b}", lim: n(10), wantErr: "absolute path"},
		"dot-dot across":      {template: "a/{.,b}./c", lim: n(10), wantErr: "contains .."},
		"too long":            {template: strings.Repeat("a", MaxObjectName) + "{0..1}", lim: n(10), wantErr: "too long"},
		"zero max":            {template: "a", lim: n(0), wantErr: "more than 0 objects"},
		// bytes: ac, add, bbc, bbdd
		"exactly the bytes":   {template: "{a,bb}{c,dd}", lim: Limits{Objects: 4, Bytes: 12}, want: []string{"ac", "add", "bbc", "bbdd"}},
		"one byte past":       {template: "{a,bb}{c,dd}", lim: Limits{Objects: 4, Bytes: 11}, wantErr: "more than 11 bytes of object names"},
		"range bytes":         {template: "{8..10}", lim: Limits{Objects: 3, Bytes: 4}, want: []string{"8", "9", "10"}},
		"range one byte past": {template: "{8..10}", lim: Limits{Objects: 3, Bytes: 3}, wantErr: "more than 3 bytes"},
		"padded range bytes":  {template: "{08..010}", lim: Limits{Objects: 3, Bytes: 8}, wantErr: "more than 8 bytes"},
		"literal past":        {template: "abc", lim: Limits{Objects: 1, Bytes: 2}, wantErr: "more than 2 bytes"},
		"zero bytes":          {template: "a", lim: Limits{Objects: 1}, wantErr: "more than 0 bytes"},
		"huge padding":        {template: "{" + strings.Repeat("0", 1000) + "1..9}{0..9999}", lim: RunLimits, wantErr: "more than 8388608 bytes"},
		"widest range":        {template: "{18446744073709451615..18446744073709551615}", lim: RunLimits, wantErr: "more than 100000 objects"},
		"range to the top":    {template: "{18446744073709551614..18446744073709551615}", lim: RunLimits, want: []string{"18446744073709551614", "18446744073709551615"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := expand(tc.template, tc.lim)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("expand(%q, %+v) = %d names, %v; want an error containing %q", tc.template, tc.lim, len(got), err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("expand(%q, %+v) = %v", tc.template, tc.lim, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("expand(%q) (-want +got):\n%s", tc.template, diff)
			}
			tmpl, _ := ParseTemplate(tc.template, tc.lim)
			if tmpl.Len() != len(got) || tmpl.Size() != bytesOf(got) {
				t.Errorf("ParseTemplate(%q) counts %d names of %d bytes; the expansion has %d of %d", tc.template, tmpl.Len(), tmpl.Size(), len(got), bytesOf(got))
			}
		})
	}
}

// expand returns the names template t expands to as a list: what the webhook and the agents never
// hold.
func expand(t string, lim Limits) ([]string, error) {
	tmpl, err := ParseTemplate(t, lim)
	if err != nil {
		return nil, err
	}
	return slices.Collect(tmpl.All()), nil
}

// bytesOf returns the bytes of names together.
func bytesOf(names []string) int {
	n := 0
	for _, s := range names {
		n += len(s)
	}
	return n
}

// TestTemplateIssueExample: the issue's template names a thousand shards, in order.
func TestTemplateIssueExample(t *testing.T) {
	got, err := expand("shard-{0000..0999}.tar", RunLimits)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1000 || got[0] != "shard-0000.tar" || got[999] != "shard-0999.tar" || got[10] != "shard-0010.tar" {
		t.Errorf("ExpandTemplate = %d names, first %q, 11th %q, last %q", len(got), got[0], got[10], got[len(got)-1])
	}
}

// TestTemplateBytesAreCountedFromTheParts: a 1 KiB template of 100000 names of 1 KiB (100 MiB),
// within the count bound, is refused by the bytes bound with an error naming it, before a single
// name is expanded; the largest template allowed is checked name by name in one buffer.
func TestTemplateBytesAreCountedFromTheParts(t *testing.T) {
	const maxAlloc = 64 << 10
	cases := map[string]struct {
		template        string
		wantLen, wantSz int
		wantErr         string
	}{
		"1 KiB template of 100 MiB": {
			template: strings.Repeat("a", 1010) + "{00000..99999}",
			wantErr:  "names more than 8388608 bytes of object names: split the run, or shorten the names",
		},
		"largest allowed": {template: "data/" + strings.Repeat("n", 73) + "{00000..99999}", wantLen: 100000, wantSz: 8300000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var (
				tmpl Template
				err  error
			)
			alloc := allocated(func() { tmpl, err = ParseTemplate(tc.template, RunLimits) })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("ParseTemplate of %d bytes = %d names, %v; want an error containing %q", len(tc.template), tmpl.Len(), err, tc.wantErr)
				}
			} else if err != nil || tmpl.Len() != tc.wantLen || tmpl.Size() != tc.wantSz {
				t.Errorf("ParseTemplate = %d names of %d bytes, %v; want %d of %d", tmpl.Len(), tmpl.Size(), err, tc.wantLen, tc.wantSz)
			}
			if alloc > maxAlloc {
				t.Errorf("ParseTemplate of %d bytes allocated %d bytes; want at most %d", len(tc.template), alloc, maxAlloc)
			}
		})
	}
}

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestTemplateErrorsStayShort: errors quote at most a clipped template, as they reach admission
// answers and events.
func TestTemplateErrorsStayShort(t *testing.T) {
	for _, tmpl := range []string{strings.Repeat("x", 1000) + "{", "{" + strings.Repeat("9", 1000) + "..0}", strings.Repeat("{0..9}", 200)} {
		_, err := expand(tmpl, n(100))
		if err == nil || len(err.Error()) > 300 {
			t.Errorf("ExpandTemplate of %d bytes: error %d bytes long: %v", len(tmpl), len(fmt.Sprint(err)), err)
		}
	}
}

func TestSourceObjects(t *testing.T) {
	cases := map[string]struct {
		src       etlv1alpha1.RunSource
		lim       Limits
		want      []string // All: each object once
		wantNames []string // Names: repetitions included
		wantErr   string
	}{
		"objects":             {src: etlv1alpha1.RunSource{Objects: []string{"b", "a", "b"}}, lim: n(3), want: []string{"b", "a"}, wantNames: []string{"b", "a", "b"}},
		"template":            {src: etlv1alpha1.RunSource{Template: "{a,b,a}"}, lim: n(3), want: []string{"a", "b"}, wantNames: []string{"a", "b", "a"}},
		"template past bytes": {src: etlv1alpha1.RunSource{Template: "{a,b,a}"}, lim: Limits{Objects: 3, Bytes: 2}, wantErr: "more than 2 bytes"},
		"too many objects":    {src: etlv1alpha1.RunSource{Objects: []string{"a", "b"}}, lim: n(1), wantErr: "2 objects: at most 1"},
		"bad object":          {src: etlv1alpha1.RunSource{Objects: []string{"a", "../b"}}, lim: n(10), wantErr: "objects[1]: object \"../b\" contains .."},
		"too large template":  {src: etlv1alpha1.RunSource{Template: "{1..3}"}, lim: n(2), wantErr: "more than 2"},
		"prefix":              {src: etlv1alpha1.RunSource{Prefix: "raw"}, lim: n(10), wantErr: "prefix source"},
		"extension no filter": {src: etlv1alpha1.RunSource{Objects: []string{"a.wav"}, Extension: ".flac"}, lim: n(10), want: []string{"a.wav"}, wantNames: []string{"a.wav"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects, err := SourceObjects(tc.src, tc.lim)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("SourceObjects = %v; want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("SourceObjects = %v", err)
			}
			if diff := cmp.Diff(tc.want, slices.Collect(objects.All())); diff != "" {
				t.Errorf("SourceObjects(...).All() (-want +got):\n%s", diff)
			}
			var names []string
			for name := range objects.Names() {
				names = append(names, string(name))
			}
			if diff := cmp.Diff(tc.wantNames, names); diff != "" {
				t.Errorf("SourceObjects(...).Names() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSourceObjectsKeepsTheSpec: de-duplicating never writes into the spec's own list.
func TestSourceObjectsKeepsTheSpec(t *testing.T) {
	objects := []string{"a", "a", "b"}
	if _, err := SourceObjects(etlv1alpha1.RunSource{Objects: objects}, n(10)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(objects, []string{"a", "a", "b"}) {
		t.Errorf("the source's objects became %q", objects)
	}
}

func TestResultName(t *testing.T) {
	type (
		src = etlv1alpha1.RunSource
		dst = etlv1alpha1.RunDestination
	)
	cases := map[string]struct {
		src    src
		dst    dst
		object string
		want   string // "" for not ok
	}{
		"prefix":                  {src: src{Prefix: "raw"}, dst: dst{Prefix: "out"}, object: "raw/a/b.jpg", want: "out/a/b.jpg"},
		"prefix, trailing slash":  {src: src{Prefix: "raw/"}, dst: dst{Prefix: "out/"}, object: "raw/b.jpg", want: "out/b.jpg"},
		"nested prefix":           {src: src{Prefix: "data/raw"}, dst: dst{Prefix: "data/out"}, object: "data/raw/x", want: "data/out/x"},
		"outside the prefix":      {src: src{Prefix: "raw"}, dst: dst{Prefix: "out"}, object: "raw2/x"},
		"the prefix itself":       {src: src{Prefix: "raw"}, dst: dst{Prefix: "out"}, object: "raw/"},
		"objects":                 {src: src{Objects: []string{"a/b.jpg"}}, dst: dst{Prefix: "out"}, object: "a/b.jpg", want: "out/a/b.jpg"},
		"template":                {src: src{Template: "s-{0..1}"}, dst: dst{Prefix: "out"}, object: "s-1", want: "out/s-1"},
		"extension kept":          {src: src{Prefix: "raw", Extension: ".flac"}, dst: dst{Prefix: "out"}, object: "raw/a.flac", want: "out/a.flac"},
		"extension changed":       {src: src{Prefix: "raw", Extension: ".flac"}, dst: dst{Prefix: "out", ToExtension: ".wav"}, object: "raw/x/a.flac", want: "out/x/a.wav"},
		"only the last extension": {src: src{Objects: []string{"a.flac.flac"}, Extension: ".flac"}, dst: dst{Prefix: "out", ToExtension: ".wav"}, object: "a.flac.flac", want: "out/a.flac.wav"},
		"other extension":         {src: src{Prefix: "raw", Extension: ".flac"}, dst: dst{Prefix: "out", ToExtension: ".wav"}, object: "raw/a.mp3"},
		"extension mid-name":      {src: src{Objects: []string{"a.flac.txt"}, Extension: ".flac"}, dst: dst{Prefix: "out"}, object: "a.flac.txt"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ResultName(tc.src, tc.dst, tc.object)
			if ok != (tc.want != "") || got != tc.want {
				t.Errorf("ResultName(%q) = %q, %v; want %q", tc.object, got, ok, tc.want)
			}
		})
	}
}

// FuzzParseTemplate: any template either fails or expands to at most lim's names and bytes, each
// name one CheckObject accepts. The count and bytes ParseTemplate computes from the template's
// parts are those of the expansion made name by name, and of the list of names; a template past
// lim is refused with the bound it passes, as it really does pass it. Parsing never allocates more
// than of the order of the template itself, whatever it expands to.
func FuzzParseTemplate(f *testing.F) {
	for _, seed := range []string{
		"shard-{0000..0999}.tar", "{a,b}/{1..3}", "{9..0}", "{", "}", "{a,{b}}", "/{a,b}", "{.,a}./x", "{,}",
		"x{00..1}y{a,b,c}", "{08..010}", "{1..12}{1..22}", "{18446744073709551610..18446744073709551615}",
		strings.Repeat("a", 1010) + "{00000..99999}", "{" + strings.Repeat("0", 200) + "1..9}{0..99}",
	} {
		f.Add(seed, uint16(100), uint16(1000))
	}
	f.Add("{0..9}{0..9}{0..9}{0..9}", uint16(65535), uint16(65535))
	f.Fuzz(func(t *testing.T, s string, maxObjects, maxBytes uint16) {
		lim := Limits{Objects: int(maxObjects), Bytes: int(maxBytes)}
		var (
			tmpl Template
			err  error
		)
		// The least of two calls: the first in a process can meet a lazy allocation of the runtime
		// or of fmt, of a size that has nothing to do with the template.
		parse := func() { tmpl, err = ParseTemplate(s, lim) }
		if alloc, most := min(allocated(parse), allocated(parse)), uint64(4<<10+64*len(s)); alloc > most {
			t.Fatalf("ParseTemplate of %d bytes (%+v) allocated %d bytes; want at most %d", len(s), lim, alloc, most)
		}
		if err != nil {
			if tmpl.Len() != 0 || tmpl.Size() != 0 {
				t.Fatalf("ParseTemplate(%q) = %d names of %d bytes and error %v", s, tmpl.Len(), tmpl.Size(), err)
			}
			overCount, overBytes := strings.Contains(err.Error(), "objects: split the run"), strings.Contains(err.Error(), "bytes of object names")
			if !overCount && !overBytes {
				return
			}
			// Past a bound: within larger ones, it expands to more than lim.
			if larger, lerr := ParseTemplate(s, Limits{Objects: 1 << 17, Bytes: 1 << 20}); lerr == nil {
				count, size := made(larger)
				if overCount && count <= lim.Objects || overBytes && size <= lim.Bytes {
					t.Fatalf("ParseTemplate(%q, %+v) refused it (%v), but it expands to %d names of %d bytes", s, lim, err, count, size)
				}
			}
			return
		}
		count, size := made(tmpl)
		names := slices.Collect(tmpl.All())
		if tmpl.Len() != count || tmpl.Size() != size || len(names) != count || bytesOf(names) != size {
			t.Fatalf("ParseTemplate(%q) counts %d names of %d bytes; made one by one %d of %d, as a list %d of %d",
				s, tmpl.Len(), tmpl.Size(), count, size, len(names), bytesOf(names))
		}
		if count == 0 || count > lim.Objects || size > lim.Bytes {
			t.Fatalf("ParseTemplate(%q, %+v) = %d names of %d bytes", s, lim, count, size)
		}
		for _, n := range names {
			if err := CheckObject(n); err != nil {
				t.Fatalf("ParseTemplate(%q) named %q: %v", s, n, err)
			}
		}
		if !strings.ContainsAny(s, "{}") && (count != 1 || names[0] != s) {
			t.Fatalf("ParseTemplate(%q) of a literal = %q", s, names)
		}
		objects, err := SourceObjects(etlv1alpha1.RunSource{Template: s}, lim)
		deduped := slices.Collect(objects.All())
		if err != nil || len(deduped) > count || len(deduped) != len(dedupe(names)) {
			t.Fatalf("SourceObjects(%q) = %d names, %v; the template names %d, %d different", s, len(deduped), err, count, len(dedupe(names)))
		}
	})
}

// made returns the count and the bytes of tmpl's names, made one by one.
func made(tmpl Template) (count, size int) {
	for n := range tmpl.Names() {
		count, size = count+1, size+len(n)
	}
	return count, size
}

// dedupe returns names without repetitions.
func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func TestSplitPipeline(t *testing.T) {
	cases := map[string]struct {
		pipeline string
		want     []string
	}{
		"one stage":  {pipeline: "md5", want: []string{"md5"}},
		"two stages": {pipeline: "decode>>md5", want: []string{"decode", "md5"}},
		"empty stage kept for the caller to refuse": {pipeline: "a>>>>b", want: []string{"a", "", "b"}},
		"too many stages stop one past the bound": {
			pipeline: strings.Repeat("a>>", 100) + "a",
			want:     append(slices.Repeat([]string{"a"}, MaxPipelineStages), strings.Repeat("a>>", 100-MaxPipelineStages)+"a"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SplitPipeline(tc.pipeline)); diff != "" {
				t.Errorf("SplitPipeline(%q) (-want +got):\n%s", tc.pipeline, diff)
			}
		})
	}
}
