// Package webhook wires mlkube's admission webhooks into a controller-runtime manager.
//
// The rules themselves live in the kind packages (webhook/mxjob, webhook/transform) as plain
// functions over the API types; this package only registers them.
package webhook
