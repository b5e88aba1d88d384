// Package kubetest holds helpers the integration and e2e suites share for acting on objects
// through a real API server.
package kubetest

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Patch reads the current version of obj, applies mutate to it and sends the difference as a
// merge patch, as a user's kubectl patch would; obj is left holding the result.
func Patch[T client.Object](t testing.TB, c client.Client, obj T, mutate func(T)) {
	t.Helper()
	ctx := context.Background()
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	before := obj.DeepCopyObject().(client.Object)
	mutate(obj)
	if err := c.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		t.Fatalf("patching %s: %v", obj.GetName(), err)
	}
}
