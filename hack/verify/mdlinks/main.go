// Command mdlinks fails when a relative link in the repository's Markdown is broken: for every
// git-tracked *.md file it checks that each relative link target (inline links and images,
// reference definitions, and href/src attributes of inline HTML) names a file or directory that
// exists and lies inside the repository. Links with a scheme (https:, mailto:, …), protocol-relative
// links and pure #anchors are not checked; of path#anchor only the path is. Links inside fenced
// code blocks and code spans are not links. make verify runs it (target verify-links), so a page
// moved or renamed without its links fails there, and no link can point outside the repository.
//
//	go run ./hack/verify/mdlinks [-root DIR]
//
// Each broken link is printed as file:line: "target": reason; the exit status is 1 when there is any.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

func main() {
	root := flag.String("root", ".", "the repository's root: its git-tracked *.md files are checked")
	flag.Parse()
	files, err := markdownFiles(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mdlinks:", err)
		os.Exit(2)
	}
	problems, err := check(*root, files)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mdlinks:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "mdlinks: %d broken relative link(s) in %d Markdown file(s)\n", len(problems), len(files))
		os.Exit(1)
	}
	fmt.Printf("mdlinks: every relative link of %d Markdown files resolves inside the repository\n", len(files))
}

// markdownFiles lists the git-tracked *.md files under root, relative to it.
func markdownFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--", "*.md")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w: %s", root, err, strings.TrimSpace(stderr.String()))
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, filepath.FromSlash(f))
		}
	}
	return files, nil
}

// problem is one broken link.
type problem struct {
	file   string // relative to the root
	line   int
	target string
	reason string
}

func (p problem) String() string {
	return fmt.Sprintf("%s:%d: %q: %s", filepath.ToSlash(p.file), p.line, p.target, p.reason)
}

// check reads each file (relative to root) and returns its broken relative links in order.
func check(root string, files []string) ([]problem, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	var problems []problem
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(absRoot, f))
		if err != nil {
			return nil, err
		}
		for _, l := range links(string(data)) {
			if reason := resolve(absRoot, f, l.target); reason != "" {
				problems = append(problems, problem{file: f, line: l.line, target: l.target, reason: reason})
			}
		}
	}
	return problems, nil
}

// scheme matches a URL that names its scheme (https:, mailto:, …).
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// resolve says why target, a link in file (both relative to root), is broken, or "" when it is not.
func resolve(root, file, target string) string {
	if target == "" || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "//") || scheme.MatchString(target) {
		return ""
	}
	path := target
	if i := strings.IndexAny(path, "#?"); i >= 0 {
		path = path[:i]
	}
	if unescaped, err := url.PathUnescape(path); err == nil {
		path = unescaped
	}
	var abs string
	if strings.HasPrefix(path, "/") {
		// GitHub resolves a link that starts with / from the repository's root.
		abs = filepath.Join(root, filepath.FromSlash(path))
	} else {
		abs = filepath.Join(root, filepath.Dir(file), filepath.FromSlash(path))
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "points outside the repository"
	}
	if _, err := os.Stat(abs); err != nil {
		return "no such file or directory: " + filepath.ToSlash(rel)
	}
	return ""
}

// link is a link target and the line (from 1) it is on.
type link struct {
	line   int
	target string
}

var (
	// fence opens or closes a fenced code block: up to three spaces, then ``` or ~~~ or longer.
	fence = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	// refDef is a reference definition: [label]: target.
	refDef = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	// htmlAttr is an href or src attribute of inline HTML.
	htmlAttr = regexp.MustCompile(`\b(?:href|src)\s*=\s*["']([^"']*)["']`)
)

// links returns the link targets of a Markdown document outside its code.
func links(doc string) []link {
	var out []link
	var open string // the fence of the code block we are in, "" outside one
	for i, line := range strings.Split(doc, "\n") {
		n := i + 1
		if m := fence.FindStringSubmatch(line); m != nil {
			switch {
			case open == "":
				open = m[1]
				continue
			case m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(line[len(m[0]):]) == "":
				open = ""
				continue
			}
		}
		if open != "" {
			continue
		}
		line = stripCode(line)
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, link{n, strings.Trim(m[1], "<>")})
			continue
		}
		for _, t := range inlineTargets(line) {
			out = append(out, link{n, t})
		}
		for _, m := range htmlAttr.FindAllStringSubmatch(line, -1) {
			out = append(out, link{n, m[1]})
		}
	}
	return out
}

// stripCode blanks the code spans of a line (a run of backticks up to the next run of the same
// length), so that what they show is not taken for links.
func stripCode(line string) string {
	b := []byte(line)
	run := func(i int) int { // the length of the backtick run at i
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		return n
	}
	for i := 0; i < len(b); {
		n := run(i)
		if n == 0 {
			i++
			continue
		}
		end := -1
		for k := i + n; k < len(b); {
			if m := run(k); m == n {
				end = k + m
				break
			} else if m > 0 {
				k += m
			} else {
				k++
			}
		}
		if end < 0 { // no closing run: the backticks are literal
			i += n
			continue
		}
		for k := i; k < end; k++ {
			b[k] = ' '
		}
		i = end
	}
	return string(b)
}

// inlineTargets returns the destinations of the inline links and images of a line: what follows
// "](" up to its closing parenthesis (parentheses inside balanced), without a title.
func inlineTargets(line string) []string {
	var out []string
	for i := 0; ; {
		j := strings.Index(line[i:], "](")
		if j < 0 {
			return out
		}
		start := i + j + 2
		rest := line[start:]
		var dest string
		if strings.HasPrefix(rest, "<") {
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return out
			}
			dest = rest[1:end]
			i = start + end + 1
		} else {
			depth, end := 0, -1
		scan:
			for k, r := range rest {
				switch r {
				case '(':
					depth++
				case ')':
					if depth == 0 {
						end = k
						break scan
					}
					depth--
				}
			}
			if end < 0 {
				return out
			}
			dest = strings.TrimSpace(rest[:end])
			if k := strings.IndexAny(dest, " \t"); k >= 0 { // a title follows the destination
				dest = dest[:k]
			}
			i = start + end + 1
		}
		out = append(out, dest)
	}
}
