package cli_test

import (
	"testing"

	"github.com/spf13/cobra"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

func TestReportCreated(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"the line":    {want: "configmap/a created (dry run)\n"},
		"-o name":     {args: []string{"-o", "name"}, want: "configmap/a\n"},
		"-o jsonpath": {args: []string{"-o", "jsonpath={.kind}/{.data.k}"}, want: "ConfigMap/x"},
	} {
		t.Run(name, func(t *testing.T) {
			env := clitest.NewEnv(clientgoscheme.Scheme, nil)
			print := cli.NewPrintFlags(false)
			cmd := &cobra.Command{Use: "create"}
			print.AddFlags(cmd)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := cli.ReportCreated(env.Env, print, cm("default", "a", 0, "k"), "configmap/a created (dry run)"); err != nil {
				t.Fatal(err)
			}
			if got := env.Stdout.String(); got != tc.want {
				t.Errorf("stdout %q, want %q", got, tc.want)
			}
		})
	}
}
