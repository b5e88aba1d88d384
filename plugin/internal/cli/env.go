package cli

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"
)

// Env is what every command of a plugin shares. Tests build one with fake clients, buffers and a
// fixed clock (clitest.NewEnv); Main builds the real one.
type Env struct {
	genericiooptions.IOStreams
	// Flags are kubectl's global flags, bound to the root command.
	Flags *genericclioptions.ConfigFlags
	// Clients makes the API clients, once the flags are parsed.
	Clients Factory
	// Clock is read for ages and timeouts, so tests print stable AGE columns.
	Clock clock.Clock
	// Scheme knows every type a plugin reads or prints.
	Scheme *runtime.Scheme
}

// NewEnv is the environment of a real run: the flags' kubeconfig and the wall clock.
func NewEnv(streams genericiooptions.IOStreams, flags *genericclioptions.ConfigFlags, scheme *runtime.Scheme) *Env {
	return &Env{
		IOStreams: streams,
		Flags:     flags,
		Clients:   NewConfigFactory(flags, scheme),
		Clock:     clock.RealClock{},
		Scheme:    scheme,
	}
}

// NewConfigFlags returns kubectl's global flags as kubectl sets them up: a persistent discovery
// cache and the bursts kubectl uses, so a plugin's first call costs what kubectl's does.
func NewConfigFlags() *genericclioptions.ConfigFlags {
	return genericclioptions.NewConfigFlags(true).
		WithDeprecatedPasswordFlag().
		WithDiscoveryBurst(300).
		WithDiscoveryQPS(50.0)
}
