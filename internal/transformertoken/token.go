// Package transformertoken derives the credential the node agent presents to a transformer
// (docs/design/tenant-isolation.md, "1. The credential"): an HMAC of the Transform's identity under
// a cluster key that only the manager and the agents hold. The manager puts each Transform's token
// into a Secret its transformer pods mount; the agents derive the same token on their own, so no
// token travels between them.
package transformertoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// SecretName is the Secret, in the agents' namespace (wire.AgentNamespace), that holds the cluster
// keys under KeyIDs k1, k2, …; the highest number is the current key.
const SecretName = "transformer-token-keys"

// KeySize is the size of a key the manager makes, and the least it accepts.
const KeySize = 32

// domain separates these MACs from any other use of the key.
const domain = "mlkube.io/transformer-token/v1\x00"

// Derive returns the token of the Transform namespace/name with uid under key keyID:
// keyID "." base64url(HMAC-SHA256(key, domain field…)), where each field (namespace, name, uid)
// is its length as 8 bytes big-endian followed by its bytes. The lengths keep one field's bytes
// from moving into the next: ("a", "b\x00c") and ("a\x00b", "c") differ, which NUL separators
// alone would not guarantee for inputs that hold a NUL. The key ID is part of the token so that a
// transformer's token says which key made it; the UID, so that a Transform deleted and created
// again under its name gets a new token.
func Derive(keyID string, key []byte, namespace, name string, uid types.UID) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(domain))
	for _, f := range []string{namespace, name, string(uid)} {
		m.Write(binary.BigEndian.AppendUint64(nil, uint64(len(f))))
		m.Write([]byte(f))
	}
	return keyID + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

var keyIDPattern = regexp.MustCompile(`^k[1-9][0-9]{0,8}$`)

// Set is a parsed set of keys.
type Set struct {
	keys    map[string][]byte
	current string
}

// ErrNoKeys is a key Secret or directory without any key.
var ErrNoKeys = errors.New("no transformer token key (k1, k2, …)")

// Parse reads the keys of a Secret's data, or of the files of its volume: entries named k<N>.
// Other entries are ignored (a Secret volume holds its ..data link beside the keys); a key entry
// shorter than KeySize is an error naming it, so that a key an admin added by hand cannot weaken
// every token made with it.
func Parse(data map[string][]byte) (Set, error) {
	s := Set{keys: map[string][]byte{}}
	best := 0
	for _, id := range slices.Sorted(maps.Keys(data)) {
		if !keyIDPattern.MatchString(id) {
			continue
		}
		if len(data[id]) < KeySize {
			return Set{}, fmt.Errorf("transformer token key %s has %d bytes, needs at least %d", id, len(data[id]), KeySize)
		}
		s.keys[id] = slices.Clone(data[id])
		if n, _ := strconv.Atoi(id[1:]); n > best {
			best, s.current = n, id
		}
	}
	if s.current == "" {
		return Set{}, ErrNoKeys
	}
	return s, nil
}

// Current returns the current key: the one new transformer pods get their tokens from.
func (s Set) Current() (id string, key []byte) { return s.current, s.keys[s.current] }

// Key returns the key id, if the set has it.
func (s Set) Key(id string) ([]byte, bool) {
	k, ok := s.keys[id]
	return k, ok
}
