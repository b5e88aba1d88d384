package objectstore

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

const (
	invalid      = "Invalid value"
	required     = "Required value"
	tooLong      = "Too long"
	notSupported = "Unsupported value"
	duplicate    = "Duplicate value"
)

// store is a valid ObjectStore, changed by edit.
func store(edit func(*v1alpha1.ObjectStore)) *v1alpha1.ObjectStore {
	s := &v1alpha1.ObjectStore{
		ObjectMeta: metav1.ObjectMeta{Name: "raw", Namespace: "team-a"},
		Spec:       v1alpha1.ObjectStoreSpec{Endpoint: "https://s3.example.com", Bucket: "team-a-raw"},
	}
	if edit != nil {
		edit(s)
	}
	return s
}

// certPEM is a self-signed certificate in PEM.
func certPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "s3"}, NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestValidate(t *testing.T) {
	cert := certPEM(t)
	cases := map[string]struct {
		edit     func(*v1alpha1.ObjectStore)
		want     []string // field: type
		wantText string
	}{
		"valid":                  {},
		"http and a port":        {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "http://seaweedfs.storage:8333" }},
		"a trailing slash":       {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "https://s3.example.com/" }},
		"an IPv6 endpoint":       {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "http://[fd00::1]:9000" }},
		"anonymous without keys": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Anonymous = true }},
		"virtual hosts and a region": {edit: func(s *v1alpha1.ObjectStore) {
			s.Spec.Addressing, s.Spec.Region = v1alpha1.AddressingVirtualHost, "eu-west-1"
		}},
		"a CA bundle of certificates": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.CABundle = cert + cert }},
		"keys named and a session key": {edit: func(s *v1alpha1.ObjectStore) {
			s.Spec.Credentials = &v1alpha1.ObjectStoreCredentials{AccessKeyIDKey: "id", SecretAccessKeyKey: "key", SessionTokenKey: "token"}
		}},
		"ftp": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "ftp://s3.example.com" },
			want: []string{"spec.endpoint: " + invalid}, wantText: `the scheme is "ftp", not http or https`},
		"no scheme": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "s3.example.com" },
			want: []string{"spec.endpoint: " + invalid}, wantText: "it names no host"},
		"a path": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "https://s3.example.com/team-a-raw" },
			want: []string{"spec.endpoint: " + invalid}, wantText: "the bucket belongs in spec.bucket"},
		"a query": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "https://s3.example.com?x=1" },
			want: []string{"spec.endpoint: " + invalid}, wantText: "path, query or fragment"},
		"a user": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "https://AKIA:secret@s3.example.com" },
			want: []string{"spec.endpoint: " + invalid}, wantText: "keys belong in spec.credentials"},
		"a port out of range": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "http://s3.example.com:70000" },
			want: []string{"spec.endpoint: " + invalid}, wantText: `port "70000" is not between 1 and 65535`},
		"an empty port": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "http://s3.example.com:" },
			want: []string{"spec.endpoint: " + invalid}, wantText: "its port is empty"},
		"a long endpoint": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "https://" + strings.Repeat("a", 510) },
			want: []string{"spec.endpoint: " + tooLong}},
		"a region with a slash": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Region = "eu/west" },
			want: []string{"spec.region: " + invalid}, wantText: "like \"eu-west-1\""},
		"a long region": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Region = strings.Repeat("r", 65) },
			want: []string{"spec.region: " + tooLong}},
		"a short bucket": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Bucket = "ab" },
			want: []string{"spec.bucket: " + invalid}, wantText: "3 to 63 characters (is 2), by S3's rules"},
		"upper case": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Bucket = "Team-A" },
			want: []string{"spec.bucket: " + invalid}, wantText: "lower-case letters"},
		"dots twice": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Bucket = "a..b" },
			want: []string{"spec.bucket: " + invalid}, wantText: `must not contain ".."`},
		"an IP address": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Bucket = "192.168.5.4" },
			want: []string{"spec.bucket: " + invalid}, wantText: "must not be an IP address"},
		"a trailing hyphen": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Bucket = "raw-" },
			want: []string{"spec.bucket: " + invalid}},
		"addressing": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.Addressing = "Dns" },
			want: []string{"spec.addressing: " + notSupported}},
		"a private key for a CA": {edit: func(s *v1alpha1.ObjectStore) {
			s.Spec.CABundle = "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n"
		}, want: []string{"spec.caBundle: " + invalid}, wantText: `is a "EC PRIVATE KEY", not a CERTIFICATE`},
		"not PEM": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.CABundle = "hello" },
			want: []string{"spec.caBundle: " + invalid}, wantText: "leave it unset to trust the system's roots"},
		"a certificate and garbage": {edit: func(s *v1alpha1.ObjectStore) { s.Spec.CABundle = cert + "garbage" },
			want: []string{"spec.caBundle: " + invalid}},
		"a certificate that does not parse": {edit: func(s *v1alpha1.ObjectStore) {
			s.Spec.CABundle = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
		}, want: []string{"spec.caBundle: " + invalid}, wantText: "not an X.509 certificate"},
		"a large CA bundle": {edit: func(s *v1alpha1.ObjectStore) {
			s.Spec.CABundle = strings.Repeat(cert, 1+v1alpha1.MaxCABundleBytes/len(cert))
		},
			want: []string{"spec.caBundle: " + tooLong}},
		"anonymous with keys": {edit: func(s *v1alpha1.ObjectStore) {
			s.Spec.Anonymous, s.Spec.Credentials = true, &v1alpha1.ObjectStoreCredentials{AccessKeyIDKey: "id"}
		}, want: []string{"spec.credentials: " + invalid}, wantText: "must be unset when anonymous is true"},
		"another Secret": {edit: func(s *v1alpha1.ObjectStore) {
			s.Spec.Credentials = &v1alpha1.ObjectStoreCredentials{SecretName: "aws"}
		},
			want: []string{"spec.credentials.secretName: " + notSupported}, wantText: `supported values: "mlkube-object-stores"`},
		"a key with a slash": {edit: func(s *v1alpha1.ObjectStore) {
			s.Spec.Credentials = &v1alpha1.ObjectStoreCredentials{AccessKeyIDKey: "a/b"}
		},
			want: []string{"spec.credentials.accessKeyIDKey: " + invalid}, wantText: "must be a Secret's key"},
		"one key for both": {edit: func(s *v1alpha1.ObjectStore) {
			s.Spec.Credentials = &v1alpha1.ObjectStoreCredentials{AccessKeyIDKey: "k", SecretAccessKeyKey: "k"}
		}, want: []string{"spec.credentials.secretAccessKeyKey: " + duplicate}},
		"generateName and no keys": {edit: func(s *v1alpha1.ObjectStore) { s.Name, s.GenerateName = "", "raw-" },
			want:     []string{"spec.credentials.accessKeyIDKey: " + required, "spec.credentials.secretAccessKeyKey: " + required},
			wantText: "give the ObjectStore a name (not generateName) for the default <name>.accessKeyID"},
		"a name that is not a label": {edit: func(s *v1alpha1.ObjectStore) { s.Name = "raw.data" },
			want: []string{"metadata.name: " + invalid}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := store(tc.edit)
			errs := Validate(s)
			if diff := cmp.Diff(tc.want, webhooktest.Keys(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%s", diff, webhooktest.Messages(errs))
			}
			if msg := webhooktest.Messages(errs); !strings.Contains(msg, tc.wantText) {
				t.Errorf("the refusal does not say %q:\n%s", tc.wantText, msg)
			}
			// Defaulting first changes nothing of the verdict.
			d := s.DeepCopy()
			Default(d)
			if diff := cmp.Diff(webhooktest.Keys(errs), webhooktest.Keys(Validate(d))); diff != "" {
				t.Errorf("defaulted, the verdict changes (-before +after):\n%s", diff)
			}
		})
	}
}

