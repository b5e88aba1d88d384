package noderun

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// Key names a node run: the TransformRun's namespace and name.
type Key struct{ Namespace, Name string }

func (k Key) String() string { return k.Namespace + "/" + k.Name }

// Plan is a checked NodeRunSpec, ready to run: its pipeline parsed, its
// prefixes cleaned, and an objects or template source checked.
type Plan struct {
	spec   wire.NodeRunSpec
	stages []string
	// srcPrefix is the cleaned prefix of a prefix source, "" otherwise;
	// objects are the objects of a list or template source, a template's
	// made one by one as the run goes, never held as a list.
	srcPrefix string
	objects   wire.Objects
	dst       string
	// store is the ObjectStore the source's objects are read from, and
	// dstStore the one results are written to; nil: the namespace's data
	// on this node.
	store, dstStore *wire.RunStore
}

// Plan checks the spec the manager sent for run key and returns its plan.
// The webhook has checked the TransformRun already; the agent checks again
// what reaches its file system and names its files, since a spec that
// slipped past would write where it should not.
func (rs *Runs) Plan(key Key, spec wire.NodeRunSpec) (Plan, error) {
	p := Plan{spec: spec}
	if err := CheckKey(key); err != nil {
		return p, err
	}
	// The UID names the journal and the error manifest: a DNS label keeps
	// it one plain path element (Kubernetes UIDs are lowercase UUIDs).
	if msgs := validation.IsDNS1123Label(spec.UID); len(msgs) > 0 {
		return p, fmt.Errorf("uid %q: %s", spec.UID, strings.Join(msgs, "; "))
	}
	var err error
	// No pipeline: a copy, through no transformer.
	if spec.Pipeline != "" {
		if p.stages, err = rs.cfg.Transformers.ParsePipeline(key.Namespace, spec.Pipeline); err != nil {
			return p, err
		}
	} else if spec.Args != "" {
		return p, errors.New("args: a copy (no pipeline) has no transformer to pass them to")
	}
	if spec.Workers < 1 || spec.Workers > etlv1alpha1.MaxRunWorkersPerNode {
		return p, fmt.Errorf("workers %d: must be between 1 and %d", spec.Workers, etlv1alpha1.MaxRunWorkersPerNode)
	}
	if len(spec.Args) > wire.MaxArgs {
		return p, fmt.Errorf("args of %d bytes are over the limit of %d bytes (wire.MaxArgs)", len(spec.Args), wire.MaxArgs)
	}
	if p.dst, err = cleanRunDir("destination.prefix", spec.Destination.Prefix); err != nil {
		return p, err
	}
	if spec.Destination.ToExtension != "" && spec.Source.Extension == "" {
		return p, errors.New("destination.toExtension needs source.extension: it replaces that extension")
	}
	if err := p.planStore(rs.cfg, spec); err != nil {
		return p, err
	}
	err = p.planSource(spec.Source)
	return p, err
}

// planStore checks the ObjectStores of a source and a destination in
// one, and the run's nodes, among which the share of a store's objects is
// picked.
func (p *Plan) planStore(cfg Config, spec wire.NodeRunSpec) error {
	switch {
	case spec.Destination.Store != "" && (spec.DestinationStore == nil || spec.DestinationStore.Name != spec.Destination.Store):
		return fmt.Errorf("destination.store %q: the spec carries no ObjectStore of that name in destinationStore", spec.Destination.Store)
	case spec.Destination.Store == "" && spec.DestinationStore != nil:
		return errors.New("destinationStore: the spec's destination names no store")
	case spec.DestinationStore != nil && cfg.Stores == nil:
		return errors.New("destination.store: this agent writes to no object stores")
	}
	p.dstStore = spec.DestinationStore
	switch {
	case spec.Source.Store == "" && spec.SourceStore == nil:
		return nil
	case spec.SourceStore == nil || spec.SourceStore.Name != spec.Source.Store:
		return fmt.Errorf("source.store %q: the spec carries no ObjectStore of that name in sourceStore", spec.Source.Store)
	case cfg.Stores == nil:
		return errors.New("source.store: this agent reads from no object stores")
	case len(spec.Nodes) == 0 || len(spec.Nodes) > wire.MaxRunNodes:
		return fmt.Errorf("nodes: %d nodes; a run from a store names 1 to %d (wire.MaxRunNodes)", len(spec.Nodes), wire.MaxRunNodes)
	case !slices.Contains(spec.Nodes, cfg.Node):
		return fmt.Errorf("nodes: this node, %s, is not one of the run's nodes", cfg.Node)
	}
	p.store = spec.SourceStore
	return nil
}

