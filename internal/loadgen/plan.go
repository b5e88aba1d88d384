package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mlkube/mlkube/internal/ws"
)

// Row is one path driven at one size and concurrency for a time: the unit of a load plan.
type Row struct {
	// Name says what the row measures, e.g. "hpush" or "chain".
	Name string `json:"name"`
	// Method is PUT (the body is the object, the result must be it), GET (the result must be the
	// object), STORE (MethodStore: a PUT whose answer must be the stored object's info) or STREAM
	// (a WebSocket of URL, ws://, each object a message; with Agent, the agent's stream API).
	Method string `json:"method"`
	// URL is where the row sends objects; in a STORE row, "{client}" in it is replaced by the
	// client's number, so that every client writes an object of its own.
	URL string `json:"url"`
	// Agent marks a STREAM row as the agent's stream API: control messages before the objects,
	// the data path token presented.
	Agent bool `json:"agent,omitempty"`
	// Auth presents the data path token (Plan.TokenFile) as a bearer token.
	Auth bool `json:"auth,omitempty"`
	Size int  `json:"size"`
	// InFlight is how many objects are in flight: so many HTTP clients of one object each, or
	// one stream with a window of so many.
	InFlight int           `json:"inFlight"`
	Duration time.Duration `json:"duration"`
}

// MaxInFlight bounds Row.InFlight; MaxSize bounds Row.Size (an object is held in memory).
const (
	MaxInFlight = 256
	MaxSize     = 1 << 30
)

// Validate says what is wrong with r, naming the field.
func (r Row) Validate() error {
	switch {
	case r.Method != http.MethodPut && r.Method != http.MethodGet && r.Method != MethodStore && r.Method != "STREAM":
		return fmt.Errorf("row %s: method %q is not PUT, GET, STORE or STREAM", r.Name, r.Method)
	case r.InFlight < 1 || r.InFlight > MaxInFlight:
		return fmt.Errorf("row %s: inFlight %d is not within 1..%d", r.Name, r.InFlight, MaxInFlight)
	case r.Size < 0 || r.Size > MaxSize:
		return fmt.Errorf("row %s: size %d is not within 0..%d", r.Name, r.Size, MaxSize)
	case r.Duration <= 0:
		return fmt.Errorf("row %s: duration %s must be positive", r.Name, r.Duration)
	}
	return nil
}

// Result is what a row did: objects completed and checked, in how long, or the first failure.
type Result struct {
	Row      string        `json:"row"`
	Size     int           `json:"size"`
	InFlight int           `json:"inFlight"`
	Objects  int64         `json:"objects"`
	Elapsed  time.Duration `json:"elapsed"`
	Error    string        `json:"error,omitempty"`
}

// RoundResult is a Result and the round of the plan it came from: one line of a load generator's
// output.
type RoundResult struct {
	Round int `json:"round"`
	Result
}

// ObjectsPerSecond is the row's rate.
func (r Result) ObjectsPerSecond() float64 {
	return float64(r.Objects) / r.Elapsed.Seconds()
}

// MBPerSecond is the row's throughput in MB (10^6 bytes) a second.
func (r Result) MBPerSecond() float64 {
	return r.ObjectsPerSecond() * float64(r.Size) / 1e6
}

// Run drives r and returns its result; token is the data path token for rows that present it.
func (r Row) Run(ctx context.Context, token string) Result {
	res := Result{Row: r.Name, Size: r.Size, InFlight: r.InFlight}
	if err := r.Validate(); err != nil {
		res.Error = err.Error()
		return res
	}
	if !r.Auth && !r.Agent {
		token = ""
	}
	payload := Payload(r.Size)
	deadline := time.Now().Add(r.Duration)
	more := func() bool { return ctx.Err() == nil && time.Now().Before(deadline) }
	start := time.Now()
	var err error
	if r.Method == "STREAM" {
		res.Objects, err = r.stream(ctx, token, payload, more)
	} else {
		transports := []*http.Transport{}
		res.Objects, err = Objects(r.InFlight, more, func() func() error {
			t := NewTransport()
			url := strings.ReplaceAll(r.URL, "{client}", strconv.Itoa(len(transports)))
			transports = append(transports, t)
			c := &HTTPClient{C: &http.Client{Transport: t}, Method: r.Method, URL: url, Token: token, Payload: payload}
			return c.Do
		})
		for _, t := range transports {
			t.CloseIdleConnections()
		}
	}
	res.Elapsed = time.Since(start)
	if err != nil {
		res.Error = err.Error()
	}
	return res
}

