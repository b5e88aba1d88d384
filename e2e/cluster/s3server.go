package cluster

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/mlkube/mlkube/internal/images"
)

// s3ServerManifest is the S3 server's Namespace, Service and Deployment.
//
//go:embed s3-server.yaml
var s3ServerManifest []byte

// Where the e2e clusters' S3 server is, and the Secret of its root keys (keys accessKeyID and
// secretAccessKey), which only the cluster admin reads.
const (
	S3Namespace  = "mlkube-e2e-s3"
	S3Service    = "s3"
	S3Port       = 7070
	S3KeysSecret = "s3-root-keys"
	S3Region     = "us-east-1"
)

// S3Endpoint is the server's endpoint as pods (the node agents) reach it.
const S3Endpoint = "http://" + S3Service + "." + S3Namespace + ".svc:7070"

// S3ServerDeadline bounds the wait for the server to answer through its Service.
const S3ServerDeadline = 2 * time.Minute

// InstallS3Server gives p's cluster an S3 server on any provider: it builds the versitygw image
// (the binary is cached by hack/build/pinned.sh), loads it into every node, creates the Secret of
// root keys once (random), applies s3-server.yaml and returns once the server's health path
// answers through its Service, as the API server's proxy reaches it.
func InstallS3Server(ctx context.Context, p Provider, logf func(string, ...any)) error {
	began := time.Now()
	cfg, err := loadImage(ctx, p, images.S3Server)
	if err != nil {
		return err
	}
	objs, err := manifestObjects("s3-server.yaml", s3ServerManifest)
	if err != nil {
		return err
	}
	// The Namespace first, then the keys, then the server that reads them.
	if err := applyObjects(ctx, cfg, "the S3 server", objs[:1]); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := createS3Keys(ctx, cs); err != nil {
		return err
	}
	if err := applyObjects(ctx, cfg, "the S3 server", objs[1:]); err != nil {
		return err
	}
	err = pollUntil(ctx, S3ServerDeadline, time.Second, func(ctx context.Context) error {
		// An answer other than 2xx is an error, with its body.
		_, err := cs.CoreV1().Services(S3Namespace).ProxyGet("http", S3Service, strconv.Itoa(S3Port), "/health", nil).DoRaw(ctx)
		return err
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("the S3 server did not answer through Service %s/%s within %v: %w; see 'hack/cluster/kubectl.sh -n %s get pods' and 'hack/cluster/kubectl.sh -n %s logs deploy/s3'",
			S3Namespace, S3Service, S3ServerDeadline, err, S3Namespace, S3Namespace)
	}
	if err != nil {
		return err
	}
	logf("the S3 server answers through its Service after %v", time.Since(began).Round(100*time.Millisecond))
	return nil
}

// createS3Keys creates the Secret of the server's root keys, random, unless it exists: the keys of
// a running server stay.
func createS3Keys(ctx context.Context, cs kubernetes.Interface) error {
	random := func(n int) string {
		b := make([]byte, n)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		return hex.EncodeToString(b)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: S3KeysSecret, Namespace: S3Namespace},
		StringData: map[string]string{"accessKeyID": "root" + random(6), "secretAccessKey": random(20)},
	}
	_, err := cs.CoreV1().Secrets(S3Namespace).Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
