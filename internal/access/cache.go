package access

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// ttlCache is a bounded map whose entries expire. Lookups take a read lock only: the hot path of
// every data path request. When full, expired entries go first, then arbitrary ones (Go's map
// order), which bounds memory under a flood of distinct keys without an LRU's write on every read.
type ttlCache[V any] struct {
	mu      sync.RWMutex
	entries map[string]entry[V]
	max     int
	now     func() time.Time
	flight  singleflight.Group
}

type entry[V any] struct {
	v       V
	expires time.Time
}

func newTTLCache[V any](max int, now func() time.Time) *ttlCache[V] {
	return &ttlCache[V]{entries: make(map[string]entry[V]), max: max, now: now}
}

func (c *ttlCache[V]) get(key string) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || !c.now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[V]) put(key string, v V, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		c.evict(now)
	}
	c.entries[key] = entry[V]{v: v, expires: now.Add(ttl)}
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

// lookup returns key's cached value, or calls load once for all concurrent callers of the same key
// and caches its answer for the ttl it returns.
func (c *ttlCache[V]) lookup(key string, load func() (V, time.Duration, error)) (V, error) {
	if v, ok := c.get(key); ok {
		return v, nil
	}
	v, err, _ := c.flight.Do(key, func() (any, error) {
		v, ttl, err := load()
		if err == nil {
			c.put(key, v, ttl)
		}
		return v, err
	})
	return v.(V), err
}
