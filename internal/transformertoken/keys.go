package transformertoken

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// ErrUnknownKey is a token key ID the holder does not have: a key removed from the Secret while a
// transformer still uses it, or one the agent's volume has not received yet.
var ErrUnknownKey = errors.New("unknown transformer token key")

// Keys is the agents' view of the key Secret, mounted as a directory. It is read again whenever
// the directory changes: the kubelet swaps a Secret volume's ..data link atomically when the
// Secret changes, and a plain directory (tests, other mounts) changes its modification time when
// a file is added or replaced by rename.
type Keys struct {
	dir string
	// now is the clock of the re-checks: time.Now, moved by tests.
	now func() time.Time

	mu sync.Mutex
	// checked is when the directory's stamp was last read.
	checked time.Time
	stamp   string
	set     Set
	err     error
	// tokens caches derived tokens of the current set; dropped on every reload.
	tokens map[tokenID]string
}

type tokenID struct {
	keyID, namespace, name string
	uid                    types.UID
}

// maxCachedTokens bounds the cache: one entry per Transform the agent serves, so it is reached
// only by clusters with more Transforms than that, which then derive again (a microsecond).
const maxCachedTokens = 4096

// recheckEvery bounds how often the directory's stamp is read. Read for
// every object, it cost the agent a system call under the lock every
// request takes (3% of its CPU at 4 KiB); the kubelet takes up to a minute
// to update a Secret volume, and a second more changes nothing. A key ID
// the set does not hold has the directory checked at once, so that a new
// key is used as soon as the volume has it.
const recheckEvery = time.Second

// NewKeys returns the keys of dir, loaded on first use.
func NewKeys(dir string) *Keys { return &Keys{dir: dir, now: time.Now} }

// Token returns the token of the Transform namespace/name with uid under key keyID, or an error
// wrapping ErrUnknownKey when the directory does not hold that key, or why the directory cannot be
// read.
func (k *Keys) Token(keyID, namespace, name string, uid types.UID) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reloadLocked(false)
	if k.err != nil {
		return "", k.err
	}
	id := tokenID{keyID, namespace, name, uid}
	if t, ok := k.tokens[id]; ok {
		return t, nil
	}
	key, ok := k.set.Key(keyID)
	if !ok {
		k.reloadLocked(true)
		key, ok = k.set.Key(keyID)
	}
	if k.err != nil {
		return "", k.err
	}
	if !ok {
		return "", fmt.Errorf("%w %q in %s", ErrUnknownKey, keyID, k.dir)
	}
	t := Derive(keyID, key, namespace, name, uid)
	if len(k.tokens) >= maxCachedTokens {
		clear(k.tokens)
	}
	k.tokens[id] = t
	return t, nil
}

// reloadLocked reads the directory again if its stamp changed since the
// last read; the stamp is read at most every recheckEvery unless forced.
func (k *Keys) reloadLocked(force bool) {
	now := k.now()
	if !force && k.tokens != nil && now.Sub(k.checked) < recheckEvery {
		return
	}
	k.checked = now
	stamp, err := dirStamp(k.dir)
	if err == nil && stamp == k.stamp && k.tokens != nil {
		return
	}
	k.tokens = map[tokenID]string{}
	k.stamp = stamp
	if err != nil {
		k.set, k.err = Set{}, fmt.Errorf("transformer token keys (--transformer-key-dir): %w", err)
		return
	}
	data, err := readDir(k.dir)
	if err == nil {
		k.set, err = Parse(data)
	}
	if err != nil {
		err = fmt.Errorf("transformer token keys in %s (--transformer-key-dir, Secret %s): %w", k.dir, SecretName, err)
	}
	k.err = err
}

// dirStamp says whether dir changed: the target of its ..data link, which the kubelet replaces
// on every update of a Secret volume, or else the directory's modification time.
func dirStamp(dir string) (string, error) {
	if target, err := os.Readlink(filepath.Join(dir, "..data")); err == nil {
		return "link:" + target, nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	return "mtime:" + fi.ModTime().Format(time.RFC3339Nano), nil
}

// readDir reads the regular files (or links to them) of dir whose names are key IDs.
func readDir(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !keyIDPattern.MatchString(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed between the listing and the read: the next stamp differs
		}
		if err != nil {
			return nil, err
		}
		data[e.Name()] = b
	}
	return data, nil
}