func (r Row) stream(ctx context.Context, token string, payload []byte, more func() bool) (int64, error) {
	var c MsgClient
	if r.Agent {
		s, err := DialAgentStream(ctx, r.URL, token)
		if err != nil {
			return 0, err
		}
		c = s
	} else {
		conn, err := ws.Dial(ctx, r.URL)
		if err != nil {
			return 0, err
		}
		c = OwnWS{conn}
	}
	return Stream(c, payload, r.InFlight, more)
}

// Plan is what a load generator runs: files to put in place, then its rows, Rounds times over,
// one row after the other so no two compete.
type Plan struct {
	// TokenFile holds the data path token (a projected ServiceAccount token); it is read before
	// every row, as the kubelet replaces it.
	TokenFile string `json:"tokenFile,omitempty"`
	// Files are objects to write before the rows: path → size, the bytes being Payload(size).
	Files map[string]int `json:"files,omitempty"`
	// Ready are URLs that must answer a GET with 200 before the rows start: a Service that was
	// just made answers only once kube-proxy has its rules.
	Ready []string `json:"ready,omitempty"`
	// Seeds are objects stored through an object API once Ready answer, before the rows.
	Seeds []Seed `json:"seeds,omitempty"`
	// Cleanup are URLs DELETEd, with the token, once the rows have run or failed: the seeded
	// and stored objects (?recursive=true removes a prefix of them).
	Cleanup []string `json:"cleanup,omitempty"`
	Rows    []Row    `json:"rows"`
	Rounds  int      `json:"rounds"`
}

// ReadyTimeout bounds the wait for Plan.Ready.
const ReadyTimeout = 2 * time.Minute

// MaxRounds bounds Plan.Rounds.
const MaxRounds = 20

// Execute stores the plan's seeds and writes its files, then runs every row Rounds times,
// calling report with each result as it comes, and removes the files (and the directories that
// held only them) and deletes its Cleanup. It stops at the first failed row.
func (p Plan) Execute(ctx context.Context, report func(round int, r Result)) (err error) {
	if p.Rounds < 1 || p.Rounds > MaxRounds {
		return fmt.Errorf("rounds %d is not within 1..%d", p.Rounds, MaxRounds)
	}
	if len(p.Rows) == 0 {
		return fmt.Errorf("the plan has no rows")
	}
	for _, r := range p.Rows {
		if err := r.Validate(); err != nil {
			return err
		}
	}
	defer func() { err = errors.Join(err, p.cleanup(ctx)) }()
	for _, u := range p.Ready {
		if err := waitReady(ctx, u, ReadyTimeout); err != nil {
			return err
		}
	}
	// Before the files: an object API makes the directories it stores in as its own user.
	if err := p.seed(ctx); err != nil {
		return err
	}
	for path, size := range p.Files {
		if size < 0 || size > MaxSize {
			return fmt.Errorf("file %s: size %d is not within 0..%d", path, size, MaxSize)
		}
		err := writeFile(path, Payload(size))
		defer removeFile(path)
		if err != nil {
			return err
		}
	}
	for round := 1; round <= p.Rounds; round++ {
		for _, r := range p.Rows {
			token, err := p.token()
			if err != nil {
				return err
			}
			res := r.Run(ctx, token)
			report(round, res)
			if res.Error != "" {
				return fmt.Errorf("row %s (%d bytes, %d in flight), round %d: %s", r.Name, r.Size, r.InFlight, round, res.Error)
			}
		}
	}
	return nil
}

func (p Plan) token() (string, error) {
	if p.TokenFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(p.TokenFile)
	if err != nil {
		return "", fmt.Errorf("reading the data path token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// writeFile writes data to path under a temporary name first, so no reader sees half of it.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// removeFile removes path, and its directory once it is empty.
func removeFile(path string) {
	_ = os.Remove(path)
	_ = os.Remove(filepath.Dir(path)) // fails, as it should, while other files are there
}

// waitReady GETs url until it answers 200, for at most timeout.
func waitReady(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("ready URL %s: %w", url, err)
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer 200 within %s: %w", url, timeout, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
