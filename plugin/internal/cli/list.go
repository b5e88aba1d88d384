package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ListFlags are the flags of kubectl get that a plugin's list and get commands take.
type ListFlags struct {
	Print         *PrintFlags
	AllNamespaces bool
	LabelSelector string
	FieldSelector string
	Watch         bool
	WatchOnly     bool
	ChunkSize     int64
}

// NewListFlags returns the flags with kubectl's defaults (pages of 500).
func NewListFlags() *ListFlags {
	return &ListFlags{Print: NewPrintFlags(true), ChunkSize: 500}
}

// AddFlags binds the flags to cmd.
func (f *ListFlags) AddFlags(cmd *cobra.Command) {
	f.Print.AddFlags(cmd)
	fl := cmd.Flags()
	fl.BoolVarP(&f.AllNamespaces, "all-namespaces", "A", false, "List across all namespaces.")
	fl.StringVarP(&f.LabelSelector, "selector", "l", "", "Label selector to filter on, e.g. -l 'team=vision,tier!=dev'.")
	fl.StringVar(&f.FieldSelector, "field-selector", "", "Field selector to filter on, e.g. --field-selector metadata.name=job1.")
	fl.BoolVarP(&f.Watch, "watch", "w", false, "After listing, watch for changes.")
	fl.BoolVar(&f.WatchOnly, "watch-only", false, "Watch for changes without listing first.")
	fl.Int64Var(&f.ChunkSize, "chunk-size", f.ChunkSize, "Fetch large lists in pages of this many objects; 0 fetches them at once.")
}

// Validate checks the selectors and -o before any API call.
func (f *ListFlags) Validate(cmd *cobra.Command) error {
	return f.ValidateNames(cmd, nil)
}

// ValidateNames is Validate for a command given names, which -A cannot go with: a name is
// looked up in one namespace, as kubectl get says.
func (f *ListFlags) ValidateNames(cmd *cobra.Command, names []string) error {
	if f.AllNamespaces && len(names) > 0 {
		return UsageError(cmd, "a resource cannot be retrieved by name across all namespaces")
	}
	if _, err := labels.Parse(f.LabelSelector); err != nil {
		return UsageError(cmd, "invalid --selector: %v", err)
	}
	if _, err := fields.ParseSelector(f.FieldSelector); err != nil {
		return UsageError(cmd, "invalid --field-selector: %v", err)
	}
	if f.ChunkSize < 0 {
		return UsageError(cmd, "--chunk-size must not be negative")
	}
	return f.Print.Validate()
}

// Lister lists one kind with ListFlags and prints it: as kubectl get does for the list, for
// names given (each fetched, so a missing one is an error), and for -w.
type Lister[T client.Object] struct {
	Env      *Env
	Flags    *ListFlags
	Resource Resource[T]
}

// Run lists the objects named by names (all of them when empty) and prints them.
func (l *Lister[T]) Run(ctx context.Context, names []string) error {
	c, err := l.Env.Clients.Client()
	if err != nil {
		return err
	}
	ns, err := l.namespace()
	if err != nil {
		return err
	}
	p, err := l.printer()
	if err != nil {
		return err
	}
	var objs []runtime.Object
	var rv string
	if !l.Flags.WatchOnly {
		if objs, rv, err = l.fetch(ctx, c, ns, names); err != nil {
			return err
		}
		if err := l.print(p, objs, len(names) == 1); err != nil {
			return err
		}
	}
	if l.Flags.Watch || l.Flags.WatchOnly {
		return l.watch(ctx, c, ns, names, rv, p)
	}
	return nil
}

func (l *Lister[T]) namespace() (string, error) {
	if l.Flags.AllNamespaces {
		return "", nil
	}
	ns, _, err := l.Env.Clients.Namespace()
	return ns, err
}

