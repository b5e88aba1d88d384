package wire

import (
	"encoding/binary"
	"time"
)

// The object API of every node agent: a namespace's dataset, spread over the nodes
// (docs/datapath-rbac.md). Any agent answers for any object of the namespace: it serves the
// objects on its own node and reaches the others through their node's agent.
//
//	PUT    /v1/objects/{namespace}/{object...}   create or replace (RBAC verb create)
//	GET    /v1/objects/{namespace}/{object...}   read, Range allowed (get)
//	HEAD   /v1/objects/{namespace}/{object...}   size, checksum, node (get)
//	DELETE /v1/objects/{namespace}/{object...}   remove; ?recursive=true removes a prefix (delete)
//	GET    /v1/objects/{namespace}/?prefix=&after=&limit=&delimiter=   a page of the list (list)
//	POST   /v1/objects/{namespace}/?batch=true   many of this node's objects in one answer (get)
//
// ?node=NODE on any of them names the node to store on or read from instead of the one
// placement picks.
//
// The objects of the namespace's ObjectStores are listed the same way, a page at a time (an
// ObjectList), by the agent with the store's keys; the caller needs get on the ObjectStore:
//
//	GET    /v1/stores/{namespace}/{store}/?prefix=&after=&limit=&delimiter=   delimiter is "/" or none
const (
	// PathObjects is the object API's prefix.
	PathObjects = "/v1/objects/"
	// PathStores is the prefix of the listings of a namespace's ObjectStores.
	PathStores = "/v1/stores/"

	// HeaderChecksum carries an object's SHA-256, lower-case hex. On a PUT it is optional and,
	// when given, verified before the object becomes visible (400 and nothing written on a
	// mismatch); GET and HEAD answer it when the agent knows it.
	HeaderChecksum = "X-Mlkube-Checksum-Sha256"
	// HeaderNode names, on every answer about one object, the node that holds it.
	HeaderNode = "X-Mlkube-Node"
	// HeaderForwardedBy carries the data path token of the agent that forwards a request to
	// the node holding the object; the receiving agent checks it is a peer agent's and then
	// answers from its own node only. The caller's Authorization travels unchanged.
	HeaderForwardedBy = "X-Mlkube-Forwarded-By"

	// Query parameters of the object API.
	QueryPrefix    = "prefix"
	QueryAfter     = "after"
	QueryLimit     = "limit"
	QueryDelimiter = "delimiter"
	QueryNode      = "node"
	QueryRecursive = "recursive"
	QueryBatch     = "batch"

	// MaxListLimit is the most objects one page of a list holds, and the default.
	MaxListLimit = 1000
)

// VerbList and VerbDelete are the RBAC verbs of listing and removing a namespace's objects
// (the virtual resource objects of etl.mlkube.io); reading is get, writing create.
const (
	VerbList   = "list"
	VerbDelete = "delete"
)

// ObjectInfo describes one stored object, as a list and a HEAD answer it.
type ObjectInfo struct {
	// Name is the object's name within its namespace.
	Name string `json:"name"`
	// Size is its length in bytes.
	Size int64 `json:"size"`
	// Modified is when it was last written.
	Modified time.Time `json:"modified"`
	// Checksum is its SHA-256, lower-case hex, when the agent knows it.
	Checksum string `json:"checksum,omitempty"`
	// Node is the node that holds it.
	Node string `json:"node"`
}

// ObjectList is one page of a namespace's objects, sorted by name.
type ObjectList struct {
	Items []ObjectInfo `json:"items"`
	// Prefixes are the names up to and including the delimiter of the objects the page
	// groups, when the request named a delimiter (a directory listing), sorted.
	Prefixes []string `json:"prefixes,omitempty"`
	// Next, when set, is the after= of the next page; empty on the last page.
	Next string `json:"next,omitempty"`
}

// A batch read: POST {PathObjects}{namespace}/?batch=true with a BatchRequest (JSON, at most
// MaxBatchRequestBytes) answers ContentTypeBatch: for each name asked, in order, a header of
// BatchHeaderSize bytes (status, name length, data length; big-endian), the name, then the data:
// the object's bytes when status is 200, else the agent's error message. A 404 says the object
// is not on this node (it may be on another: GET it). Small objects read one request each cost
// a round trip each; a training loop reads thousands, so it asks for them a window at a time.
const (
	ContentTypeBatch = "application/x-mlkube-batch"
	// MaxBatchObjects is the most names one batch may ask for.
	MaxBatchObjects = 1000
	// MaxBatchRequestBytes bounds a batch request's body.
	MaxBatchRequestBytes = 1 << 20
	// BatchHeaderSize is the length of each object's header in a batch answer.
	BatchHeaderSize = 12
)

// BatchRequest names the objects of a batch read.
type BatchRequest struct {
	Objects []string `json:"objects"`
}

// AppendBatchHeader appends the header of one object of a batch answer to b.
func AppendBatchHeader(b []byte, status int, name string, size int64) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(status))
	b = binary.BigEndian.AppendUint16(b, uint16(len(name)))
	return binary.BigEndian.AppendUint64(b, uint64(size))
}

// ParseBatchHeader reads a header AppendBatchHeader wrote; h holds at least BatchHeaderSize bytes.
func ParseBatchHeader(h []byte) (status, nameLen int, size uint64) {
	return int(binary.BigEndian.Uint16(h)), int(binary.BigEndian.Uint16(h[2:])), binary.BigEndian.Uint64(h[4:])
}
