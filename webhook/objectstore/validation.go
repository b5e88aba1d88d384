package objectstore

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/fieldcheck"
)

var specPath = field.NewPath("spec")

// Validate returns every problem of an ObjectStore, new or changed: a store's spec may change
// (a rotated endpoint, a new CA), and each version is judged whole. Unset optional fields count as
// their defaults, so a store is judged the same before and after defaulting.
func Validate(s *v1alpha1.ObjectStore) field.ErrorList {
	name := fieldcheck.EffectiveName(s.Name, s.GenerateName)
	errs := fieldcheck.DNSLabelName(field.NewPath("metadata", "name"), name, validation.DNS1123LabelMaxLength,
		"so that it can be written s3://NAME/prefix")
	spec := s.Spec.DeepCopy()
	DefaultSpec(s.Name, spec)
	errs = append(errs, endpoint(specPath.Child("endpoint"), spec.Endpoint)...)
	errs = append(errs, region(specPath.Child("region"), spec.Region)...)
	errs = append(errs, bucket(specPath.Child("bucket"), spec.Bucket)...)
	errs = append(errs, fieldcheck.OneOf(specPath.Child("addressing"), string(spec.Addressing),
		[]string{string(v1alpha1.AddressingPath), string(v1alpha1.AddressingVirtualHost)})...)
	errs = append(errs, caBundle(specPath.Child("caBundle"), spec.CABundle)...)
	return append(errs, credentials(specPath, spec)...)
}

// endpoint checks that e is an http or https URL of a host and an optional port, nothing else:
// the agents build every request's path and query themselves, and a user name, path or query
// here would be dropped or misread.
func endpoint(p *field.Path, e string) field.ErrorList {
	const want = `want "https://host" or "http://host:port", with no path, query or user`
	if len(e) > v1alpha1.MaxEndpointLength {
		return field.ErrorList{field.TooLong(p, "", v1alpha1.MaxEndpointLength)}
	}
	u, err := url.Parse(e)
	if err != nil {
		return field.ErrorList{field.Invalid(p, e, fmt.Sprintf("not a URL (%v); %s", err, want))}
	}
	var why []string
	if u.Scheme != "http" && u.Scheme != "https" {
		why = append(why, fmt.Sprintf("the scheme is %q, not http or https", u.Scheme))
	}
	if u.Hostname() == "" {
		why = append(why, "it names no host")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			why = append(why, fmt.Sprintf("port %q is not between 1 and 65535", port))
		}
	} else if strings.HasSuffix(u.Host, ":") {
		why = append(why, "its port is empty")
	}
	if u.User != nil {
		why = append(why, "it has a user; keys belong in spec.credentials")
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		why = append(why, "it has a path, query or fragment; the bucket belongs in spec.bucket")
	}
	if len(why) > 0 {
		return field.ErrorList{field.Invalid(p, e, strings.Join(why, "; ")+"; "+want)}
	}
	return nil
}

var regionChars = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// region checks that r can stand in a request's signature scope: a word of letters, digits, dots,
// hyphens and underscores.
func region(p *field.Path, r string) field.ErrorList {
	if len(r) > v1alpha1.MaxRegionLength {
		return field.ErrorList{field.TooLong(p, "", v1alpha1.MaxRegionLength)}
	}
	if !regionChars.MatchString(r) {
		return field.ErrorList{field.Invalid(p, r, `must be letters, digits, ".", "-" and "_", like "eu-west-1"; leave it unset for us-east-1`)}
	}
	return nil
}

var bucketChars = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`)

// bucket checks b by S3's rules for bucket names, which every server takes.
func bucket(p *field.Path, b string) field.ErrorList {
	var why string
	switch {
	case len(b) < 3 || len(b) > 63:
		why = fmt.Sprintf("must be 3 to 63 characters (is %d)", len(b))
	case !bucketChars.MatchString(b):
		why = `must be lower-case letters, digits, "." and "-", beginning and ending with a letter or digit`
	case strings.Contains(b, ".."):
		why = `must not contain ".."`
	case net.ParseIP(b) != nil:
		why = "must not be an IP address"
	case strings.HasPrefix(b, "xn--"):
		why = `must not begin with "xn--"`
	default:
		return nil
	}
	return field.ErrorList{field.Invalid(p, b, why+", by S3's rules for bucket names")}
}

// caBundle checks that b, when set, is PEM certificates and nothing else: a private key pasted
// here by mistake would be stored for everyone who may read the store.
func caBundle(p *field.Path, b string) field.ErrorList {
	if b == "" {
		return nil
	}
	if len(b) > v1alpha1.MaxCABundleBytes {
		return field.ErrorList{field.TooLong(p, "", v1alpha1.MaxCABundleBytes)}
	}
	rest, n := []byte(b), 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		n++
		if block.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(p, fmt.Sprintf("PEM block %d", n), fmt.Sprintf(
				"is a %q, not a CERTIFICATE; caBundle holds only the certificates that sign the endpoint's", block.Type))}
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return field.ErrorList{field.Invalid(p, fmt.Sprintf("PEM block %d", n), fmt.Sprintf("is not an X.509 certificate: %v", err))}
		}
	}
	if n == 0 || strings.TrimSpace(string(rest)) != "" {
		return field.ErrorList{field.Invalid(p, "", "must be PEM certificates (-----BEGIN CERTIFICATE-----), with nothing else; leave it unset to trust the system's roots")}
	}
	return nil
}

// credentials checks that an anonymous store names no keys and any other names valid keys of the
// namespace's Secret of store keys.
func credentials(p *field.Path, spec *v1alpha1.ObjectStoreSpec) field.ErrorList {
	c := spec.Credentials
	if spec.Anonymous {
		if c != nil {
			return field.ErrorList{field.Invalid(p.Child("credentials"), "", "must be unset when anonymous is true: an anonymous store's requests are not signed")}
		}
		return nil
	}
	p = p.Child("credentials")
	var errs field.ErrorList
	if c.SecretName != v1alpha1.ObjectStoreSecretName {
		errs = append(errs, field.NotSupported(p.Child("secretName"), c.SecretName, []string{v1alpha1.ObjectStoreSecretName}))
	}
	keys := []struct {
		name, key string
		required  bool
	}{{"accessKeyIDKey", c.AccessKeyIDKey, true}, {"secretAccessKeyKey", c.SecretAccessKeyKey, true}, {"sessionTokenKey", c.SessionTokenKey, false}}
	seen := map[string]string{}
	for _, k := range keys {
		kp := p.Child(k.name)
		switch {
		case k.key == "" && k.required:
			errs = append(errs, field.Required(kp, "name the Secret's key, or give the ObjectStore a name (not generateName) for the default <name>."+strings.TrimSuffix(k.name, "Key")))
		case k.key == "":
		case len(validation.IsConfigMapKey(k.key)) > 0:
			errs = append(errs, field.Invalid(kp, k.key, "must be a Secret's key: "+strings.Join(validation.IsConfigMapKey(k.key), "; ")))
		case seen[k.key] != "":
			errs = append(errs, field.Duplicate(kp, k.key))
		default:
			seen[k.key] = k.name
		}
	}
	return errs
}

// Warnings are what a valid store is still told: keys over plain HTTP.
func Warnings(s *v1alpha1.ObjectStore) []string {
	if !s.Spec.Anonymous && strings.HasPrefix(s.Spec.Endpoint, "http://") {
		return []string{fmt.Sprintf("spec.endpoint %s is plain http: the keys are never sent, but the objects and the signed requests cross the network unencrypted", s.Spec.Endpoint)}
	}
	return nil
}
