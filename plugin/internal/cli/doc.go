// Package cli is the frame both mlkube kubectl plugins (kubectl-mxjob, kubectl-etl) are built on,
// so that they behave like kubectl and like each other:
//
//   - Main builds the root command from a Plugin (its name, help and API groups) and the plugin's
//     own commands, adds every kubectl global flag (genericclioptions.ConfigFlags, so kubeconfig,
//     contexts, impersonation and client-go auth plugins work as in kubectl: the frame imports
//     them), a `version` command (the plugin's, the server's and the manager's versions and the
//     served API versions, VersionInfo) and a `completion install` command, and answers shell
//     completion when run as kubectl_complete-<name>, the executable kubectl ≥ 1.26 looks for;
//     CompleteNames completes object names from the cluster. It sets controller-runtime's logger
//     to klog, which kubectl and client-go log through.
//   - Errors reach the user as one line, "error: …", that says what to do, and exit code 1, or
//     the code of an ExitError (wait's 2 on timeout).
//   - Commands follow kubectl's Options → Complete → Validate → Run: an options struct
//     implementing Command, wired with RunE. Everything a command touches comes from its Env:
//     the IOStreams, the clock, the scheme and a Factory of clients, which tests replace with
//     fake clients (package clitest) to compare exact output.
//   - Lists are metav1.Tables built from a Resource (columns and a row function) and printed as
//     kubectl get prints them (Lister); ListFlags gives -A, -l, --field-selector, -w, --watch-only
//     and --chunk-size paging, PrintFlags -o json|yaml|name|jsonpath=…|go-template=…|wide and
//     --no-headers, also for commands that print the objects they make.
//   - CreateEach creates objects as kubectl create does, honouring --dry-run=none|client|server.
//
// A plugin's main is one line: os.Exit(cli.Main(plugin, scheme, commands)) where commands
// returns the plugin's cobra commands for an Env.
package cli
