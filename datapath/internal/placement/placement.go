// Package placement picks the nodes an object of a namespace lives on, by highest random weight
// (rendezvous) hashing: every node scores the object, and the nodes in order of score are its
// places. Every agent computes the same order from the same node names with no coordination,
// the objects spread evenly, and a node that leaves moves only the objects it held.
package placement

import (
	"hash/fnv"
	"slices"
)

// Rank returns nodes in the order an object prefers them: Rank(...)[0] stores it. nodes is not
// changed; equal scores (astronomically rare) order by name so the answer stays deterministic.
func Rank(namespace, name string, nodes []string) []string {
	object := hashString(namespace + "\x00" + name)
	type scored struct {
		node  string
		score uint64
	}
	s := make([]scored, len(nodes))
	for i, n := range nodes {
		s[i] = scored{n, score(object, hashString(n))}
	}
	slices.SortFunc(s, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return cmpString(a.node, b.node)
	})
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.node
	}
	return out
}

// First returns Rank(namespace, name, nodes)[0] without ordering the rest: the node that stores
// the object. nodes must not be empty.
func First(namespace, name string, nodes []string) string {
	return NewNodes(nodes).First(namespace, name)
}

// Nodes are node names with their hashes, for placing many objects on the same nodes.
type Nodes struct {
	names  []string
	hashes []uint64
}

// NewNodes hashes nodes once.
func NewNodes(nodes []string) Nodes {
	n := Nodes{names: nodes, hashes: make([]uint64, len(nodes))}
	for i, name := range nodes {
		n.hashes[i] = hashString(name)
	}
	return n
}

// First is the package's First over these nodes; there must be at least one.
func (n Nodes) First(namespace, name string) string {
	object := hashString(namespace + "\x00" + name)
	best, bestScore := "", uint64(0)
	for i, node := range n.names {
		sc := score(object, n.hashes[i])
		if i == 0 || sc > bestScore || (sc == bestScore && node < best) {
			best, bestScore = node, sc
		}
	}
	return best
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hashString is FNV-1a: fast, stable across processes and versions (unlike hash/maphash, whose
// seed is per process), and its weak mixing is made up for by score's finalizer.
func hashString(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s)) // a hash.Hash never fails
	return h.Sum64()
}

// score mixes an object's and a node's hashes with the 64-bit finalizer of MurmurHash3, which
// makes every input bit flip each output bit with probability close to 1/2.
func score(object, node uint64) uint64 {
	x := object ^ (node * 0x9e3779b97f4a7c15)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
