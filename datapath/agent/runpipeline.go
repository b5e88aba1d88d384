package agent

import (
	"context"
	"io"
	"net/http"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/datapath/internal/dataroot"
	"github.com/mlkube/mlkube/datapath/noderun"
	"github.com/mlkube/mlkube/internal/status"
)

// runTransformers is the agent as its run executor sees it.
type runTransformers struct{ a *Agent }

var _ noderun.Transformers = runTransformers{}

func (t runTransformers) ParsePipeline(ns, pipeline string) ([]string, error) {
	p, err := parsePipeline(ns, pipeline)
	return p.pipeline, err
}

func (t runTransformers) Resolve(ctx context.Context, ns string, stages []string) (noderun.Pipeline, error) {
	targets, err := t.a.resolve(ctx, transformPath{namespace: ns, pipeline: stages})
	if err != nil {
		return nil, err
	}
	return runPipeline{a: t.a, data: t.a.data(ns), targets: targets}, nil
}

// runPipeline moves a run's objects through its transformers as the inline
// API does, counted in the Transforms' stats as inline objects are.
type runPipeline struct {
	a       *Agent
	data    *dataroot.Namespace
	targets []Target
}

// Transform returns an error that carries its status (status.Code), which
// the run records: an error of a Resolver's kind has none of its own.
func (p runPipeline) Transform(ctx context.Context, object, args string, open noderun.Opener, write func(io.Reader) error) error {
	o := &objectRun{a: p.a, object: object, start: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, objectTimeoutOf(p.targets))
	defer cancel()
	var err error
	// An object that panics fails alone: its worker goes on with the next.
	if perr := p.a.panics.Call("run object", func() { err = p.transform(ctx, o, object, args, open, write) }); perr != nil {
		err = status.With(http.StatusInternalServerError, perr)
	}
	if err == nil {
		o.finish(0, "")
		return nil
	}
	err = o.classify(err)
	code := statusOf(err)
	o.finish(code, status.Message(err))
	return status.With(code, err)
}

func (p runPipeline) transform(ctx context.Context, o *objectRun, object, args string, open noderun.Opener, write func(io.Reader) error) error {
	in, body, err := p.input(ctx, object, args, open)
	if err != nil {
		o.stages = append(o.stages, stageRun{t: p.targets[0]})
		return err
	}
	if body != nil {
		defer body.Close()
	}
	o.inSize = in.size
	result, _, err := o.run(ctx, p.targets, in)
	if err != nil {
		return err
	}
	defer result.Close()
	return write(result)
}

// input is a run's object: a file of the namespace's data, or an object of
// a store. A first stage that fetches objects by URL (presigns) is handed a
// presigned GET of the store's object, valid for the object's time, and
// fetches it itself; otherwise the bytes open fetches are held to the
// agent's object size limit as a PUT's are. The caller closes the body it
// returns.
func (p runPipeline) input(ctx context.Context, object, args string, open noderun.Opener) (input, io.Closer, error) {
	if open == nil {
		in, err := p.a.localInput(p.data, object, args)
		return in, nil, err
	}
	in := input{object: object, args: args}
	if presigns(p.targets[0]) {
		deadline, _ := ctx.Deadline()
		u, size, err := open.Presign(ctx, time.Until(deadline))
		if err != nil {
			return in, nil, err
		}
		if u != "" {
			// The transformer fetches it, not the agent, but an object the agent
			// would not relay is not handed on either; an unlisted size (-1) is
			// the transformer's to bound.
			if p.a.size.over(size) {
				return in, nil, p.a.size.err
			}
			in.src, in.size = u, max(size, 0)
			return in, nil, nil
		}
	}
	body, size, err := open.Open(ctx)
	if err != nil {
		return in, nil, err
	}
	in.size = size
	g, err := p.a.bodyInput(&in, body, nil)
	if err != nil {
		return in, nil, err
	}
	return in, g, nil
}

// presigns says whether a stage is handed a store's objects as presigned
// URLs: an hpull transformer that takes a URL, whose SDK fetches the
// store's origins its token Secret lists (docs/design/object-stores.md).
func presigns(t Target) bool {
	return t.Communication == etlv1alpha1.CommHPull && t.Argument == etlv1alpha1.ArgURL
}
