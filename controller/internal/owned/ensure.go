package owned

import (
	"context"
	"fmt"
	"reflect"

	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Ensure keeps the one object an owner has of a kind as want says: it creates want when no
// object of its name exists, and when the owner's object drifted (someone edited it), restore
// sets in it what want says and the change goes out as a merge patch. restore reports whether it
// changed anything, so an object that has not drifted costs no write. An object of that name the
// owner does not control is left alone: it is someone else's, or one of an earlier owner of the
// same name that garbage collection is about to remove; the error makes the reconcile retry.
func Ensure[T client.Object](ctx context.Context, o Owner, want T, restore func(got, want T) bool) error {
	got := reflect.New(reflect.TypeOf(want).Elem()).Interface().(T)
	err := o.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
	name := kind(want) + " " + want.GetName()
	switch {
	case k8serrors.IsNotFound(err):
		return Create(ctx, o, []T{want}, func(T) Creation { return Creation{Object: want, Creating: "creating " + name} })
	case err != nil:
		return err
	case !metav1.IsControlledBy(got, o.Object):
		err := fmt.Errorf("%s exists and this %s does not control it", name, kind(o.Object))
		o.Event(true, "FailedCreate"+kind(want), fmt.Sprintf("creating %s: %v", name, err))
		return err
	}
	before := got.DeepCopyObject().(client.Object)
	if !restore(got, want) {
		return nil
	}
	if err := o.Client.Patch(ctx, got, client.MergeFrom(before)); err != nil {
		o.Event(true, "FailedUpdate"+kind(want), fmt.Sprintf("restoring %s: %v", name, err))
		return err
	}
	o.log(ctx, "restored", got)
	return nil
}
