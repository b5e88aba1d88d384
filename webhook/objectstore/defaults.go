package objectstore

import "github.com/mlkube/mlkube/api/etl/v1alpha1"

// Default fills every field the design defaults. It is idempotent.
func Default(s *v1alpha1.ObjectStore) {
	DefaultSpec(s.Name, &s.Spec)
}

// DefaultSpec defaults the spec of the ObjectStore named name: the region and addressing S3
// servers answer without configuration, and unless it is anonymous, its keys in the namespace's
// one Secret of store keys under the store's name. With no name yet (generateName), the keys
// stay unset and validation asks for them.
func DefaultSpec(name string, spec *v1alpha1.ObjectStoreSpec) {
	if spec.Region == "" {
		spec.Region = v1alpha1.DefaultRegion
	}
	if spec.Addressing == "" {
		spec.Addressing = v1alpha1.AddressingPath
	}
	if spec.Anonymous {
		return
	}
	if spec.Credentials == nil {
		spec.Credentials = &v1alpha1.ObjectStoreCredentials{}
	}
	c := spec.Credentials
	if c.SecretName == "" {
		c.SecretName = v1alpha1.ObjectStoreSecretName
	}
	if name == "" {
		return
	}
	if c.AccessKeyIDKey == "" {
		c.AccessKeyIDKey = name + ".accessKeyID"
	}
	if c.SecretAccessKeyKey == "" {
		c.SecretAccessKeyKey = name + ".secretAccessKey"
	}
}
