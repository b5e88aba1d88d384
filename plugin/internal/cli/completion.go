package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// completionTimeout bounds the API calls of one completion: a shell waiting on a slow cluster is
// worse than no suggestions.
const completionTimeout = 5 * time.Second

type completionInstallOptions struct {
	plugin Plugin
	env    *Env
	dir    string
	self   string
}

func newCompletionCommand(p Plugin, env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion",
		Short: "Set up shell completion of this plugin through kubectl",
		Long: fmt.Sprintf(`kubectl (1.26 and later) completes a plugin's arguments by running kubectl_complete-%[1]s
from PATH. krew installs only kubectl-%[1]s, so 'completion install' links that name next to it.`, p.Name),
	}
	o := &completionInstallOptions{plugin: p, env: env}
	install := &cobra.Command{
		Use:   "install",
		Short: fmt.Sprintf("Link kubectl_complete-%s next to this plugin's executable", p.Name),
		Example: fmt.Sprintf(`  # Enable 'kubectl %[1]s <TAB>' completion (kubectl completion must already be set up)
  kubectl %[1]s completion install

  # Link it into another directory on PATH
  kubectl %[1]s completion install --dir ~/bin`, p.Name),
		Args: ExactArgs(),
		RunE: RunE(o),
	}
	install.Flags().StringVar(&o.dir, "dir", "", "Directory to link into; defaults to the plugin's own, which is on PATH.")
	cmd.AddCommand(install)
	return cmd
}

// Complete finds the plugin as kubectl ran it: by the path kubectl found on PATH, so that under
// krew the link points at krew's own link and survives upgrades.
func (o *completionInstallOptions) Complete(*cobra.Command, []string) error {
	self, err := executablePath(os.Args[0])
	if err != nil {
		return err
	}
	o.self = self
	if o.dir == "" {
		o.dir = filepath.Dir(self)
	}
	return nil
}

func (o *completionInstallOptions) Validate() error { return nil }

func (o *completionInstallOptions) Run(context.Context) error {
	link := filepath.Join(o.dir, CompletionPrefix+o.plugin.Name)
	if err := replaceSymlink(o.self, link); err != nil {
		return fmt.Errorf("linking %s: %w; pass --dir with a writable directory on PATH", link, err)
	}
	fmt.Fprintf(o.env.Out, "linked %s -> %s\n", link, o.self)
	return nil
}

// executablePath is argv0 as an absolute path, looked up on PATH when it is a bare name.
func executablePath(argv0 string) (string, error) {
	p := argv0
	if !strings.ContainsRune(argv0, filepath.Separator) {
		found, err := exec.LookPath(argv0)
		if err != nil {
			return os.Executable()
		}
		p = found
	}
	return filepath.Abs(p)
}

// replaceSymlink makes link point at target, replacing an earlier link atomically.
func replaceSymlink(target, link string) error {
	tmp := link + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}

// CompleteNames completes the names of the objects listed by newList in the namespace of
// --namespace, leaving out those already given.
func CompleteNames(env *Env, newList func() client.ObjectList) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ns, _, err := env.Clients.Namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names, err := listNames(cmd.Context(), env, newList(), client.InNamespace(ns))
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return slices.DeleteFunc(names, func(n string) bool { return slices.Contains(args, n) }), cobra.ShellCompDirectiveNoFileComp
	}
}

// registerNamespaceCompletion completes --namespace with the cluster's namespaces.
func registerNamespaceCompletion(root *cobra.Command, env *Env) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		names, err := listNames(cmd.Context(), env, &corev1.NamespaceList{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}

func listNames(ctx context.Context, env *Env, list client.ObjectList, opts ...client.ListOption) ([]string, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	c, err := env.Clients.Client()
	if err != nil {
		return nil, err
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(items))
	for _, it := range items {
		if m, err := meta.Accessor(it); err == nil {
			names = append(names, m.GetName())
		}
	}
	return names, nil
}