// An update is judged like a create, whole: a store may change, but never into one the webhook
// would refuse.
func TestUpdateIsJudgedWhole(t *testing.T) {
	old, changed := store(nil), store(func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "https://s3.example.com/path" })
	if got := webhooktest.Keys(Rules.UpdateFunc(old, changed)); !cmp.Equal(got, []string{"spec.endpoint: " + invalid}) {
		t.Errorf("update errors %v; want the endpoint refused", got)
	}
	if errs := Rules.UpdateFunc(old, store(func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "https://s3.other.example.com" })); len(errs) > 0 {
		t.Errorf("a changed endpoint: %v; want it allowed", errs)
	}
}

func TestDefault(t *testing.T) {
	s := store(nil)
	Default(s)
	want := v1alpha1.ObjectStoreSpec{
		Endpoint: "https://s3.example.com", Bucket: "team-a-raw", Region: "us-east-1", Addressing: v1alpha1.AddressingPath,
		Credentials: &v1alpha1.ObjectStoreCredentials{SecretName: "mlkube-object-stores", AccessKeyIDKey: "raw.accessKeyID", SecretAccessKeyKey: "raw.secretAccessKey"},
	}
	if diff := cmp.Diff(want, s.Spec); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	anon := store(func(s *v1alpha1.ObjectStore) { s.Spec.Anonymous = true })
	Default(anon)
	if anon.Spec.Credentials != nil {
		t.Errorf("an anonymous store got credentials %+v; want none", anon.Spec.Credentials)
	}
	given := store(func(s *v1alpha1.ObjectStore) {
		s.Spec.Credentials = &v1alpha1.ObjectStoreCredentials{AccessKeyIDKey: "id"}
	})
	Default(given)
	if c := given.Spec.Credentials; c.AccessKeyIDKey != "id" || c.SecretAccessKeyKey != "raw.secretAccessKey" {
		t.Errorf("defaults replaced a given key: %+v", c)
	}
}

func TestWarnings(t *testing.T) {
	if w := Warnings(store(func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "http://s3:8333" })); len(w) != 1 || !strings.Contains(w[0], "plain http") {
		t.Errorf("plain http with keys: warnings %q; want one naming plain http", w)
	}
	for _, s := range []*v1alpha1.ObjectStore{store(nil), store(func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint, s.Spec.Anonymous = "http://s3:8333", true })} {
		if w := Warnings(s); len(w) > 0 {
			t.Errorf("%s (anonymous %v): warnings %q; want none", s.Spec.Endpoint, s.Spec.Anonymous, w)
		}
	}
}
