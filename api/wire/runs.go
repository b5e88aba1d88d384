package wire

import (
	"fmt"
	"path"
	"strings"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// The client → agent contract of offline runs: a dataset-to-dataset transformation of every
// object under a source directory of the node's data root into a destination directory, with
// workers, a dry run and continue-on-error.
//
//	POST   /v1/offline/{namespace}/{name}  RunRequest → 202 RunStatus (Location: /v1/offline/{id})
//	GET    /v1/offline/{id}                → RunStatus
//	DELETE /v1/offline/{id}                aborts the run → RunStatus
//
// {name} may be a pipeline "a>>b". A client starts the same run on every node's agent and sums the
// RunStatuses.

// RunsPath is the prefix of the offline runs API.
const RunsPath = "/v1/offline/"

const (
	// RunDefaultWorkers is how many objects a run transforms at once unless
	// the request says otherwise.
	RunDefaultWorkers = 4
	// RunMaxWorkers bounds the workers of one run.
	RunMaxWorkers = 64
	// RunMaxPlanned bounds the objects a dry run lists.
	RunMaxPlanned = 1000
)

// RunRequest starts an offline run.
type RunRequest struct {
	// Src is the directory under the data root whose objects, at any
	// depth, are transformed.
	Src string `json:"src"`
	// Dst is the directory under the data root the results are written
	// to, at the same relative names.
	Dst string `json:"dst"`
	// Args are passed to the transformer with every object.
	Args string `json:"args,omitempty"`
	// Workers is how many objects are transformed at once.
	Workers int `json:"workers,omitempty"`
	// DryRun lists what would be written and writes nothing.
	DryRun bool `json:"dryRun,omitempty"`
	// ContinueOnError goes on after a failed object; without it, the
	// first failure stops the run.
	ContinueOnError bool `json:"continueOnError,omitempty"`
}

// RunState is where a run stands.
type RunState string

const (
	RunRunning   RunState = "Running"
	RunSucceeded RunState = "Succeeded"
	// RunFailed: an object failed; with ContinueOnError every other
	// object was still attempted.
	RunFailed  RunState = "Failed"
	RunAborted RunState = "Aborted"
)

// RunStatus is one agent's view of a run.
type RunStatus struct {
	ID string `json:"id"`
	// Transform is "namespace/name" as requested.
	Transform string `json:"transform"`
	Node      string `json:"node"`
	RunRequest
	State RunState `json:"state"`
	// Message says why a run failed or was aborted.
	Message string `json:"message,omitempty"`
	// Total is the number of objects found under Src.
	Total int64 `json:"total"`
	// Counters count the objects transformed so far, failed ones included
	// (Errors).
	Counters etlv1alpha1.Counters `json:"counters"`
	// Errors are the most recent failed objects, at most
	// etlv1alpha1.MaxObjectErrors.
	Errors []etlv1alpha1.ObjectError `json:"errors,omitempty"`
	// Planned lists, for a dry run, the first RunMaxPlanned objects and
	// where each would be written.
	Planned  []RunItem  `json:"planned,omitempty"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
}

// RunItem is one object of a run and the name its result gets.
type RunItem struct {
	Object string `json:"object"`
	Dst    string `json:"dst"`
}

// Validate checks a request and fills in its defaults; its errors name the
// field and say what to do.
func (r *RunRequest) Validate() error {
	var err error
	if r.Src, err = cleanDir("src", r.Src); err != nil {
		return err
	}
	if r.Dst, err = cleanDir("dst", r.Dst); err != nil {
		return err
	}
	if r.Src == r.Dst || within(r.Dst, r.Src) || within(r.Src, r.Dst) {
		return fmt.Errorf("dst %q overlaps src %q: results would be read as input; choose a destination outside the source", r.Dst, r.Src)
	}
	switch {
	case r.Workers == 0:
		r.Workers = RunDefaultWorkers
	case r.Workers < 0 || r.Workers > RunMaxWorkers:
		return fmt.Errorf("workers %d: must be between 1 and %d", r.Workers, RunMaxWorkers)
	}
	return nil
}

// cleanDir checks a directory under the data root and drops a trailing
// slash.
func cleanDir(field, dir string) (string, error) {
	d := strings.TrimSuffix(dir, "/")
	if d == "" || d == "." {
		return "", fmt.Errorf("%s %q: name a directory under the data root, not the root itself", field, dir)
	}
	if err := CheckObject(d); err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	if path.Clean(d) != d {
		return "", fmt.Errorf("%s %q: write it as %q", field, dir, path.Clean(d))
	}
	return d, nil
}

// within reports whether name is under dir.
func within(name, dir string) bool { return strings.HasPrefix(name, dir+"/") }
