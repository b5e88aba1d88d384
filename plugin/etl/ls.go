package etl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// lsOutputs are the formats of ls's -o besides the table.
var lsOutputs = []string{"json", "yaml", "name"}

type lsOptions struct {
	env            *cli.Env
	dataPath       dataPath
	cmd            *cobra.Command
	prefix         string
	output         string
	noHeaders      bool
	recursive      bool
	limit          int
	serviceAccount string
	// store is the ObjectStore of an s3://STORE/PREFIX argument.
	store string
}

func newLsCommand(env *cli.Env, dp dataPath) *cobra.Command {
	o := &lsOptions{env: env, dataPath: dp}
	cmd := &cobra.Command{
		Use:   "ls [PREFIX | s3://STORE/PREFIX]",
		Short: "List the namespace's objects, or an ObjectStore's",
		Long: `List the objects of the namespace whose names start with PREFIX (etl:PREFIX works too), one row
each with its size, age and node. As ls does, the names below the next "/" are grouped into one
entry ending in "/"; --recursive lists every object instead. Needs the ClusterRole
mlkube-datapath-viewer bound in the namespace to --service-account.

With s3://STORE/PREFIX, list the keys under PREFIX of the namespace's ObjectStore STORE instead: an
agent lists the bucket with the store's keys, which never leave the cluster, for a
--service-account that may get the ObjectStore (mlkube-datapath-viewer grants it).`,
		Example: `  # The top of the namespace's objects
  kubectl etl ls

  # Every object under raw/, as JSON
  kubectl etl ls raw/ --recursive -o json

  # The keys under images/ of the ObjectStore raw
  kubectl etl ls s3://raw/images/`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.output, "output", "o", "", "Output format. One of: (json, yaml, name).")
	fs.BoolVar(&o.noHeaders, "no-headers", false, "When using the default output format, don't print headers.")
	fs.BoolVarP(&o.recursive, "recursive", "R", false, "List every object under PREFIX, not grouping names by \"/\".")
	fs.IntVar(&o.limit, "limit", 0, "List at most about this many entries (whole pages of the agent's list); 0 lists all.")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(lsOutputs, cobra.ShellCompDirectiveNoFileComp))
	addServiceAccountFlag(cmd, env, &o.serviceAccount)
	return cmd
}

func (o *lsOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd = cmd
	if len(args) == 1 && strings.HasPrefix(args[0], storeScheme) {
		o.store, o.prefix, _ = strings.Cut(strings.TrimPrefix(args[0], storeScheme), "/")
		if o.store == "" {
			return cli.UsageError(cmd, "%s: want s3://STORE/PREFIX, STORE an ObjectStore of the namespace (kubectl get objectstores)", args[0])
		}
		return nil
	}
	if len(args) == 1 {
		o.prefix = objectArg(args[0])
	}
	return nil
}

func (o *lsOptions) Validate() error {
	switch o.output {
	case "", "json", "yaml", "name":
	default:
		return cli.UsageError(o.cmd, "unknown output format %q; use one of: json, yaml, name", o.output)
	}
	if o.limit < 0 {
		return cli.UsageError(o.cmd, "--limit must not be negative")
	}
	return nil
}

func (o *lsOptions) Run(ctx context.Context) error {
	c, _, stop, err := openObjects(ctx, o.env, o.dataPath, o.serviceAccount)
	if err != nil {
		return err
	}
	defer stop()
	c.store = o.store
	delimiter := "/"
	if o.recursive {
		delimiter = ""
	}
	list, err := c.List(ctx, o.prefix, delimiter, o.limit)
	if err != nil {
		return err
	}
	return o.print(list, c.namespace)
}

func (o *lsOptions) print(list wire.ObjectList, namespace string) error {
	switch o.output {
	case "json", "yaml":
		return cli.PrintData(o.env.Out, o.output, list)
	case "name":
		for _, n := range entryNames(list) {
			fmt.Fprintln(o.env.Out, n)
		}
		return nil
	}
	if len(list.Items)+len(list.Prefixes) == 0 {
		where := "namespace " + namespace
		if o.store != "" {
			where = fmt.Sprintf("ObjectStore %s of namespace %s", o.store, namespace)
		}
		fmt.Fprintf(o.env.ErrOut, "No objects found under %q in %s.\n", o.prefix, where)
		return nil
	}
	p := cli.NewPrintFlags(true)
	p.NoHeaders = o.noHeaders
	return p.TablePrinter(false).PrintObj(ObjectTable(list, o.env.Clock.Now()), o.env.Out)
}

// entryNames are the names of a list's prefixes and objects, in the order of the table.
func entryNames(list wire.ObjectList) []string {
	names := append([]string{}, list.Prefixes...)
	for _, it := range list.Items {
		names = append(names, it.Name)
	}
	return names
}

// ObjectTable is the table of ls: the grouped prefixes first, as directories, then the objects.
func ObjectTable(list wire.ObjectList, now time.Time) *metav1.Table {
	tbl := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		cli.NameColumn, column("Size", 0), column("Modified", 0), column("Node", 0),
	}}
	for _, p := range list.Prefixes {
		tbl.Rows = append(tbl.Rows, metav1.TableRow{Cells: []any{p, "", "", ""}})
	}
	for _, it := range list.Items {
		tbl.Rows = append(tbl.Rows, metav1.TableRow{Cells: []any{it.Name, Bytes(it.Size),
			cli.Age(metav1.NewTime(it.Modified), now), orNone(it.Node)}})
	}
	return tbl
}
