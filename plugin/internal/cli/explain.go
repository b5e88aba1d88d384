package cli

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/tools/clientcmd"
)

// InstallHint is where a cluster admin installs mlkube: a release's bundle, as docs/install.md
// says, since a user of the krew plugins has no checkout to apply files from.
const InstallHint = "a cluster admin installs mlkube from a release: kubectl apply --server-side -f install.yaml (see docs/install.md)"

// cause is why an error happened as far as the user can act on it; the frame maps each one to
// an exit code and a hint.
type cause int

const (
	causeOther cause = iota
	causeNotInstalled
	causeNotFound
	causeForbidden
	causeUnauthorized
	causeUnreachable
	causeNoConfig
)

// classify finds the cause of err, reading through wrapped and joined errors.
func classify(err error) cause {
	var noKind *meta.NoKindMatchError
	var noResource *meta.NoResourceMatchError
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &noKind), errors.As(err, &noResource):
		return causeNotInstalled
	case apierrors.IsNotFound(err):
		return causeNotFound
	case apierrors.IsForbidden(err):
		return causeForbidden
	case apierrors.IsUnauthorized(err):
		return causeUnauthorized
	case errors.Is(err, clientcmd.ErrEmptyConfig) || clientcmd.IsEmptyConfig(errors.Unwrap(err)):
		return causeNoConfig
	case utilnet.IsConnectionRefused(err), errors.As(err, &dns), errors.As(err, &op) && op.Op == "dial":
		return causeUnreachable
	}
	return causeOther
}

// explain adds to err what the user can do about it, for a plugin serving the API groups groups
// whose command list (e.g. "kubectl etl runs list") lists what the failed command looks for.
// Errors of other groups (the metrics API, pods) get the generic hints only.
func explain(err error, list string, groups []string) error {
	switch classify(err) {
	case causeNotInstalled:
		if ourGroup(err, groups) {
			return fmt.Errorf("%w; the cluster does not serve %s: %s", err, strings.Join(groups, ", "), InstallHint)
		}
	case causeNotFound:
		if ourGroup(err, groups) {
			return fmt.Errorf("%w; see what there is with '%s' (-A for all namespaces)", err, list)
		}
	case causeForbidden:
		return fmt.Errorf("%w; ask an administrator for access, or choose another namespace with -n", err)
	case causeUnauthorized:
		return fmt.Errorf("%w; the cluster refused your credentials: log in again, or check the kubeconfig's user (--user, --context)", err)
	case causeUnreachable:
		return fmt.Errorf("%w; the cluster is unreachable: did you specify the right host or port? (--server, --context or KUBECONFIG)", err)
	case causeNoConfig:
		return fmt.Errorf("%w; no kubeconfig found: did you specify the right host or port? (set KUBECONFIG, --kubeconfig or --server)", err)
	}
	return err
}

// listCommand is the `list` nearest to cmd: a command's own group's (kubectl etl runs list for
// kubectl etl runs delete), else its parent's, up to the plugin's own.
func listCommand(cmd *cobra.Command) string {
	for c := cmd; c != nil; c = c.Parent() {
		if sub, _, err := c.Find([]string{"list"}); err == nil && sub != c && sub.Parent() == c {
			return c.CommandPath() + " list"
		}
	}
	return cmd.Root().CommandPath() + " list"
}

// ourGroup says whether err is about one of groups' resources: a hint naming the plugin's
// commands would mislead for a missing pod or metrics API.
func ourGroup(err error, groups []string) bool {
	var noKind *meta.NoKindMatchError
	if errors.As(err, &noKind) {
		return slices.Contains(groups, noKind.GroupKind.Group)
	}
	var noResource *meta.NoResourceMatchError
	if errors.As(err, &noResource) {
		return slices.Contains(groups, noResource.PartialResource.Group)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Details != nil {
		return slices.Contains(groups, status.Status().Details.Group)
	}
	return false
}
