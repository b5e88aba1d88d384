// Package replicas tests two manager processes against one real kube-apiserver, as the
// Deployment's two replicas run: one leads the controllers, both serve the webhooks with the
// rotator's one CA, and the other takes over when the leader stops.
//
// The managers are cmd/manager binaries, not two managers in the test process: controller-runtime
// refuses a second controller of the same name in one process, and cert-controller creates its
// "cert-rotator" controller without a way to skip that check.
package replicas
