package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	// The kubeconfig auth providers kubectl has (oidc), for both plugins; exec credential
	// plugins are client-go's own.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Plugin describes a kubectl plugin: kubectl-<Name>, used as "kubectl <Name> …".
type Plugin struct {
	Name    string
	Short   string
	Long    string
	Example string
	// Groups are the API groups whose served versions `version` reports, and whose errors get
	// the plugin's hints (not installed, not found).
	Groups []string
	// CommandGroups order the help by workflow; a command in none is listed under "Other
	// Commands" with version, completion and options.
	CommandGroups []CommandGroup
}

// CommandGroup is a heading of the help and the names of the commands under it.
type CommandGroup struct {
	Title    string
	Commands []string
}

// CompletionPrefix is how kubectl (≥ 1.26) names the executable it runs to complete a plugin's
// arguments: kubectl_complete-<plugin>.
const CompletionPrefix = "kubectl_complete-"

// Destructive marks a command that deletes or stops something: an unknown command is never
// answered with it as a suggestion, so a typo followed by "did you mean" does no harm.
const Destructive = "mlkube.io/destructive"

// MarkDestructive marks cmd Destructive and returns it.
func MarkDestructive(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[Destructive] = "true"
	return cmd
}

// apiGroupsAnnotation carries the plugin's API groups from NewRoot to Execute, which explains
// errors.
const apiGroupsAnnotation = "mlkube.io/api-groups"

// otherGroup is the help heading of the commands in no CommandGroup.
const otherGroup = "other"

// Main runs a plugin as an executable and returns its exit code. Invoked under the name
// kubectl_complete-<Name>, it answers cobra's __complete protocol for kubectl.
func Main(p Plugin, scheme *runtime.Scheme, commands func(*Env) []*cobra.Command) int {
	// controller-runtime's clients log through klog, as client-go does; Execute silences it.
	// Unset, controller-runtime would print a stack trace saying its logs are dropped.
	ctrllog.SetLogger(klog.NewKlogr())
	env := NewEnv(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, NewConfigFlags(), scheme)
	args := os.Args[1:]
	if filepath.Base(os.Args[0]) == CompletionPrefix+p.Name {
		args = append([]string{cobra.ShellCompRequestCmd}, args...)
	}
	return Execute(NewRoot(p, env, commands(env)...), args)
}

// NewRoot returns the plugin's root command holding cmds, `version`, `completion` and
// `options`, with kubectl's global flags, which the help of every command leaves to `options`.
func NewRoot(p Plugin, env *Env, cmds ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:     "kubectl-" + p.Name,
		Short:   p.Short,
		Long:    p.Long,
		Example: p.Example,
		Annotations: map[string]string{
			// Usage, help and errors say "kubectl mxjob", as the user types it.
			cobra.CommandDisplayNameAnnotation: "kubectl " + p.Name,
			apiGroupsAnnotation:                strings.Join(p.Groups, ","),
		},
		SilenceErrors: true, // Execute prints them, on one line
		SilenceUsage:  true, // a failed API call is not a usage mistake
		// Execute suggests, leaving destructive commands out.
		DisableSuggestions:         true,
		SuggestionsMinimumDistance: 2,
		// Under kubectl, --help and completion must not touch the cluster; the clients are made
		// lazily, when a command runs.
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: true},
	}
	root.SetIn(env.In)
	root.SetOut(env.Out)
	root.SetErr(env.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return UsageError(c, "%v", err)
	})
	root.SetUsageTemplate(usageTemplate)
	env.Flags.AddFlags(root.PersistentFlags())
	registerNamespaceCompletion(root, env)
	root.AddCommand(cmds...)
	root.AddCommand(newVersionCommand(p, env), newCompletionCommand(p, env), newOptionsCommand(root))
	groupCommands(root, p.CommandGroups)
	return root
}

