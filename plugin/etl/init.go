package etl

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/etl/aisspec"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// initOptions create the Transforms one of init's forms builds.
type initOptions struct {
	env    *cli.Env
	cmd    *cobra.Command
	print  *cli.PrintFlags
	dryRun string
	// build makes the Transforms, in the namespace given, once the flags are parsed: those of
	// AIStore's specs with the changes their conversion made.
	build func(ctx context.Context, namespace string, c Common) ([]*aisspec.Conversion, error)

	comm, ioMode, arg          string
	initTimeout, objectTimeout time.Duration
	conversions                []*aisspec.Conversion
}

// common reads the flags shared by every form; only those given override the file's values.
func (o *initOptions) common(fs *pflag.FlagSet) Common {
	var c Common
	if fs.Changed("comm-type") {
		c.Communication = &o.comm
	}
	if fs.Changed("io-mode") {
		c.IOMode = &o.ioMode
	}
	if fs.Changed("arg-type") {
		c.Argument = &o.arg
	}
	if fs.Changed("init-timeout") {
		c.InitTimeout = &o.initTimeout
	}
	if fs.Changed("object-timeout") {
		c.ObjectTimeout = &o.objectTimeout
	}
	return c
}

func (o *initOptions) Complete(cmd *cobra.Command, _ []string) error {
	o.cmd = cmd
	ns, _, err := o.env.Clients.Namespace()
	if err != nil {
		return err
	}
	o.conversions, err = o.build(cmd.Context(), ns, o.common(cmd.Flags()))
	return err
}

func (o *initOptions) Validate() error {
	switch o.dryRun {
	case "none", "client", "server":
	default:
		return cli.UsageError(o.cmd, "--dry-run must be none, client or server, not %q", o.dryRun)
	}
	if o.print.Output() == "" {
		return nil
	}
	return o.print.Validate()
}

func (o *initOptions) Run(ctx context.Context) error {
	transforms := make([]*v1alpha1.Transform, len(o.conversions))
	for i, conv := range o.conversions {
		cli.ReportConversion(o.env, conv.From, conv.Transform.Name, conv.Changes)
		transforms[i] = conv.Transform
	}
	return cli.CreateEach(ctx, o.env, o.dryRun, transforms,
		func(t *v1alpha1.Transform, err error) error {
			return fmt.Errorf("creating Transform %s: %w", t.Name, err)
		},
		o.report)
}

// report prints the Transform with -o, else what was done, as kubectl create does.
func (o *initOptions) report(t *v1alpha1.Transform) error {
	suffix := ""
	if o.dryRun != "none" {
		suffix = " (" + o.dryRun + " dry run)"
	}
	return cli.ReportCreated(o.env, o.print, t, "transform.etl.mlkube.io/"+t.Name+" created"+suffix)
}

