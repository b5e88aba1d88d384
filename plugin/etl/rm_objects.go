package etl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// rmObjectsOptions are rm's arguments when they are objects, written etl:NAME: no Transform name
// has a colon, so one command removes either.
type rmObjectsOptions struct {
	env            *cli.Env
	dataPath       dataPath
	cmd            *cobra.Command
	objects        []string
	recursive      bool
	serviceAccount string
}

// addObjectRemoval lets rm remove objects: with arguments etl:NAME it runs these options instead
// of its own.
func addObjectRemoval(cmd *cobra.Command, env *cli.Env, dp dataPath) {
	o := &rmObjectsOptions{env: env, dataPath: dp}
	cmd.Flags().BoolVarP(&o.recursive, "recursive", "r", false, "Remove every object under the prefixes named etl:PREFIX/.")
	addServiceAccountFlag(cmd, env, &o.serviceAccount)
	transforms, objects := cmd.RunE, cli.RunE(o)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if !slices.ContainsFunc(args, isRemote) {
			if o.recursive {
				return cli.UsageError(cmd, "--recursive removes objects: name prefixes as etl:PREFIX/")
			}
			return transforms(cmd, args)
		}
		return objects(cmd, args)
	}
}

func isRemote(arg string) bool { return strings.HasPrefix(arg, remoteScheme) }

func (o *rmObjectsOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd = cmd
	o.objects = nil
	for _, a := range args {
		if !isRemote(a) {
			return cli.UsageError(cmd, "%q is not an object: remove Transforms and objects (etl:NAME) in separate commands", a)
		}
		o.objects = append(o.objects, objectArg(a))
	}
	return nil
}

func (o *rmObjectsOptions) Validate() error {
	if all, _ := o.cmd.Flags().GetBool("all"); all {
		return cli.UsageError(o.cmd, "--all removes Transforms, not objects")
	}
	for _, name := range o.objects {
		switch {
		case name == "":
			return cli.UsageError(o.cmd, "etl: alone names every object of the namespace; name the prefixes to remove")
		case isPrefix(name) && !o.recursive:
			return cli.UsageError(o.cmd, "etl:%s is a prefix: pass --recursive to remove every object under it", name)
		case !isPrefix(name):
			if err := wire.CheckObject(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// Run removes every object and prefix named, going on past failures as rm of Transforms does.
func (o *rmObjectsOptions) Run(ctx context.Context) error {
	c, _, stop, err := openObjects(ctx, o.env, o.dataPath, o.serviceAccount)
	if err != nil {
		return err
	}
	defer stop()
	var errs []error
	for _, name := range o.objects {
		if err := c.Delete(ctx, name, isPrefix(name)); err != nil {
			errs = append(errs, err)
			continue
		}
		if isPrefix(name) {
			fmt.Fprintf(o.env.Out, "objects under %q deleted\n", name)
		} else {
			fmt.Fprintf(o.env.Out, "object %q deleted\n", name)
		}
	}
	return errors.Join(errs...)
}
