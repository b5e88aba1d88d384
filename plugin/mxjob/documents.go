package mxjob

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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// urlTimeout bounds fetching -f URL, which has no other deadline.
const urlTimeout = 30 * time.Second

// readDocuments reads the YAML or JSON documents of a file, an http(s) URL or - (stdin). Empty
// ones are kept, so a message's document number is the one a user counts in the file.
func readDocuments(ctx context.Context, name string, stdin io.Reader) ([][]byte, error) {
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

// emptyDocument says whether a document holds nothing but blank lines and comments.
func emptyDocument(doc []byte) bool {
	for line := range strings.Lines(string(doc)) {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

func fetchURL(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, urlTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// decodeJob reads one document as an MxJob, converting a Kubeflow MXJob; changes lists what the
// conversion changed (nothing for an MxJob). Unknown fields are refused, so a typo is not lost.
func decodeJob(doc []byte) (*v1beta1.MxJob, []string, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, nil, err
	}
	switch {
	case isKubeflowMXJob(tm):
		return convertKubeflow(doc)
	case tm.APIVersion == v1beta1.GroupVersion.String() && tm.Kind == "MxJob":
		var job v1beta1.MxJob
		if err := yaml.UnmarshalStrict(doc, &job); err != nil {
			return nil, nil, err
		}
		return &job, nil, nil
	}
	return nil, nil, fmt.Errorf("%s %s is not an MxJob; this takes %s MxJobs and kubeflow.org/v1 or v1beta1 MXJobs (use kubectl apply for the rest)",
		orUnset(tm.APIVersion), orUnset(tm.Kind), v1beta1.GroupVersion)
}

func orUnset(s string) string {
	if s == "" {
		return "<unset>"
	}
	return s
}