// addFlags binds the flags every form takes.
func (o *initOptions) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&o.comm, "comm-type", string(v1alpha1.DefaultCommunication), "How the agent hands objects to the transformer: hpush, hpull, io or ws.")
	fs.StringVar(&o.ioMode, "io-mode", string(v1alpha1.IOPerObject), "With --comm-type io: PerObject (the command runs once per object) or Persistent (once per worker, objects length-prefixed on stdin; see docs/transforms.md).")
	fs.StringVar(&o.arg, "arg-type", "", `What the transformer receives per object: "" (the bytes), fqn (a path on the node) or url.`)
	fs.DurationVar(&o.initTimeout, "init-timeout", v1alpha1.DefaultInitTimeout, "How long a transformer may take to become ready.")
	fs.DurationVar(&o.objectTimeout, "object-timeout", v1alpha1.DefaultObjectTimeout, "How long the transformation of one object may take.")
	fs.StringVar(&o.dryRun, "dry-run", "none", "none, client (print the Transform without sending it) or server (the webhook checks and defaults it, nothing is stored).")
	o.print.AddFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("comm-type", cobra.FixedCompletions([]string{"hpush", "hpull", "io", "ws"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("io-mode", cobra.FixedCompletions([]string{string(v1alpha1.IOPerObject), string(v1alpha1.IOPersistent)}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("arg-type", cobra.FixedCompletions([]string{"fqn", "url"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{"none", "client", "server"}, cobra.ShellCompDirectiveNoFileComp))
}

func newInitOptions(env *cli.Env) *initOptions {
	return &initOptions{env: env, print: cli.NewPrintFlags(false)}
}

func newInitCommand(env *cli.Env) *cobra.Command {
	o := newInitOptions(env)
	var file string
	o.build = func(ctx context.Context, ns string, c Common) ([]*aisspec.Conversion, error) {
		if file == "" {
			return nil, cli.UsageError(o.cmd, "pass -f with Transforms or AIStore ETL specs, or use init spec or init code")
		}
		docs, err := cli.ReadDocuments(ctx, file, env.In)
		if err != nil {
			return nil, err
		}
		return FileTransforms(docs, ns, c)
	}
	cmd := &cobra.Command{
		Use:   "init -f FILE | init spec | init code",
		Short: "Create Transforms from a file or URL (AIStore ETL specs too), one AIStore spec, or code",
		Long: `Create Transforms: from a file, URL or stdin (-f, several documents allowed) of Transforms or of
AIStore's ETL specs, from one AIStore spec under another name (init spec), or from source code run
by one of mlkube's runtimes (init code). AIStore's runtime specs (name, runtime.image/command/env,
communication, argument, init_timeout, obj_timeout, support_direct_put, resources) and its Pod specs
with their communication_type, wait_timeout and support_direct_put annotations are converted to
Transforms, each change printed to stderr; what mlkube has no equivalent for is dropped with the
reason, or refused naming the field. The flags below override what a file says.`,
		Example: `  # Transforms from a file, fed over WebSocket whatever the file says
  kubectl etl init -f transforms.yaml --comm-type ws

  # AIStore's published md5 transformer, checked by the admission webhook without storing it
  kubectl etl init -f https://raw.githubusercontent.com/NVIDIA/ais-etl/main/transformers/md5/etl_spec.yaml --dry-run=server

  # From stdin, showing what the admission webhook makes of it
  cat md5.yaml | kubectl etl init -f - --dry-run=server -o yaml`,
		Args: cli.ExactArgs(),
		RunE: cli.RunE(o),
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", `File or http(s) URL of Transforms or AIStore ETL specs (YAML or JSON, several documents), or "-" for stdin.`)
	o.addFlags(cmd)
	cmd.AddCommand(newInitSpecCommand(env), newInitCodeCommand(env))
	return cmd
}

func newInitSpecCommand(env *cli.Env) *cobra.Command {
	o := newInitOptions(env)
	var file, name string
	o.build = func(ctx context.Context, ns string, c Common) ([]*aisspec.Conversion, error) {
		doc, err := oneDocument(ctx, file, env.In)
		if err != nil {
			return nil, err
		}
		conv, err := SpecTransform(doc, name, ns, c)
		if err != nil {
			return nil, err
		}
		return []*aisspec.Conversion{conv}, nil
	}
	cmd := &cobra.Command{
		Use:   "spec -f SPEC.yaml [--name NAME]",
		Short: "Create a Transform from one AIStore ETL spec (runtime spec or Pod), under a name of your choice",
		Long: `Create a Transform from one AIStore ETL spec, as "ais etl init spec" does: a runtime spec
(name, runtime.image, …) becomes a Transform of the runtime form, a Pod manifest (one container with
a port named "default") one of the podTemplate form, its communication_type and wait_timeout
annotations fields. Each change is printed to stderr. The flags win over the spec.`,
		Example: `  # A Transform md5 from an AIStore ETL pod spec
  kubectl etl init spec -f md5_pod.yaml --name md5

  # From AIStore's runtime spec, over hpull, with ten seconds to become ready
  kubectl etl init spec -f etl_spec.yaml --name echo --comm-type hpull --init-timeout 10s`,
		Args: cli.ExactArgs(),
		RunE: cli.RunE(o),
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", `The AIStore ETL spec: a file, an http(s) URL or "-" for stdin.`)
	cmd.Flags().StringVar(&name, "name", "", "Name of the Transform; defaults to the spec's.")
	_ = cmd.MarkFlagRequired("filename")
	o.addFlags(cmd)
	return cmd
}

func newInitCodeCommand(env *cli.Env) *cobra.Command {
	o := newInitOptions(env)
	var name, source, deps string
	code := Code{}
	var cmd *cobra.Command
	o.build = func(_ context.Context, ns string, c Common) ([]*aisspec.Conversion, error) {
		cli.WarnOldFlagName(cmd, "chunk-size", "stream-chunk-size", "in get and list, --chunk-size pages lists")
		src, err := readFile(source, env.In)
		if err != nil {
			return nil, err
		}
		code.Source = string(src)
		if deps != "" {
			d, err := readFile(deps, env.In)
			if err != nil {
				return nil, err
			}
			code.Dependencies = string(d)
		}
		t, err := CodeTransform(code, name, ns, c)
		if err != nil {
			return nil, err
		}
		return []*aisspec.Conversion{{Transform: t}}, nil
	}
	cmd = &cobra.Command{
		Use:   "code --name NAME --runtime RUNTIME --from-file FILE",
		Short: "Create a Transform from source code, run by one of mlkube's runtime images",
		Long: fmt.Sprintf(`Create a Transform of the code form: the source defines a function (transform by default)
called with each object's bytes, whose return value is the result. As AIStore's, it may also take
the object's name and the request's args (run --args, object --args): transform(data, path,
etl_args), transform(data, *rest), or keyword-only path and etl_args. Runtimes: %v.`, v1alpha1.CodeRuntimes),
		Example: `  # upper.py defines transform(data: bytes) -> bytes
  kubectl etl init code --name upper --runtime python3.11 --from-file upper.py

  # hash.py defines transform(data, path, etl_args), which run --args reaches
  kubectl etl init code --name hash --runtime python3.11 --from-file hash.py

  # With pip requirements, another function name, and objects in 1 MiB chunks
  kubectl etl init code --name resize --runtime python3.11 --from-file resize.py \
    --deps-file requirements.txt --function resize --stream-chunk-size 1048576`,
		Args: cli.ExactArgs(),
		RunE: cli.RunE(o),
	}
	fs := cmd.Flags()
	fs.StringVar(&name, "name", "", "Name of the Transform.")
	fs.StringVar(&code.Runtime, "runtime", "", fmt.Sprintf("Runtime image the code runs in: one of %v.", v1alpha1.CodeRuntimes))
	fs.StringVar(&source, "from-file", "", `The source file, or "-" for stdin.`)
	fs.StringVar(&deps, "deps-file", "", "A requirements file installed before the code runs.")
	fs.StringVar(&code.Function, "function", "", fmt.Sprintf("The function called per object (default %q).", v1alpha1.DefaultFunction))
	fs.Int64Var(&code.ChunkSize, "stream-chunk-size", 0, "Stream objects in chunks of this many bytes; 0 passes whole objects (spec.code.chunkSize).")
	// --chunk-size was this flag's first name; in the listing commands it pages lists, and a flag
	// name means one thing across both plugins.
	fs.Int64Var(&code.ChunkSize, "chunk-size", 0, "")
	cli.OldFlagName(cmd, "chunk-size")
	for _, f := range []string{"name", "runtime", "from-file"} {
		_ = cmd.MarkFlagRequired(f)
	}
	_ = cmd.RegisterFlagCompletionFunc("runtime", cobra.FixedCompletions(v1alpha1.CodeRuntimes, cobra.ShellCompDirectiveNoFileComp))
	o.addFlags(cmd)
	return cmd
}

// open opens name, or stdin for "-".
func open(name string, stdin io.Reader) (io.Reader, func(), error) {
	if name == "-" {
		return stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// oneDocument reads the only document of a file, URL or stdin.
func oneDocument(ctx context.Context, name string, stdin io.Reader) ([]byte, error) {
	docs, err := cli.ReadDocuments(ctx, name, stdin)
	if err != nil {
		return nil, err
	}
	var found [][]byte
	for _, d := range docs {
		if !cli.EmptyDocument(d) {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%s holds %d documents; init spec takes one (init -f takes several)", name, len(found))
	}
	return found[0], nil
}

// readFile reads name, or stdin for "-".
func readFile(name string, stdin io.Reader) ([]byte, error) {
	r, closeFile, err := open(name, stdin)
	if err != nil {
		return nil, err
	}
	defer closeFile()
	return io.ReadAll(r)
}
