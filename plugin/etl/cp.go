package etl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// defaultParallel objects at once keep one port-forward busy without queueing behind it.
const defaultParallel = 8

type cpOptions struct {
	env      *cli.Env
	dataPath dataPath
	cmd      *cobra.Command
	src, dst string
	// store is a copy between an ObjectStore and the namespace's objects, done by the agents.
	store          *storeCopy
	parallel       int
	skipExisting   bool
	quiet          bool
	serviceAccount string
}

func newCpCommand(env *cli.Env, dp dataPath) *cobra.Command {
	o := &cpOptions{env: env, dataPath: dp}
	cmd := &cobra.Command{
		Use:   "cp SRC DST",
		Short: "Copy files and directories to and from the namespace's objects",
		Long: `Copy between local files (or "-", stdin and stdout) and the objects of the namespace, written
etl:NAME, either way. A name ending in "/" (or etl: alone) is a prefix: a local directory goes
under it with each file's relative path, and every object under it comes down into the local
directory DST with its name relative to the prefix.

All objects travel through one port-forward to a Ready data path agent, --parallel at a time,
with one token of --service-account; every upload carries its SHA-256, which the agent verifies,
and every download is written under a temporary name, renamed once complete and verified. With
--skip-existing, objects whose size and SHA-256 already match at the destination are skipped, so
a copy run again after an interruption resumes where it stopped. Reading needs the ClusterRole
mlkube-datapath-viewer bound in the namespace, writing mlkube-datapath-user.

With s3://STORE/PREFIX on one side (STORE an ObjectStore of the namespace), the copy is a
TransformRun without a transform that the data path agents carry out, each node fetching from or
putting to the store its own share; the command follows it with a progress bar. It needs get on
the ObjectStore and on the Secret mlkube-object-stores, as the built-in edit role grants.`,
		Example: `  # A directory into raw/: raw/<path relative to ./data>
  kubectl etl cp ./data etl:raw/

  # Everything under out/ into ./out, resuming an interrupted copy
  kubectl etl cp etl:out/ ./out --skip-existing

  # One object from stdin, and back to stdout
  tar c src | kubectl etl cp - etl:backup/src.tar
  kubectl etl cp etl:backup/src.tar - | tar t

  # A bucket's prefix into the namespace's objects, and back: the agents copy on every node
  kubectl etl cp s3://raw/images etl:images/
  kubectl etl cp etl:out/ s3://processed/out`,
		Args: cli.ExactArgs("SRC", "DST"),
		RunE: cli.RunE(o),
	}
	fs := cmd.Flags()
	fs.IntVar(&o.parallel, "parallel", defaultParallel, fmt.Sprintf("Objects copied at once, at most %d.", maxParallel))
	fs.BoolVar(&o.skipExisting, "skip-existing", false, "Skip objects whose size and SHA-256 match at the destination.")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "Print no progress.")
	addServiceAccountFlag(cmd, env, &o.serviceAccount)
	return cmd
}

func (o *cpOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.src, o.dst = cmd, args[0], args[1]
	return nil
}

func (o *cpOptions) Validate() error {
	var err error
	if o.store, err = parseStoreCopy(o.src, o.dst); err != nil {
		return cli.UsageError(o.cmd, "%v", err)
	}
	if o.store != nil {
		return nil
	}
	up, down := strings.HasPrefix(o.dst, remoteScheme), strings.HasPrefix(o.src, remoteScheme)
	switch {
	case up == down:
		return cli.UsageError(o.cmd, "one of SRC and DST must be objects, written etl:NAME, and the other local")
	case o.parallel < 1 || o.parallel > maxParallel:
		return cli.UsageError(o.cmd, "--parallel must be between 1 and %d", maxParallel)
	case up && o.src == "-" && isPrefix(objectArg(o.dst)):
		return cli.UsageError(o.cmd, "stdin is one object: name it, as in etl:%sNAME", objectArg(o.dst))
	case down && o.dst == "-" && isPrefix(objectArg(o.src)):
		return cli.UsageError(o.cmd, "stdout takes one object: name it, as in etl:%sNAME", objectArg(o.src))
	}
	return nil
}

// isPrefix says whether an object argument names a prefix rather than one object.
func isPrefix(name string) bool { return name == "" || strings.HasSuffix(name, "/") }

// transfer is one object to copy, with the local file it comes from or goes to.
type transfer struct {
	object, local string
	// remote describes the object, when it exists: from the list or HEAD of the destination on
	// upload (for --skip-existing), from the source on download.
	remote wire.ObjectInfo
}

func (o *cpOptions) Run(ctx context.Context) error {
	if o.store != nil {
		return o.runStoreCopy(ctx, o.store)
	}
	c, _, stop, err := openObjects(ctx, o.env, o.dataPath, o.serviceAccount)
	if err != nil {
		return err
	}
	defer stop()
	if strings.HasPrefix(o.dst, remoteScheme) {
		return o.upload(ctx, c)
	}
	return o.download(ctx, c)
}

func (o *cpOptions) upload(ctx context.Context, c *objectClient) error {
	src := o.src
	if src == "-" {
		spool, err := spoolStdin(o.env.In)
		if err != nil {
			return err
		}
		defer os.Remove(spool)
		src = spool
	}
	plan, err := uploadPlan(src, objectArg(o.dst), o.src == "-")
	if err != nil {
		return err
	}
	if o.skipExisting {
		if err := o.listDestination(ctx, c, plan); err != nil {
			return err
		}
	}
	return o.copyAll(ctx, plan, "uploaded", func(ctx context.Context, t transfer) (bool, error) { return uploadFile(ctx, c, t, o.skipExisting) })
}