// dropSource forgets the objects of a list or template source once the
// run's attempt ended: a list source's list is as large as the spec.
func (p *Plan) dropSource() {
	p.objects, p.spec.Source.Objects = wire.Objects{}, nil
}

// Stages are the Transforms of the plan's pipeline, in order.
func (p Plan) Stages() []string { return p.stages }

// CheckKey checks the namespace (a directory of the data root) and the
// TransformRun's name.
func CheckKey(k Key) error {
	if msgs := validation.IsDNS1123Label(k.Namespace); len(msgs) > 0 {
		return fmt.Errorf("bad namespace %q: %s", k.Namespace, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsDNS1123Subdomain(k.Name); len(msgs) > 0 {
		return fmt.Errorf("bad run name %q: %s", k.Name, strings.Join(msgs, "; "))
	}
	return nil
}

// planSource checks that src is exactly one of a prefix, a list and a
// template, and the names of the last two, one by one.
func (p *Plan) planSource(src etlv1alpha1.RunSource) error {
	kinds := 0
	for _, set := range []bool{src.Prefix != "", len(src.Objects) > 0, src.Template != ""} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return errors.New("source: set exactly one of prefix, objects and template")
	}
	if src.Prefix != "" {
		var err error
		p.srcPrefix, err = cleanRunDir("source.prefix", src.Prefix)
		return err
	}
	objects, err := wire.SourceObjects(src, wire.RunLimits)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	for o := range objects.Names() {
		// A store's keys are not the agent's files: one whose result
		// would be hidden fails alone (checkResult).
		if p.store == nil && hidden(o) {
			return fmt.Errorf("source: object %q is hidden (a path element starts with \".\"): those are the agent's own files (journals, temporary files), never input", o)
		}
	}
	p.objects = objects
	return nil
}

// cleanRunDir checks a directory of the namespace's data and drops a
// trailing slash; the namespace's root itself is refused, since a run's
// results must not be mixed with all of its data.
func cleanRunDir(field, dir string) (string, error) {
	d := strings.TrimSuffix(dir, "/")
	if d == "" || d == "." {
		return "", fmt.Errorf("%s %q: name a directory of the namespace's data, not its root", field, dir)
	}
	if err := wire.CheckObject(d); err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	if path.Clean(d) != d {
		return "", fmt.Errorf("%s %q: write it as %q", field, dir, path.Clean(d))
	}
	if hidden(d) {
		return "", fmt.Errorf("%s %q is hidden (a path element starts with \".\"): those are the agent's own", field, dir)
	}
	return d, nil
}

// hidden reports whether a path element of name starts with ".": journals
// and temporary files are hidden, and a run never reads them. It takes a
// name in a buffer as well (wire.Objects.Names).
func hidden[S ~string | ~[]byte](name S) bool {
	for i := range len(name) {
		if name[i] == '.' && (i == 0 || name[i-1] == '/') {
			return true
		}
	}
	return false
}

// checkResult checks the name of a result whose object came from a store:
// any S3 key is an object there, but the node tier's names are checked
// (wire.CheckObject) and its hidden ones are the agent's own.
func checkResult(name string) error {
	if err := wire.CheckObject(name); err != nil {
		return err
	}
	if hidden(name) {
		return fmt.Errorf("%q is hidden (a path element starts with \".\"), which the node tier keeps for the agent's own files", name)
	}
	return nil
}
