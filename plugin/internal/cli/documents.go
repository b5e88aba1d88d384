package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// URLTimeout bounds fetching -f URL, which has no other deadline.
const URLTimeout = 30 * time.Second

// MaxURLBytes bounds what -f URL reads: a manifest is kilobytes, and a URL that streams without
// end must not fill the memory of the user's machine.
const MaxURLBytes = 8 << 20

// ReadDocuments reads the YAML or JSON documents of a file, an http(s) URL or - (stdin). Empty
// ones are kept, so a message's document number is the one a user counts in the file.
func ReadDocuments(ctx context.Context, name string, stdin io.Reader) ([][]byte, error) {
	var r io.Reader
	switch {
	case name == "-":
		r = stdin
	case strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://"):
		body, err := fetchURL(ctx, name)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(body)
	default:
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var docs [][]byte
	for {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		docs = append(docs, doc)
	}
}

// EmptyDocument says whether a document holds nothing but blank lines, comments and document
// markers.
func EmptyDocument(doc []byte) bool {
	for line := range strings.Lines(string(doc)) {
		if l := strings.TrimSpace(line); l != "" && l != "---" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

func fetchURL(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, URLTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("fetching %s: no answer within %s; download the file and pass its path", url, URLTimeout)
		}
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxURLBytes+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("fetching %s: no complete answer within %s; download the file and pass its path", url, URLTimeout)
	case err != nil:
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	case len(body) > MaxURLBytes:
		return nil, fmt.Errorf("fetching %s: more than %d MiB, too much for a manifest; download the file and pass its path", url, MaxURLBytes>>20)
	}
	return body, nil
}

// ReportConversion prints to stderr, one per line, what converting another project's document
// (a Kubeflow MXJob, an AIStore ETL spec) changed, so a user sees what the object now says.
func ReportConversion(env *Env, what, name string, changes []string) {
	if len(changes) == 0 {
		return
	}
	fmt.Fprintf(env.ErrOut, "converted %s %q:\n", what, name)
	for _, c := range changes {
		fmt.Fprintf(env.ErrOut, "  %s\n", c)
	}
}