// fetch gets the named objects, or lists them page by page, returning the resourceVersion to
// watch from.
func (l *Lister[T]) fetch(ctx context.Context, c client.Client, ns string, names []string) ([]runtime.Object, string, error) {
	if len(names) > 0 {
		var objs []runtime.Object
		for _, name := range names {
			o, err := l.get(ctx, c, ns, name)
			if err != nil {
				return nil, "", err
			}
			objs = append(objs, o)
		}
		return objs, "", nil
	}
	opts, err := l.listOptions(ns, nil)
	if err != nil {
		return nil, "", err
	}
	opts.Limit = l.Flags.ChunkSize
	var objs []runtime.Object
	for {
		list := l.Resource.NewList()
		if err := c.List(ctx, list, opts); err != nil {
			return nil, "", err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, "", err
		}
		objs = append(objs, items...)
		opts.Continue = list.GetContinue()
		if opts.Continue == "" {
			return objs, list.GetResourceVersion(), nil
		}
	}
}

func (l *Lister[T]) get(ctx context.Context, c client.Client, ns, name string) (runtime.Object, error) {
	obj := l.Resource.New()
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// listOptions turns the flags into list options; names narrows a watch to one object.
func (l *Lister[T]) listOptions(ns string, names []string) (*client.ListOptions, error) {
	ls, err := labels.Parse(l.Flags.LabelSelector)
	if err != nil {
		return nil, err
	}
	fs, err := fields.ParseSelector(l.Flags.FieldSelector)
	if err != nil {
		return nil, err
	}
	if len(names) == 1 {
		fs = fields.AndSelectors(fs, fields.OneTermEqualSelector("metadata.name", names[0]))
	}
	opts := &client.ListOptions{Namespace: ns}
	if !ls.Empty() {
		opts.LabelSelector = ls
	}
	if !fs.Empty() {
		opts.FieldSelector = fs
	}
	return opts, nil
}

// printer is the -o printer, or nil for a table.
func (l *Lister[T]) printer() (func(runtime.Object) error, error) {
	out := l.Env.Out
	if l.Flags.Print.IsTable() {
		tp := l.Flags.Print.TablePrinter(l.Flags.AllNamespaces)
		return func(o runtime.Object) error { return tp.PrintObj(o, out) }, nil
	}
	p, err := l.Flags.Print.ObjectPrinter(l.Env.Scheme)
	if err != nil {
		return nil, err
	}
	return func(o runtime.Object) error { return p.PrintObj(o, out) }, nil
}

// print prints objs: a table, a single object, or a v1 List. An empty table is a message on
// stderr, as kubectl's, so scripts reading stdout see nothing.
func (l *Lister[T]) print(p func(runtime.Object) error, objs []runtime.Object, single bool) error {
	if l.Flags.Print.IsTable() {
		if len(objs) == 0 {
			return l.noneFound()
		}
		return p(l.Resource.Table(objs, l.Env.Clock.Now()))
	}
	if single && len(objs) == 1 {
		u, err := ToUnstructured(objs[0], l.Env.Scheme)
		if err != nil {
			return err
		}
		return p(u)
	}
	list, err := AsList(objs, l.Env.Scheme)
	if err != nil {
		return err
	}
	return p(list)
}

func (l *Lister[T]) noneFound() error {
	if l.Flags.Watch || l.Flags.WatchOnly {
		return nil
	}
	if l.Flags.AllNamespaces {
		fmt.Fprintf(l.Env.ErrOut, "No %s found.\n", l.Resource.Plural)
		return nil
	}
	ns, _, err := l.Env.Clients.Namespace()
	if err != nil {
		return err
	}
	fmt.Fprintf(l.Env.ErrOut, "No %s found in namespace %s.\n", l.Resource.Plural, ns)
	return nil
}

// watch prints every change after resourceVersion rv until the user interrupts.
func (l *Lister[T]) watch(ctx context.Context, c client.WithWatch, ns string, names []string, rv string, p func(runtime.Object) error) error {
	if len(names) > 1 {
		return errors.New("watch is only supported on a single object or the whole list; name one or none")
	}
	opts, err := l.listOptions(ns, names)
	if err != nil {
		return err
	}
	opts.Raw = &metav1.ListOptions{ResourceVersion: rv}
	w, err := c.Watch(ctx, l.Resource.NewList(), opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			if ev.Type == watch.Error {
				return fmt.Errorf("watch: %v", ev.Object)
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			if err := l.print(p, []runtime.Object{ev.Object}, true); err != nil {
				return err
			}
		}
	}
}
