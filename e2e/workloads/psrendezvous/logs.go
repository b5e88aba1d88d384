package psrendezvous

import (
	"io"
	"log"
)

// Log line formats, printed after a "<node>: " prefix (e.g. "worker-1: pushed to
// server-0 (10.244.1.5:9091)"). They are the contract with the e2e tests, which
// grep a replica's log for them: change them only together with those tests.
const (
	// Every role.
	LogListening = "listening on %s"
	LogFinished  = "finished OK"
	LogSleeping  = "sleeping %v before exiting"

	// Scheduler, one line per peer interaction.
	LogRegistered       = "registered %s from %s"                       // peer, its address
	LogRegisteredServer = "registered %s from %s, serving pushes at %s" // server, its address, push address
	LogReregistered     = "%s registered again; dropping its previous connection"
	LogAllRegistered    = "all %d peers registered (%d servers, %d workers)"
	LogSentServerList   = "sent server list to %s"
	LogDoneFrom         = "done from %s"
	LogAllDone          = "all %d peers done"
	LogSentFinish       = "sent finish to %s"
	LogLost             = "lost %s (%v)"
	LogSentAbort        = "told %s to give up"
	LogRejected         = "rejected %s: %s"

	// Servers and workers, towards the scheduler.
	LogJoined       = "registered with scheduler at %s"
	LogJoinedServer = "registered with scheduler at %s, serving pushes at %s"
	LogProgress     = "scheduler reports %s: missing %s"
	LogServerList   = "got server list from scheduler: %s" // "server-0 at 10.244.1.5:9091, …"
	LogReportedDone = "reported done to scheduler"
	LogFinishFrom   = "finish from scheduler"

	// Servers, one line per worker.
	LogPushFrom      = "push from %s (%s): %v"
	LogAggregated    = "aggregated %d workers: %v"
	LogSentAggregate = "sent aggregate to %s"

	// Workers, one line per server.
	LogPushed      = "pushed to %s (%s)"
	LogAggregateOK = "aggregate OK from %s: %v"

	// Local mode.
	LogLocal = "local mode, no peers: computed %v, OK"

	// Failure injection.
	LogInjecting  = "injecting failure: exit code %d (mode %s)"
	LogFailedOnce = "failure already injected once (marker %s present); running normally"
)

// nodeLogger prefixes every line with the node name so one grep per replica finds
// its lines even when logs of several replicas are merged.
func nodeLogger(w io.Writer, node string) *log.Logger {
	return log.New(w, node+": ", 0)
}
