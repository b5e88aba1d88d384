package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Named is a command that acts on the objects named, or on every one of the namespace with
// --all, as kubectl delete does: delete, suspend and resume in both plugins.
type Named[T client.Object] struct {
	Env      *Env
	Resource Resource[T]
	// Noun names the objects in the usage error for names and --all together: "name jobs or
	// pass --all, not both".
	Noun string
	// Missing is the usage error for neither names nor --all; "NAME is required (or --all)"
	// when empty.
	Missing string
	// Act is done to each object, which holds its namespace and name only; it returns the line
	// printed when it succeeds.
	Act func(ctx context.Context, c client.Client, obj T) (string, error)
	// IgnoreNotFound skips a named object that does not exist, as kubectl delete does; the
	// command binds it to --ignore-not-found where it has the flag.
	IgnoreNotFound bool

	// Cmd is the command as called, for CalledAs.
	Cmd   *cobra.Command
	all   bool
	names []string
}

// Bind makes cmd run o: its RunE, the completion of names, and --all described by allHelp.
func (o *Named[T]) Bind(cmd *cobra.Command, allHelp string) *cobra.Command {
	cmd.ValidArgsFunction = CompleteNames(o.Env, o.Resource.NewList)
	cmd.RunE = RunE(o)
	cmd.Flags().BoolVar(&o.all, "all", false, allHelp)
	return cmd
}

// Complete implements Command.
func (o *Named[T]) Complete(cmd *cobra.Command, args []string) error {
	o.Cmd, o.names = cmd, args
	return nil
}

// Validate implements Command: names or --all, one of them.
func (o *Named[T]) Validate() error {
	switch {
	case o.all && len(o.names) > 0:
		return UsageError(o.Cmd, "name %s or pass --all, not both", o.Noun)
	case !o.all && len(o.names) == 0 && o.Missing != "":
		return UsageError(o.Cmd, "%s", o.Missing)
	case !o.all && len(o.names) == 0:
		return UsageError(o.Cmd, "NAME is required (or --all)")
	}
	return nil
}

// Run acts on every object named, or all of the namespace, going on past failures so that one
// missing name does not leave the others undone; the failures are joined.
func (o *Named[T]) Run(ctx context.Context) error {
	c, err := o.Env.Clients.Client()
	if err != nil {
		return err
	}
	ns, _, err := o.Env.Clients.Namespace()
	if err != nil {
		return err
	}
	names := o.names
	if o.all {
		if names, err = o.listNames(ctx, c, ns); err != nil {
			return err
		}
	}
	var errs []error
	for _, name := range names {
		obj := o.Resource.New()
		obj.SetNamespace(ns)
		obj.SetName(name)
		line, err := o.Act(ctx, c, obj)
		switch {
		case apierrors.IsNotFound(err) && o.IgnoreNotFound:
		case err != nil:
			errs = append(errs, err)
		default:
			fmt.Fprintln(o.Env.Out, line)
		}
	}
	return errors.Join(errs...)
}

// listNames are the names of every object of namespace ns; none is said on stderr, as kubectl
// says it.
func (o *Named[T]) listNames(ctx context.Context, c client.Reader, ns string) ([]string, error) {
	list := o.Resource.NewList()
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, item := range items {
		obj, err := meta.Accessor(item)
		if err != nil {
			return nil, err
		}
		names = append(names, obj.GetName())
	}
	if len(names) == 0 {
		fmt.Fprintf(o.Env.ErrOut, "No %s found in namespace %s.\n", o.Resource.Plural, ns)
	}
	return names, nil
}
