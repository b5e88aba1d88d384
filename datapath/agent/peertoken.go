package agent

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"time"
)

// tokenFile is the agent's own data path token, which it sends to peers as
// wire.HeaderForwardedBy. The kubelet replaces the projected token before it
// expires, so the file is read again whenever it changed.
type tokenFile struct {
	path string

	mu       sync.Mutex
	token    string
	modified time.Time
	size     int64
}

func (t *tokenFile) get() (string, error) {
	fi, err := os.Stat(t.path)
	if err != nil {
		return "", fmt.Errorf("%w (the agent's projected token volume, --peer-token-file)", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && fi.ModTime().Equal(t.modified) && fi.Size() == t.size {
		return t.token, nil
	}
	b, err := os.ReadFile(t.path)
	if err != nil {
		return "", err
	}
	token := string(bytes.TrimSpace(b))
	if token == "" {
		return "", fmt.Errorf("%s is empty", t.path)
	}
	t.token, t.modified, t.size = token, fi.ModTime(), fi.Size()
	return token, nil
}
