// Package controller holds mlkube's controller side: the manager wiring, certificate handling,
// the reconcilers and the node data path agent, one sub-package each.
package controller
