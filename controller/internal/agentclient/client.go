// Package agentclient is how the manager calls the node agents (datapath/agent): the
// address of an agent pod's API, the data path token it presents, and one request function whose
// errors tell a refused token and an agent's answer apart from a network failure.
package agentclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// maxAnswer bounds an agent's decoded answer: a stats report of many Transforms is the largest.
const maxAnswer = 8 << 20

// ErrRefused marks an agent's 401 or 403: the manager's token or its ClusterRoleBinding is
// missing or wrong, which no retry mends.
var ErrRefused = errors.New("the agent refused the manager's token")

// StatusError is an agent's answer other than 2xx.
type StatusError struct {
	URL    string
	Code   int
	Status string
	// Message is the start of the agent's body, which says why.
	Message string
}

func (e *StatusError) Error() string {
	if errors.Is(e, ErrRefused) {
		return fmt.Sprintf("%s answered %s: %v", e.URL, e.Status, ErrRefused)
	}
	if e.Message == "" {
		return fmt.Sprintf("%s answered %s", e.URL, e.Status)
	}
	return fmt.Sprintf("%s answered %s: %s", e.URL, e.Status, e.Message)
}

// Unwrap makes a refusal match ErrRefused.
func (e *StatusError) Unwrap() error {
	if e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden {
		return ErrRefused
	}
	return nil
}

// HasStatus reports whether err is an agent's answer with the given status code.
func HasStatus(err error, code int) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == code
}

// URL is the address of path on the agent API at ip and port.
func URL(ip string, port int, path string) string {
	return "http://" + net.JoinHostPort(ip, strconv.Itoa(port)) + path
}

// Do sends method to url with in as a JSON body (nil: none), presenting token unless it is empty,
// and decodes a 2xx answer into out (nil: discarded). Any other answer is a *StatusError.
func Do(ctx context.Context, hc *http.Client, method, url, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return &StatusError{URL: url, Code: resp.StatusCode, Status: resp.Status, Message: strings.TrimSpace(string(msg))}
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, maxAnswer)).Decode(out); err != nil {
		return fmt.Errorf("decoding %s: %w", url, err)
	}
	return nil
}
