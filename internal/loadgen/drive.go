package loadgen

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// Objects drives objects on clients goroutines, each with its own client from newClient sending
// one object after the other while more says so, and returns how many completed. The first error
// stops every client and is returned. One client is one sequential stream.
func Objects(clients int, more func() bool, newClient func() func() error) (int64, error) {
	dos := make([]func() error, clients)
	for i := range dos {
		dos[i] = newClient()
	}
	var (
		done    atomic.Int64
		failed  atomic.Bool
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	for _, do := range dos {
		wg.Go(func() {
			for !failed.Load() && more() {
				if err := do(); err != nil {
					errOnce.Do(func() { first = err })
					failed.Store(true)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return done.Load(), first
}

// HTTPClient sends one object to url with method on c, payload as the body of a PUT or STORE,
// token as its bearer token when set, and checks with chk that the result is payload (of a
// STORE, that the answer is the stored object's info, of payload's length).
type HTTPClient struct {
	C       *http.Client
	Method  string
	URL     string
	Token   string
	Payload []byte
	chk     *Checker
}

// Do sends one object and checks its result.
func (h *HTTPClient) Do() error {
	if h.chk == nil {
		h.chk = NewChecker(h.Payload)
	}
	method, body := h.Method, io.Reader(nil)
	if method == MethodStore {
		method = http.MethodPut
	}
	if method == http.MethodPut {
		body = bytes.NewReader(h.Payload)
	}
	req, err := http.NewRequest(method, h.URL, body)
	if err != nil {
		return err
	}
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	resp, err := h.C.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if h.Method == MethodStore {
		if err := checkStored(resp, len(h.Payload), ""); err != nil {
			return fmt.Errorf("PUT %s: %w", h.URL, err)
		}
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("%s %s: status %d: %s", h.Method, h.URL, resp.StatusCode, msg)
	}
	if err := h.chk.Check(resp.Body); err != nil {
		return fmt.Errorf("%s %s: %w", h.Method, h.URL, err)
	}
	return nil
}

// NewTransport is a client transport of its own for one driving client: its connections are
// kept alive, as a data loader's are, and none is shared with another client.
func NewTransport() *http.Transport {
	return &http.Transport{
		MaxIdleConnsPerHost: 4,
		WriteBufferSize:     checkBufferSize,
		ReadBufferSize:      checkBufferSize,
		DisableCompression:  true,
	}
}
