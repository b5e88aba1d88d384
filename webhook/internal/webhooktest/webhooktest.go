// Package webhooktest holds helpers for the webhook packages' tests.
package webhooktest

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Keys reduces field errors to "<field>: <type>" so tests compare which rule fired where, not
// the wording of the message.
func Keys(errs field.ErrorList) []string {
	var keys []string
	for _, e := range errs {
		keys = append(keys, e.Field+": "+e.Type.String())
	}
	return keys
}

// Messages joins every error's full text, for tests that check what a message tells the user.
func Messages(errs field.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error())
		b.WriteString("\n")
	}
	return b.String()
}