// groupCommands gives each command its heading in the help.
func groupCommands(root *cobra.Command, groups []CommandGroup) {
	heading := map[string]string{}
	for i, g := range groups {
		id := strconv.Itoa(i)
		root.AddGroup(&cobra.Group{ID: id, Title: g.Title + ":"})
		for _, name := range g.Commands {
			heading[name] = id
		}
	}
	root.AddGroup(&cobra.Group{ID: otherGroup, Title: "Other Commands:"})
	root.SetHelpCommandGroupID(otherGroup)
	for _, c := range root.Commands() {
		if id, ok := heading[c.Name()]; ok {
			c.GroupID = id
		} else {
			c.GroupID = otherGroup
		}
	}
}

// newOptionsCommand prints kubectl's global flags, which kubectl also keeps out of each
// command's help: they are the same everywhere.
func newOptionsCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "options",
		Short: "Print the flags every command takes (kubectl's global flags)",
		Args:  ExactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "The following options can be passed to any command:\n\n%s", root.PersistentFlags().FlagUsages())
			return err
		},
	}
}

func init() {
	cobra.AddTemplateFunc("ownFlags", ownFlags)
}

// ownFlags are a command's flags without the root's persistent ones (kubectl's global flags).
func ownFlags(c *cobra.Command) string {
	global := c.Root().PersistentFlags()
	own := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if global.Lookup(f.Name) != f {
			own.AddFlag(f)
		}
	})
	return strings.TrimRight(own.FlagUsages(), " \n")
}

// usageTemplate is cobra's, with the global flags replaced by kubectl's pointer to `options`.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}{{if eq (len .Groups) 0}}

Available Commands:{{range $cmds}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{else}}{{range $group := .Groups}}

{{.Title}}{{range $cmds}}{{if (and (eq .GroupID $group.ID) (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{end}}{{end}}{{with ownFlags .}}

Flags:
{{.}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
Use "{{.Root.CommandPath}} options" for a list of global command-line options (applies to all commands).
`

// Execute runs root with args, prints an error as one line with what to do about it, and
// returns the exit code.
func Execute(root *cobra.Command, args []string) int {
	// klog would print client-go's retries and discovery failures ("couldn't get current server
	// API group list") before the one error line that says the same with a hint; the API
	// server's warnings still reach stderr, as kubectl prints them.
	silenceKlog()
	rest.SetDefaultWarningHandler(rest.NewWarningWriter(root.ErrOrStderr(), rest.WarningWriterOptions{Deduplicate: true}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if cmd == nil {
		cmd = root
	}
	err = unknownCommand(cmd, withHelpTail(cmd, err))
	err = explain(err, listCommand(cmd), strings.Split(root.Annotations[apiGroupsAnnotation], ","))
	root.PrintErrln("error: " + oneLine(err.Error()))
	return exitCode(err)
}

// silenceKlog sends klog nowhere: not to stderr, not even errors (klog's stderrthreshold would
// still print those), and not to files.
func silenceKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := fs.Set(name, value); err != nil {
			panic(fmt.Sprintf("klog flag %s: %v", name, err))
		}
	}
	klog.SetOutput(io.Discard)
}

// unknownCommand rewrites cobra's unknown-command error as kubectl's, on one line, suggesting
// only commands that change nothing: a typo of "top" must not be answered with "stop".
func unknownCommand(cmd *cobra.Command, err error) error {
	rest, ok := strings.CutPrefix(err.Error(), "unknown command ")
	if !ok {
		return err
	}
	typed, _, _ := strings.Cut(rest, " for ")
	typed, uerr := strconv.Unquote(typed)
	if uerr != nil {
		return err
	}
	msg := fmt.Sprintf("unknown command %q for %q", typed, cmd.CommandPath())
	var safe []string
	for _, name := range cmd.SuggestionsFor(typed) {
		if c, _, ferr := cmd.Find([]string{name}); ferr == nil && c.Annotations[Destructive] == "" {
			safe = append(safe, strconv.Quote(name))
		}
	}
	slices.Sort(safe)
	if len(safe) > 0 {
		msg += "; did you mean " + strings.Join(safe, " or ") + "?"
	}
	return errors.New(msg + "; " + helpTail(cmd))
}

// oneLine joins a multi-line message (an aggregate of API errors, say) into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")), " ")
}
