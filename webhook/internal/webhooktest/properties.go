package webhooktest

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Rules are one kind's admission functions, as the fuzz targets exercise them.
type Rules[T any] struct {
	New       func() T
	DeepCopy  func(T) T
	Default   func(T)
	Create    func(T) field.ErrorList
	Update    func(old, obj T) field.ErrorList
	Immutable func(old, obj T) field.ErrorList
	// Spec returns what defaulting owns; metadata may legitimately change through JSON (a zero
	// deletion timestamp becomes nil).
	Spec func(T) any
}

// CheckProperties asserts, for one generated object, the properties every kind's admission rules
// keep: no panic; defaulting is idempotent and survives the API server's JSON round trip; a valid
// object stays valid once defaulted; what defaulting adds never counts as an immutable change.
func CheckProperties[T any](t *testing.T, obj T, r Rules[T]) {
	t.Helper()
	errsBefore := r.Create(obj)
	once := r.DeepCopy(obj)
	r.Default(once)
	twice := r.DeepCopy(once)
	r.Default(twice)
	if !equality.Semantic.DeepEqual(r.Spec(once), r.Spec(twice)) {
		t.Fatalf("defaulting twice differs from defaulting once:\nonce:  %+v\ntwice: %+v", r.Spec(once), r.Spec(twice))
	}
	if len(errsBefore) == 0 {
		if errs := r.Create(once); len(errs) != 0 {
			t.Fatalf("a valid object became invalid by defaulting: %v", errs)
		}
	}
	if errs := r.Immutable(obj, once); len(errs) != 0 {
		t.Fatalf("defaulting counted as an immutable change: %v", errs)
	}
	raw, err := json.Marshal(once)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	stored := r.New()
	if err := json.Unmarshal(raw, stored); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	r.Default(stored)
	if !equality.Semantic.DeepEqual(r.Spec(once), r.Spec(stored)) {
		t.Fatalf("defaults did not survive a JSON round trip:\nbefore: %+v\nafter:  %+v", r.Spec(once), r.Spec(stored))
	}
	_ = r.Update(obj, once)
}
