package wire

import (
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// The names of a TransformRun's objects, shared by the webhook (which refuses a source that names
// too many or bad objects), the controller and the agent (which transform them): one code, so what
// the webhook admitted is exactly what the nodes do.

const (
	// PipelineSeparator joins the stages of a pipeline of Transforms, "a>>b".
	PipelineSeparator = ">>"
	// MaxPipelineStages bounds the Transforms of one pipeline: every stage holds a transformer
	// connection and a buffer per object in flight on the node.
	MaxPipelineStages = 8
)

// Limits bound what a source names: how many objects, and the bytes of the names a template
// expands to, together.
type Limits struct{ Objects, Bytes int }

// RunLimits are a TransformRun's.
var RunLimits = Limits{Objects: etlv1alpha1.MaxRunObjects, Bytes: etlv1alpha1.MaxRunTemplateBytes}

// Template is a checked brace template, as bash expands it: a range "{0000..0999}" (zero padding
// kept from the wider bound when either bound has a leading zero), a list "{a,b,c}", several
// groups multiplying in order (the leftmost varies slowest). It holds the template's parts, never
// the names they expand to: its names are made one by one as they are asked for.
type Template struct {
	groups      []group
	count, size int
}

// ParseTemplate parses and checks template t without expanding it into a list. Its errors name
// the problem: unbalanced or nested braces, a range whose end is before its start, more names or
// bytes of names than lim allows (computed from the template's parts, so a template past lim costs
// no more than its own text), and names CheckObject refuses (checked one by one in one buffer).
func ParseTemplate(t string, lim Limits) (Template, error) {
	groups, err := parseTemplate(t)
	if err != nil {
		return Template{}, err
	}
	tmpl := Template{groups: groups}
	if tmpl.count, tmpl.size, err = measure(t, groups, lim); err != nil {
		return Template{}, err
	}
	for name := range tmpl.Names() {
		if err := checkObject(name); err != nil {
			return Template{}, fmt.Errorf("template %q: %w", clip(t), err)
		}
	}
	return tmpl, nil
}

// Len returns how many names the template expands to, repetitions included.
func (t Template) Len() int { return t.count }

// Size returns the bytes of the names the template expands to, together.
func (t Template) Size() int { return t.size }

// Names returns the names the template expands to, in order, repetitions included, each in a
// buffer that the next name overwrites: a caller copies what it keeps. Going through them holds
// one name at a time, never the expansion.
func (t Template) Names() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if len(t.groups) == 0 {
			return // the zero Template
		}
		// An odometer: idx[i] is group i's alternative in the name, starting at mark[i].
		idx, mark := make([]int, len(t.groups)), make([]int, len(t.groups))
		var buf []byte
		fill := func(from int) {
			buf = buf[:mark[from]]
			for i := from; i < len(t.groups); i++ {
				mark[i] = len(buf)
				buf = t.groups[i].appendAt(buf, idx[i])
			}
		}
		for from := 0; from >= 0; {
			fill(from)
			if !yield(buf) {
				return
			}
			// The rightmost group that has a next alternative moves to it; the ones after it
			// start over.
			for from = len(t.groups) - 1; from >= 0; from-- {
				if idx[from]++; idx[from] < t.groups[from].count() {
					break
				}
				idx[from] = 0
			}
		}
	}
}

// All returns the names the template expands to as strings, in order, repetitions included.
func (t Template) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		for name := range t.Names() {
			if !yield(string(name)) {
				return
			}
		}
	}
}

// measure returns how many names groups expand to and their bytes together, computed from the
// groups' counts and sizes, never from the names: it refuses t as soon as either passes lim.
func measure(t string, groups []group, lim Limits) (n, size int, err error) {
	maxN, maxSize := uint64(max(lim.Objects, 0)), uint64(max(lim.Bytes, 0))
	count, bytes := uint64(1), uint64(0)
	for _, g := range groups {
		// count*c > maxN, asked without overflowing (every group has at least one alternative).
		c := uint64(g.count())
		if count > maxN/c {
			return 0, 0, fmt.Errorf("template %q names more than %d objects: split the run, or list the objects", clip(t), lim.Objects)
		}
		// Each of the count names so far is followed by each of the c alternatives: the names
		// so far are repeated c times, and the alternatives (s bytes together) count times.
		s, ok := g.size(maxSize)
		repeated, ok1 := mulWithin(bytes, c, maxSize)
		added, ok2 := mulWithin(s, count, maxSize)
		if !ok || !ok1 || !ok2 || repeated+added > maxSize {
			return 0, 0, fmt.Errorf("template %q names more than %d bytes of object names: split the run, or shorten the names", clip(t), lim.Bytes)
		}
		count, bytes = count*c, repeated+added
	}
	return int(count), int(bytes), nil
}

