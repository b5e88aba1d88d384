package cli

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Factory makes the clients a command uses. One controller-runtime client serves every typed
// read and write (mlkube's kinds, pods, events, metrics); the clientset serves what it cannot:
// pod logs and discovery.
type Factory interface {
	// Namespace is --namespace, else the kubeconfig context's namespace, else "default";
	// explicit says whether the user chose it.
	Namespace() (ns string, explicit bool, err error)
	Client() (client.WithWatch, error)
	Kubernetes() (kubernetes.Interface, error)
}

// ConfigFactory makes clients from kubectl's global flags.
type ConfigFactory struct {
	flags  *genericclioptions.ConfigFlags
	scheme *runtime.Scheme

	client     client.WithWatch
	kubernetes kubernetes.Interface
}

// NewConfigFactory returns a Factory reading flags, which must be parsed before the first call.
func NewConfigFactory(flags *genericclioptions.ConfigFlags, scheme *runtime.Scheme) *ConfigFactory {
	return &ConfigFactory{flags: flags, scheme: scheme}
}

// Namespace implements Factory.
func (f *ConfigFactory) Namespace() (string, bool, error) {
	ns, explicit, err := f.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", false, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	return ns, explicit, nil
}

// Client implements Factory. It maps kinds to resources with kubectl's disk-cached discovery, so
// a run after the first costs no discovery round trip, as with kubectl.
func (f *ConfigFactory) Client() (client.WithWatch, error) {
	if f.client != nil {
		return f.client, nil
	}
	cfg, err := f.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	mapper, err := f.flags.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("discovering the API: %w", err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: f.scheme, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	f.client = c
	return c, nil
}

// Kubernetes implements Factory.
func (f *ConfigFactory) Kubernetes() (kubernetes.Interface, error) {
	if f.kubernetes != nil {
		return f.kubernetes, nil
	}
	cfg, err := f.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f.kubernetes = cs
	return cs, nil
}
