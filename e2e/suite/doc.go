// Package suite is mlkube's end-to-end suite: it runs against a real cluster where the bundle of
// manifests/install.yaml is deployed (`make e2e` brings one up, deploys and runs it), as a user
// would meet mlkube: webhooks called by the API server through their Service, pods really running.
package suite