// mulWithin returns a*b, and whether it is at most limit.
func mulWithin(a, b, limit uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi == 0 && lo <= limit
}

// clip keeps templates quoted in errors short: messages end up in admission answers and events.
func clip(t string) string {
	const keep = 64
	if len(t) <= keep {
		return t
	}
	return t[:keep] + "…"
}

// group is one part of a template: a literal (one alternative), a list, or a numeric range.
type group struct {
	alts    []string // a literal or a list
	lo, hi  uint64   // a range, when alts is nil
	width   int      // zero padding of a range
	isRange bool
}

func (g group) count() int {
	if !g.isRange {
		return len(g.alts)
	}
	return int(g.hi - g.lo + 1) // parseRange bounded it
}

// size returns the bytes of the group's alternatives together, and false when they are more than
// limit. It counts a range's names by their number of digits, never one by one.
func (g group) size(limit uint64) (uint64, bool) {
	if !g.isRange {
		s := 0
		for _, a := range g.alts {
			s += len(a)
		}
		return uint64(s), uint64(s) <= limit
	}
	var s uint64
	for lo, d := g.lo, digits(g.lo); ; d++ {
		// [lo, end] are the numbers of d digits in the range.
		end := g.hi
		if d < maxDigits {
			end = min(end, pow10(d)-1)
		}
		b, ok := mulWithin(end-lo+1, uint64(max(d, g.width)), limit)
		if !ok || s+b > limit {
			return 0, false
		}
		s += b
		if end == g.hi {
			return s, true
		}
		lo = end + 1
	}
}

// maxDigits is the number of digits of the largest uint64.
const maxDigits = 20

// digits returns the number of decimal digits of v.
func digits(v uint64) int {
	d := 1
	for ; v >= 10; v /= 10 {
		d++
	}
	return d
}

// pow10 returns 10**d, for d < maxDigits.
func pow10(d int) uint64 {
	p := uint64(1)
	for range d {
		p *= 10
	}
	return p
}

// appendAt appends the group's alternative k to buf.
func (g group) appendAt(buf []byte, k int) []byte {
	if !g.isRange {
		return append(buf, g.alts[k]...)
	}
	v := g.lo + uint64(k)
	for range g.width - digits(v) {
		buf = append(buf, '0')
	}
	return strconv.AppendUint(buf, v, 10)
}

// parseTemplate splits t into literals and brace groups.
func parseTemplate(t string) ([]group, error) {
	var groups []group
	for rest := t; rest != ""; {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			groups = append(groups, group{alts: []string{rest}})
			break
		}
		if rest[open] == '}' {
			return nil, fmt.Errorf("template %q: a } closes no {; balance the braces", clip(t))
		}
		if open > 0 {
			groups = append(groups, group{alts: []string{rest[:open]}})
		}
		end := strings.IndexAny(rest[open+1:], "{}")
		if end < 0 {
			return nil, fmt.Errorf("template %q: a { is never closed; balance the braces", clip(t))
		}
		if rest[open+1+end] == '{' {
			return nil, fmt.Errorf("template %q: nested braces are not supported; write the names as one level of groups", clip(t))
		}
		g, err := parseGroup(rest[open+1 : open+1+end])
		if err != nil {
			return nil, fmt.Errorf("template %q: %w", clip(t), err)
		}
		groups = append(groups, g)
		rest = rest[open+1+end+1:]
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("template: %w", ErrNoObject)
	}
	return groups, nil
}

// parseGroup reads the inside of braces: a list "a,b" or a range "0..9".
func parseGroup(in string) (group, error) {
	if strings.Contains(in, ",") {
		return group{alts: strings.Split(in, ",")}, nil
	}
	from, to, ok := strings.Cut(in, "..")
	if !ok {
		return group{}, fmt.Errorf("{%s} is neither a range {0..9} nor a list {a,b}", clip(in))
	}
	lo, err1 := parseBound(from)
	hi, err2 := parseBound(to)
	if err := errors.Join(err1, err2); err != nil {
		return group{}, fmt.Errorf("range {%s}: %w", clip(in), err)
	}
	if hi < lo {
		return group{}, fmt.Errorf("range {%s} ends before it starts; write it from the lower bound up", clip(in))
	}
	if hi-lo >= uint64(maxInt) {
		return group{}, fmt.Errorf("range {%s} is too large; split the run", clip(in))
	}
	g := group{lo: lo, hi: hi, isRange: true}
	// bash pads every name to the wider bound when either bound is written with a leading zero.
	if leadingZero(from) || leadingZero(to) {
		g.width = max(len(from), len(to))
	}
	return g, nil
}

