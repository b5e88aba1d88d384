package access

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// ttlCache is a bounded map whose entries expire. Lookups take a read lock only: the hot path of
// every data path request. When full, expired entries go first, then arbitrary ones (Go's map
// order), which bounds memory under a flood of distinct keys without an LRU's write on every read.
// Keys are digests of a fixed size, so the bound on entries bounds the bytes of keys too.
type ttlCache[V any] struct {
	mu      sync.RWMutex
	entries map[key]entry[V]
	max     int
	now     func() time.Time
	flight  singleflight.Group
}

type entry[V any] struct {
	v       V
	expires time.Time
}

// key identifies an entry by the SHA-256 of what its answer depends on: an entry costs the same
// few bytes however long the token or names a caller sends, and no token is kept in the clear.
type key [sha256.Size]byte

// digest is the key of fields. Each is hashed after its length, so that no two lists of fields
// share a key, as they would joined by a separator that a field may contain.
func digest(fields ...string) key {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, f := range fields {
		// A hash.Hash never fails a write.
		_, _ = h.Write(binary.AppendUvarint(n[:0], uint64(len(f))))
		_, _ = io.WriteString(h, f)
	}
	var k key
	h.Sum(k[:0])
	return k
}

func newTTLCache[V any](max int, now func() time.Time) *ttlCache[V] {
	return &ttlCache[V]{entries: make(map[key]entry[V]), max: max, now: now}
}

func (c *ttlCache[V]) get(k key) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok || !c.now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[V]) put(k key, v V, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.max {
		c.evict(now)
	}
	c.entries[k] = entry[V]{v: v, expires: now.Add(ttl)}
}

// evict makes room for one entry: every expired entry, or else one in eight of the live ones.
func (c *ttlCache[V]) evict(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) < c.max-c.max/8 {
			break
		}
		delete(c.entries, k)
	}
}

func (c *ttlCache[V]) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

// lookup returns k's cached value, or calls load once for all concurrent callers of the same key
// and caches its answer for the ttl it returns.
func (c *ttlCache[V]) lookup(k key, load func() (V, time.Duration, error)) (V, error) {
	if v, ok := c.get(k); ok {
		return v, nil
	}
	v, err, _ := c.flight.Do(string(k[:]), func() (any, error) {
		v, ttl, err := load()
		if err == nil {
			c.put(k, v, ttl)
		}
		return v, err
	})
	return v.(V), err
}
