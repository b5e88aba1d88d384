// Package clitest runs plugin commands against fake clients, buffers and a fixed clock, so that
// tests compare their exact output.
package clitest

import (
	"bytes"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// Now is the fake clock's time; objects created an hour before it show AGE 60m.
var Now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// Factory serves fake clients; the namespace is --namespace, else "default".
type Factory struct {
	Flags *genericclioptions.ConfigFlags
	Ctrl  client.WithWatch
	Kube  kubernetes.Interface
}

// Namespace implements cli.Factory.
func (f *Factory) Namespace() (string, bool, error) {
	if ns := *f.Flags.Namespace; ns != "" {
		return ns, true, nil
	}
	return "default", false, nil
}

// Client implements cli.Factory.
func (f *Factory) Client() (client.WithWatch, error) { return f.Ctrl, nil }

// Kubernetes implements cli.Factory.
func (f *Factory) Kubernetes() (kubernetes.Interface, error) { return f.Kube, nil }

// Env is a test environment: the cli.Env and the buffers it writes to.
type Env struct {
	*cli.Env
	Factory *Factory
	Clock   *clocktesting.FakeClock
	Stdin   *bytes.Buffer
	Stdout  *bytes.Buffer
	Stderr  *bytes.Buffer
}

// NewEnv returns an environment whose controller-runtime client holds objs; the clientset holds
// none unless kube are given (logs and discovery read it).
func NewEnv(scheme *runtime.Scheme, objs []client.Object, kube ...runtime.Object) *Env {
	return NewEnvWith(fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...), kube...)
}

// NewEnvWith is NewEnv for a client builder the test has set up (status subresources, indexes,
// interceptors).
func NewEnvWith(b *fake.ClientBuilder, kube ...runtime.Object) *Env {
	c := b.Build()
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	flags := genericclioptions.NewConfigFlags(false)
	f := &Factory{Flags: flags, Ctrl: c, Kube: k8sfake.NewClientset(kube...)}
	clk := clocktesting.NewFakeClock(Now)
	return &Env{
		Env: &cli.Env{
			IOStreams: genericiooptions.IOStreams{In: in, Out: out, ErrOut: errOut},
			Flags:     flags,
			Clients:   f,
			Clock:     clk,
			Scheme:    c.Scheme(),
		},
		Factory: f, Clock: clk, Stdin: in, Stdout: out, Stderr: errOut,
	}
}

// Run executes root with args as the plugin's main would, returning the exit code.
func (e *Env) Run(root *cobra.Command, args ...string) int {
	return cli.Execute(root, args)
}

// ReplaceGoVersion replaces the toolchain and platform `version` prints ("go1.26.8 linux/amd64")
// with "GO", so expected output does not change with the machine.
func ReplaceGoVersion(s string) string {
	return strings.ReplaceAll(s, goruntime.Version()+" "+goruntime.GOOS+"/"+goruntime.GOARCH, "GO")
}