const maxInt = int(^uint(0) >> 1)

func leadingZero(s string) bool { return len(s) > 1 && s[0] == '0' }

// parseBound reads a range's bound: digits only, as bash's letters and negative numbers have no
// use in object names.
func parseBound(s string) (uint64, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("bound %q is not a non-negative integer", clip(s))
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bound %q is too large", clip(s))
	}
	return v, nil
}

// Objects are the checked objects of an objects or template source (SourceObjects). They hold the
// source's list or template, never a template's expansion.
type Objects struct {
	list []string
	tmpl Template
}

// SourceObjects checks an objects or template source and returns its objects. It refuses a prefix
// source (whose objects are found by walking the prefix on each node), more than lim.Objects
// objects, a template past lim and names CheckObject refuses.
func SourceObjects(src etlv1alpha1.RunSource, lim Limits) (Objects, error) {
	switch {
	case len(src.Objects) > 0:
		if len(src.Objects) > lim.Objects {
			return Objects{}, fmt.Errorf("%d objects: at most %d are allowed; split the run", len(src.Objects), lim.Objects)
		}
		for i, o := range src.Objects {
			if err := CheckObject(o); err != nil {
				return Objects{}, fmt.Errorf("objects[%d]: %w", i, err)
			}
		}
		return Objects{list: src.Objects}, nil
	case src.Template != "":
		tmpl, err := ParseTemplate(src.Template, lim)
		return Objects{tmpl: tmpl}, err
	default:
		return Objects{}, errors.New("the source names no objects or template; a prefix source is walked on each node")
	}
}

// Names returns the objects' names in order, repetitions included, each in a buffer that the next
// name overwrites (a caller copies what it keeps): to check them without a copy each.
func (o Objects) Names() iter.Seq[[]byte] {
	if o.list == nil {
		return o.tmpl.Names()
	}
	return func(yield func([]byte) bool) {
		var buf []byte
		for _, name := range o.list {
			if buf = append(buf[:0], name...); !yield(buf) {
				return
			}
		}
	}
}

// All returns the objects, each once, in order. A template's names are made as the iteration
// goes, and the names given so far are held (to skip repetitions) only until it ends.
func (o Objects) All() iter.Seq[string] {
	names := o.tmpl.All()
	if o.list != nil {
		names = slices.Values(o.list)
	}
	return func(yield func(string) bool) {
		seen := map[string]struct{}{}
		for name := range names {
			if _, dup := seen[name]; dup {
				continue
			}
			seen[name] = struct{}{}
			if !yield(name) {
				return
			}
		}
	}
}

// ResultName returns the destination name of source object object: for a prefix source, the
// object's name relative to the source's prefix under the destination's prefix; for objects and
// template sources, the object's name under the destination's prefix. With src.Extension set, ok
// is false for objects not ending in it (and the extension is replaced by dst.ToExtension when
// that is set); ok is false as well for an object outside a prefix source.
func ResultName(src etlv1alpha1.RunSource, dst etlv1alpha1.RunDestination, object string) (name string, ok bool) {
	rel := object
	if src.Prefix != "" {
		if rel, ok = strings.CutPrefix(object, strings.TrimSuffix(src.Prefix, "/")+"/"); !ok || rel == "" {
			return "", false
		}
	}
	if src.Extension != "" {
		stem, found := strings.CutSuffix(rel, src.Extension)
		if !found {
			return "", false
		}
		if dst.ToExtension != "" {
			rel = stem + dst.ToExtension
		}
	}
	return strings.TrimSuffix(dst.Prefix, "/") + "/" + rel, true
}

// SplitPipeline splits a pipeline "a>>b" into its stages, the one rule of the agent, the webhook
// and the manager. It returns at most MaxPipelineStages+1 stages: a caller sees that a pipeline is
// too long without allocating a stage for every separator of a hostile one.
func SplitPipeline(pipeline string) []string {
	return strings.SplitN(pipeline, PipelineSeparator, MaxPipelineStages+1)
}
