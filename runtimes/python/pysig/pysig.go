// Package pysig reads, without running Python, which of the object's name and the request's args
// the Python runtime passes to a `code` Transform's function: the runtime (worker.py, plan)
// decides by the function's signature, and clients such as `kubectl etl run --args` need the
// same answer before sending args that would be dropped. It is a plain function over the source
// text, a small reader of one `def` line, tested against the runtime itself
// (runtimes/python's TestSignatures).
package pysig

import (
	"regexp"
	"strings"
)

// Params says what a function takes besides the object's bytes.
type Params struct {
	// Path: the object's name (second positional parameter, *rest, or keyword-only path).
	Path bool
	// Args: the request's args (third positional parameter, *rest, or keyword-only etl_args).
	Args bool
}

// Read finds the top-level `def function(...)` of source and reads its parameters as the runtime
// does. ok is false when it cannot tell: no such def (the name bound by an assignment, an import
// or a class), a decorated one, or a name bound again after it; only Python knows then.
func Read(source, function string) (p Params, ok bool) {
	def := regexp.MustCompile(`^(?:async\s+)?def\s+` + regexp.QuoteMeta(function) + `\s*\(`)
	rebind := regexp.MustCompile(`^(?:class\s+` + regexp.QuoteMeta(function) + `\b|` + regexp.QuoteMeta(function) + `\s*(?:=|:)|(?:from|import)\s.*\b` + regexp.QuoteMeta(function) + `\b)`)
	lines := strings.SplitAfter(source, "\n")
	found := -1
	var at int // offset of the last def's "("
	offset := 0
	prev := ""
	for i, line := range lines {
		switch {
		case def.MatchString(line):
			if strings.HasPrefix(prev, "@") {
				return Params{}, false
			}
			found, at = i, offset+def.FindStringIndex(line)[1]-1
		case rebind.MatchString(line):
			found = -1 // bound to something else after, or instead of, a def
		}
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") && line[0] != ' ' && line[0] != '\t' {
			prev = t
		}
		offset += len(line)
	}
	if found < 0 {
		return Params{}, false
	}
	params, ok := split(source[at+1:])
	if !ok {
		return Params{}, false
	}
	return classify(params), true
}

// split returns the comma-separated parameters up to the ")" closing the list, skipping brackets,
// strings and comments within it.
func split(s string) ([]string, bool) {
	var params []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			depth++
		case ']', '}':
			depth--
		case ')':
			if depth == 0 {
				return append(params, s[start:i]), true
			}
			depth--
		case ',':
			if depth == 0 {
				params = append(params, s[start:i])
				start = i + 1
			}
		case '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case '\'', '"':
			quote := string(c)
			if strings.HasPrefix(s[i:], strings.Repeat(quote, 3)) {
				quote = strings.Repeat(quote, 3)
			}
			end := closing(s[i+len(quote):], quote)
			if end < 0 {
				return nil, false
			}
			i += len(quote) + end + len(quote) - 1
		}
	}
	return nil, false
}

// closing is the index of the quote ending a string, skipping escaped characters; -1 if none.
func closing(s, quote string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], quote) {
			return i
		}
	}
	return -1
}

// classify applies the runtime's rules (worker.py, plan) to the parameters' texts.
func classify(params []string) Params {
	positional, rest, keywordOnly := 0, false, false
	var p Params
	for _, text := range params {
		name := strings.TrimSpace(text)
		if i := strings.IndexAny(name, ":="); i >= 0 {
			name = strings.TrimSpace(name[:i]) // drop the annotation and the default
		}
		switch {
		case name == "" || name == "/":
		case name == "*":
			keywordOnly = true
		case strings.HasPrefix(name, "**"):
		case strings.HasPrefix(name, "*"):
			rest, keywordOnly = true, true
		case keywordOnly:
			p.Path = p.Path || name == "path"
			p.Args = p.Args || name == "etl_args"
		default:
			positional++
		}
	}
	p.Path = p.Path || rest || positional >= 2
	p.Args = p.Args || rest || positional >= 3
	return p
}
