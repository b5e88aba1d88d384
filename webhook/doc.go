// Package webhook wires mlkube's admission webhooks into a controller-runtime manager: Register
// serves the MxJob, Transform and TransformRun webhooks.
//
// The rules themselves live in the kind packages (webhook/mxjob, webhook/transform,
// webhook/transformrun) as plain defaulting and validation functions over the API types; the
// contracts they share with the controllers and plugins (defaults, naming rules, mode inference)
// come from api/. Below them, webhook/internal/admit adapts those functions to controller-runtime,
// webhook/internal/fieldcheck holds the field rules the kinds share, and
// webhook/internal/webhooktest the helpers of their tests. This package only registers them.
package webhook
