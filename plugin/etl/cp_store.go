package etl

import (
	"context"
	"fmt"
	"strings"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// storeScheme starts an argument that names a prefix of an ObjectStore of the namespace:
// s3://STORE/PREFIX.
const storeScheme = "s3://"

// storeCopy is a copy between an ObjectStore and the namespace's objects: a TransformRun with no
// transform, which the agents carry out on every node, each fetching or putting its own share.
type storeCopy struct{ run v1alpha1.TransformRun }

// parseStoreCopy returns the copy src → dst names, when one names a store; nil when neither
// does.
func parseStoreCopy(src, dst string) (*storeCopy, error) {
	fromStore, toStore := strings.HasPrefix(src, storeScheme), strings.HasPrefix(dst, storeScheme)
	if !fromStore && !toStore {
		return nil, nil
	}
	other := dst
	if toStore {
		other = src
	}
	if fromStore == toStore || !strings.HasPrefix(other, remoteScheme) {
		return nil, fmt.Errorf("copy between s3://STORE/PREFIX and the namespace's objects, etl:PREFIX; %s names neither", other)
	}
	var c storeCopy
	c.run.GenerateName = "cp-"
	prefix := strings.TrimSuffix(objectArg(other), "/")
	if prefix == "" {
		return nil, fmt.Errorf("%s: name a prefix of the namespace's objects, as in etl:imported/", other)
	}
	store, key, err := parseStoreArg(src)
	if toStore {
		store, key, err = parseStoreArg(dst)
	}
	if err != nil {
		return nil, err
	}
	if fromStore {
		c.run.Spec.Source = v1alpha1.RunSource{Store: store, Prefix: key}
		c.run.Spec.Destination = v1alpha1.RunDestination{Prefix: prefix}
	} else {
		c.run.Spec.Source = v1alpha1.RunSource{Prefix: prefix}
		c.run.Spec.Destination = v1alpha1.RunDestination{Store: store, Prefix: key}
	}
	return &c, nil
}

// parseStoreArg splits s3://STORE/PREFIX; the prefix is a directory of keys, never the whole
// bucket.
func parseStoreArg(arg string) (store, prefix string, err error) {
	store, prefix, _ = strings.Cut(strings.TrimPrefix(arg, storeScheme), "/")
	prefix = strings.TrimSuffix(prefix, "/")
	if store == "" || prefix == "" {
		return "", "", fmt.Errorf("%s: want s3://STORE/PREFIX, STORE an ObjectStore of the namespace (kubectl get stores) and PREFIX a prefix of its keys", arg)
	}
	return store, prefix, nil
}

// runStoreCopy creates the copy's run and follows it to its end with a progress bar.
func (o *cpOptions) runStoreCopy(ctx context.Context, c *storeCopy) error {
	ns, _, err := o.env.Clients.Namespace()
	if err != nil {
		return err
	}
	c.run.Namespace = ns
	var created *v1alpha1.TransformRun
	err = cli.CreateEach(ctx, o.env, "none", []*v1alpha1.TransformRun{&c.run},
		func(r *v1alpha1.TransformRun, err error) error {
			return fmt.Errorf("creating the copy's TransformRun: %w", err)
		},
		func(r *v1alpha1.TransformRun) error {
			created = r
			fmt.Fprintf(o.env.Out, "transformrun.etl.mlkube.io/%s created\n", orGenerated(r))
			return nil
		})
	if err != nil {
		return err
	}
	kc, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	return followRun(ctx, o.env, newRunWatch(o.env, kc, created.Namespace, created.Name, 0, "finished"))
}
