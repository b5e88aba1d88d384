package agentclient

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// TokenMaxAge is how long a read token is reused. The kubelet replaces a projected token once 80%
// of its life has passed (48 minutes of an hour), so a copy at most a minute old is always still
// valid, and pulls do not read the file once per agent.
const TokenMaxAge = time.Minute

// TokenFile reads the manager's projected ServiceAccount token for the node agents (audience
// mlkube-datapath), re-reading the file once its copy is TokenMaxAge old so that the kubelet's
// rotation is picked up.
type TokenFile struct {
	Path  string
	Clock clock.PassiveClock

	mu     sync.Mutex
	token  string
	readAt time.Time
}

// NewTokenFile returns a TokenFile for path.
func NewTokenFile(path string) *TokenFile {
	return &TokenFile{Path: path, Clock: clock.RealClock{}}
}

// Token returns the token, from the file when the copy held is missing or too old. A missing or
// empty file is an error naming the file: without it every agent would answer 401.
func (f *TokenFile) Token() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.Clock.Now()
	if f.token != "" && now.Sub(f.readAt) < TokenMaxAge {
		return f.token, nil
	}
	b, err := os.ReadFile(f.Path)
	if err != nil {
		return "", fmt.Errorf("reading the data path token (projected volume of audience mlkube-datapath): %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("the data path token file %s is empty", f.Path)
	}
	f.token, f.readAt = token, now
	return token, nil
}