// uploadPlan names the objects of the local src under dst: a file is dst, or under a prefix its
// base name; a directory's files go under dst as a prefix, by their paths relative to src.
func uploadPlan(src, dst string, stdin bool) ([]transfer, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if isPrefix(dst) && !stdin {
			dst += filepath.Base(src)
		}
		return []transfer{{object: dst, local: src}}, wire.CheckObject(dst)
	}
	if !isPrefix(dst) {
		dst += "/"
	}
	var plan []transfer
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := dst + filepath.ToSlash(rel)
		plan = append(plan, transfer{object: name, local: p})
		return wire.CheckObject(name)
	})
	return plan, err
}

// spoolStdin copies stdin to a temporary file: its checksum goes ahead of its bytes, and a
// stream can be read only once.
func spoolStdin(in io.Reader) (string, error) {
	f, err := os.CreateTemp("", "kubectl-etl-cp-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, in)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("reading stdin: %w", err)
	}
	return f.Name(), nil
}

// listDestination fills each transfer's remote with the object of its name, listing the
// directory (up to a "/") that holds them all.
func (o *cpOptions) listDestination(ctx context.Context, c *objectClient, plan []transfer) error {
	if len(plan) == 0 {
		return nil
	}
	prefix := plan[0].object
	for _, t := range plan[1:] {
		for !strings.HasPrefix(t.object, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	prefix = prefix[:strings.LastIndex(prefix, "/")+1]
	list, err := c.List(ctx, prefix, "", 0)
	if err != nil {
		return err
	}
	existing := make(map[string]wire.ObjectInfo, len(list.Items))
	for _, it := range list.Items {
		existing[it.Name] = it
	}
	for i := range plan {
		plan[i].remote = existing[plan[i].object]
	}
	return nil
}

// uploadFile sends t's file with its checksum, computed in a first pass over it; with skip, an
// object of the same size and checksum stays. It says whether it skipped.
func uploadFile(ctx context.Context, c *objectClient, t transfer, skip bool) (bool, error) {
	f, err := os.Open(t.local)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sum, size, err := sha256Of(f)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", t.local, err)
	}
	if skip && same(t.remote, size, sum) {
		return true, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	return false, c.Put(ctx, t.object, f, size, sum)
}

func (o *cpOptions) download(ctx context.Context, c *objectClient) error {
	src := objectArg(o.src)
	var plan []transfer
	if isPrefix(src) {
		list, err := c.List(ctx, src, "", 0)
		if err != nil {
			return err
		}
		for _, it := range list.Items {
			rel := strings.TrimPrefix(it.Name, src)
			// A name relative to the prefix must stay inside DST, as an object name stays in
			// its namespace.
			if err := wire.CheckObject(rel); err != nil {
				return fmt.Errorf("object %s cannot be a file under %s: %w", it.Name, o.dst, err)
			}
			plan = append(plan, transfer{object: it.Name, local: filepath.Join(o.dst, filepath.FromSlash(rel)), remote: it})
		}
		if len(plan) == 0 {
			return fmt.Errorf("no objects under %q in namespace %s; see kubectl etl ls", src, c.namespace)
		}
	} else {
		info, err := c.Head(ctx, src)
		if err != nil {
			return err
		}
		local := o.dst
		if st, err := os.Stat(local); strings.HasSuffix(local, string(filepath.Separator)) || err == nil && st.IsDir() {
			local = filepath.Join(local, path.Base(src))
		}
		plan = []transfer{{object: src, local: local, remote: info}}
	}
	return o.copyAll(ctx, plan, "downloaded", func(ctx context.Context, t transfer) (bool, error) {
		return downloadFile(ctx, c, t, o.skipExisting, o.env.Out)
	})
}

// downloadFile writes t's object to its local file (stdout for "-") under a temporary name,
// renamed once complete and its checksum verified; with skip, a local file of the same size and
// checksum stays. It says whether it skipped.
func downloadFile(ctx context.Context, c *objectClient, t transfer, skip bool, stdout io.Writer) (bool, error) {
	if skip && t.local != "-" && localMatches(t.local, t.remote) {
		return true, nil
	}
	if t.local != "-" {
		if err := os.MkdirAll(filepath.Dir(t.local), 0o755); err != nil {
			return false, err
		}
	}
	return false, writeResult(t.local, stdout, func(w io.Writer) error {
		body, info, err := c.Get(ctx, t.object)
		if err != nil {
			return err
		}
		defer body.Close()
		return copyVerified(w, body, t.object, info.Checksum)
	})
}

// localMatches says whether the file at p has the object's size and checksum.
func localMatches(p string, remote wire.ObjectInfo) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	sum, size, err := sha256Of(f)
	return err == nil && same(remote, size, sum)
}

// copyAll runs copyOne on every transfer, o.parallel at once, drawing the progress; the first
// failure stops the copy and says how to resume it.
func (o *cpOptions) copyAll(ctx context.Context, plan []transfer, verb string, copyOne func(context.Context, transfer) (bool, error)) error {
	p := newCopyProgress(o.env.ErrOut, isTerminal(o.env.ErrOut), o.quiet, verb, len(plan))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.parallel)
	for _, t := range plan {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			skipped, err := copyOne(gctx, t)
			if err != nil {
				return fmt.Errorf("%s: %w", t.object, err)
			}
			p.finished(t, skipped)
			return nil
		})
	}
	err := g.Wait()
	p.done(err == nil)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w; %s; run the same cp with --skip-existing to copy the rest", err, p.summary())
	}
	return nil
}
