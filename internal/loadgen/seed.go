package loadgen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/mlkube/mlkube/api/wire"
)

// Seed is an object a plan stores before its rows: Payload(Size) PUT to URL with the data path
// token and the payload's SHA-256 (wire.HeaderChecksum), so that the store verifies it and
// reports it when the rows read the object.
type Seed struct {
	URL  string `json:"url"`
	Size int    `json:"size"`
}

// seed stores every seed, checking that each answer is the object's info with its checksum.
func (p Plan) seed(ctx context.Context) error {
	for _, s := range p.Seeds {
		if s.Size < 0 || s.Size > MaxSize {
			return fmt.Errorf("seed %s: size %d is not within 0..%d", s.URL, s.Size, MaxSize)
		}
		payload := Payload(s.Size)
		sum := sha256.Sum256(payload)
		checksum := hex.EncodeToString(sum[:])
		resp, err := p.send(ctx, http.MethodPut, s.URL, payload, checksum)
		if err != nil {
			return fmt.Errorf("seed %s: %w", s.URL, err)
		}
		err = checkStored(resp, s.Size, checksum)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("seed %s: %w", s.URL, err)
		}
	}
	return nil
}

// cleanup DELETEs every Cleanup URL, and says which failed.
func (p Plan) cleanup(ctx context.Context) error {
	var errs []error
	for _, u := range p.Cleanup {
		resp, err := p.send(context.WithoutCancel(ctx), http.MethodDelete, u, nil, "")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cleanup DELETE %s: %w", u, err))
		}
	}
	return errors.Join(errs...)
}

// send makes one request of the plan's own, not a row's, with the token.
func (p Plan) send(ctx context.Context, method, url string, body []byte, checksum string) (*http.Response, error) {
	token, err := p.token()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if checksum != "" {
		req.Header.Set(wire.HeaderChecksum, checksum)
	}
	return http.DefaultClient.Do(req)
}
