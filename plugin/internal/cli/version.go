package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/internal/version"
)

// Where the mlkube install bundle runs the manager, whose image `version` reports.
const (
	ManagerNamespace  = "mlkube-system"
	ManagerDeployment = "mlkube-manager"
)

// VersionInfo is what `version` reports; -o json|yaml prints it as such.
type VersionInfo struct {
	Plugin  string `json:"plugin"`
	Go      string `json:"go"`
	Server  string `json:"server,omitempty"`
	Manager string `json:"manager,omitempty"`
	// APIs maps each of the plugin's API groups to the versions the server serves.
	APIs map[string][]string `json:"apis,omitempty"`
	// Errors says what could not be read: the cluster unreachable, the manager not installed.
	Errors []string `json:"errors,omitempty"`
}

type versionOptions struct {
	plugin Plugin
	env    *Env
	client bool
	output string
}

func newVersionCommand(p Plugin, env *Env) *cobra.Command {
	o := &versionOptions{plugin: p, env: env}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version, the API versions the cluster serves and the manager's image",
		Example: fmt.Sprintf(`  # Versions of the plugin, the cluster's %[1]s APIs and the mlkube manager
  kubectl %[1]s version

  # The plugin's version only, without contacting the cluster
  kubectl %[1]s version --client

  # As YAML
  kubectl %[1]s version -o yaml`, p.Name),
		Args: ExactArgs(),
		RunE: RunE(o),
	}
	cmd.Flags().BoolVar(&o.client, "client", false, "Print the plugin's version only.")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "Output format. One of: (json, yaml).")
	return cmd
}

func (o *versionOptions) Complete(*cobra.Command, []string) error { return nil }

func (o *versionOptions) Validate() error {
	if o.output != "" && o.output != "json" && o.output != "yaml" {
		return fmt.Errorf("unknown output format %q; use -o json or -o yaml", o.output)
	}
	return nil
}

func (o *versionOptions) Run(ctx context.Context) error {
	v := VersionInfo{Plugin: version.Get(), Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	if !o.client {
		o.server(ctx, &v)
	}
	if o.output != "" {
		return PrintData(o.env.Out, o.output, v)
	}
	printVersion(o.env, o.plugin, v)
	return nil
}

// PrintData prints v, a value that is no Kubernetes object, as -o json (indented as kubectl
// version indents) or -o yaml.
func PrintData(w io.Writer, output string, v any) error {
	var b []byte
	var err error
	switch output {
	case "json":
		b, err = json.MarshalIndent(v, "", "  ")
		b = append(b, '\n')
	case "yaml":
		b, err = yaml.Marshal(v)
	default:
		err = fmt.Errorf("unknown output format %q", output)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// server fills what the cluster says; what it cannot read goes into v.Errors, so the plugin's own
// version is printed even without a cluster.
func (o *versionOptions) server(ctx context.Context, v *VersionInfo) {
	cs, err := o.env.Clients.Kubernetes()
	if err != nil {
		v.Errors = append(v.Errors, err.Error())
		return
	}
	sv, err := cs.Discovery().ServerVersion()
	if err != nil {
		v.Errors = append(v.Errors, fmt.Sprintf("server version: %v", err))
		return
	}
	v.Server = sv.GitVersion
	groups, err := cs.Discovery().ServerGroups()
	if err != nil {
		v.Errors = append(v.Errors, fmt.Sprintf("API groups: %v", err))
	} else {
		v.APIs = servedVersions(groups.Groups, o.plugin.Groups)
	}
	c, err := o.env.Clients.Client()
	if err != nil {
		v.Errors = append(v.Errors, err.Error())
		return
	}
	var d appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKey{Namespace: ManagerNamespace, Name: ManagerDeployment}, &d); err != nil {
		v.Errors = append(v.Errors, fmt.Sprintf("manager: %v", err))
		return
	}
	v.Manager = managerImage(&d)
}
