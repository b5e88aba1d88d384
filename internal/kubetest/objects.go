package kubetest

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MustCreate creates obj and fails the test if the API server refuses it.
func (c Client) MustCreate(t testing.TB, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %s%s: %v", obj.GetName(), obj.GetGenerateName(), err)
	}
}

// CreateTemporary creates obj and deletes it when the test ends. Cleanups run last-registered
// first, so one the caller registers afterwards still sees obj.
func (c Client) CreateTemporary(t testing.TB, obj client.Object) {
	t.Helper()
	c.MustCreate(t, obj)
	t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
}

// MustGet reads the object at key into obj and fails the test if it cannot.
func (c Client) MustGet(t testing.TB, key client.ObjectKey, obj client.Object) {
	t.Helper()
	if err := c.Get(context.Background(), key, obj); err != nil {
		t.Fatal(err)
	}
}

// Patch reads the current version of obj, applies mutate to it and sends the difference as a
// merge patch, as a user's kubectl patch would; obj is left holding the result.
func Patch[T client.Object](t testing.TB, c client.Client, obj T, mutate func(T)) {
	t.Helper()
	if err := TryPatch(c, obj, mutate); err != nil {
		t.Fatalf("patching %s: %v", obj.GetName(), err)
	}
}

// TryPatch is [Patch] for a test that expects the API server (or a webhook) may refuse the
// change: it returns the error.
func TryPatch[T client.Object](c client.Client, obj T, mutate func(T)) error {
	ctx := context.Background()
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	before := obj.DeepCopyObject().(client.Object)
	mutate(obj)
	return c.Patch(ctx, obj, client.MergeFrom(before))
}
