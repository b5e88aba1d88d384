package psrendezvous

import (
	"fmt"
	"slices"
	"strings"
)

// What a node was waiting for, in progress messages and errors.
const (
	phaseRegistration = "waiting for registration"
	phaseCompletion   = "waiting for peers to report done"
	phasePushes       = "waiting for pushes"
	phaseAnswers      = "answering workers"
	phaseAggregates   = "waiting for aggregates"
)

// MissingError is how every role fails: it was still waiting for some peers when
// its deadline expired (or a connection it needed broke).
type MissingError struct {
	Node    string   // who reports
	Waiting string   // what it was waiting for, e.g. "waiting for registration"
	Missing []string // peer names, e.g. worker-2; empty if not known yet
	Cause   error
}

func (e *MissingError) Error() string {
	missing := strings.Join(e.Missing, ", ")
	if missing == "" {
		missing = "unknown peers (no report from the scheduler yet)"
	}
	return fmt.Sprintf("%s: missing %s (%s: %v)", e.Node, missing, e.Waiting, e.Cause)
}

func (e *MissingError) Unwrap() error { return e.Cause }

// peerSet tracks which of an expected list of peers have taken part in one phase,
// so a timeout can say who did not. Not safe for concurrent use.
type peerSet struct {
	want []string
	have map[string]bool
}

func newPeerSet(want []string) *peerSet {
	return &peerSet{want: want, have: map[string]bool{}}
}

// expects reports whether name is one of the peers this set waits for.
func (s *peerSet) expects(name string) bool { return slices.Contains(s.want, name) }

// add records name and reports whether it is new.
func (s *peerSet) add(name string) bool {
	if s.have[name] {
		return false
	}
	s.have[name] = true
	return true
}

func (s *peerSet) has(name string) bool { return s.have[name] }

func (s *peerSet) complete() bool { return len(s.missing()) == 0 }

// missing lists the expected peers not seen yet, in expected order.
func (s *peerSet) missing() []string {
	var m []string
	for _, n := range s.want {
		if !s.have[n] {
			m = append(m, n)
		}
	}
	return m
}
