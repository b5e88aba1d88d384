package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ObjectStore is one bucket of an S3-compatible object store that the namespace's TransformRuns
// and copies may read from and write to: its endpoint, region, bucket and addressing, and where
// its keys are. The node agents, each fetching its node's share, are the only ones that talk to
// it, and only to the endpoints the namespace declares (docs/design/object-stores.md).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=store,categories=mlkube
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.spec.endpoint`
// +kubebuilder:printcolumn:name="Bucket",type=string,JSONPath=`.spec.bucket`
// +kubebuilder:printcolumn:name="Region",type=string,JSONPath=`.spec.region`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ObjectStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says where the bucket is and how to reach it.
	Spec ObjectStoreSpec `json:"spec"`
}

// ObjectStoreList is a list of ObjectStores.
//
// +kubebuilder:object:root=true
type ObjectStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ObjectStores.
	Items []ObjectStore `json:"items"`
}

// Addressing is how requests name the bucket.
// +kubebuilder:validation:Enum=Path;VirtualHost
type Addressing string

const (
	// AddressingPath puts the bucket in the path: https://endpoint/bucket/key. What MinIO,
	// SeaweedFS, Ceph and most servers inside a cluster answer, with no wildcard DNS.
	AddressingPath Addressing = "Path"
	// AddressingVirtualHost puts it in the host name: https://bucket.endpoint/key, as AWS prefers.
	AddressingVirtualHost Addressing = "VirtualHost"
)

// ObjectStoreSecretName is the one Secret of a namespace that holds its ObjectStores' keys: the
// node agents may read a Secret of this name in any namespace, and no other Secret.
const ObjectStoreSecretName = "mlkube-object-stores"

// Bounds of an ObjectStore's spec, enforced by the webhook and the CRD.
const (
	// MaxEndpointLength bounds spec.endpoint.
	MaxEndpointLength = 512
	// MaxRegionLength bounds spec.region.
	MaxRegionLength = 64
	// MaxCABundleBytes bounds spec.caBundle: a few certificates, not a system's roots.
	MaxCABundleBytes = 64 << 10
	// DefaultRegion is spec.region's default, the region S3-compatible servers answer to when
	// they have none of their own.
	DefaultRegion = "us-east-1"
)

// ObjectStoreSpec says where a bucket is and how to reach it.
type ObjectStoreSpec struct {
	// endpoint is the store's URL: http or https, a host and an optional port, no path
	// ("https://s3.eu-west-1.amazonaws.com", "http://seaweedfs.storage:8333").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Endpoint string `json:"endpoint"`
	// region is the region requests are signed for. Defaults to us-east-1.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region,omitempty"`
	// bucket is the bucket's name, by S3's rules: 3 to 63 lower-case letters, digits, dots and
	// hyphens.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	Bucket string `json:"bucket"`
	// addressing is Path (the default: https://endpoint/bucket/key) or VirtualHost
	// (https://bucket.endpoint/key).
	// +optional
	Addressing Addressing `json:"addressing,omitempty"`
	// caBundle is the PEM certificates that sign the endpoint's TLS certificate, at most 64 KiB;
	// empty trusts the system's roots.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	CABundle string `json:"caBundle,omitempty"`
	// anonymous reads a public bucket with unsigned requests; credentials must then be unset.
	// +optional
	Anonymous bool `json:"anonymous,omitempty"`
	// credentials says where the keys are; defaulted unless anonymous.
	// +optional
	Credentials *ObjectStoreCredentials `json:"credentials,omitempty"`
}

// ObjectStoreCredentials names the keys of an ObjectStore in a Secret of its namespace.
type ObjectStoreCredentials struct {
	// secretName is the Secret that holds the keys: mlkube-object-stores, the only Secret the
	// node agents may read (a namespace's stores share it, each with keys of its own). Defaults
	// to it.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName,omitempty"`
	// accessKeyIDKey is the Secret's key that holds the access key ID. Defaults to
	// "<store>.accessKeyID".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	AccessKeyIDKey string `json:"accessKeyIDKey,omitempty"`
	// secretAccessKeyKey is the Secret's key that holds the secret access key. Defaults to
	// "<store>.secretAccessKey".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SecretAccessKeyKey string `json:"secretAccessKeyKey,omitempty"`
	// sessionTokenKey, when set, is the Secret's key that holds a session token (temporary
	// credentials).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SessionTokenKey string `json:"sessionTokenKey,omitempty"`
}
