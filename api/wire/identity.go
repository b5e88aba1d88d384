package wire

// Audience is what a data path caller's ServiceAccount token must be issued for: a projected
// token volume with this audience, or `kubectl create token SA --audience mlkube-datapath`. A
// token for the API server is refused, so a token leaked from the data path cannot be replayed
// against the API server, nor the reverse (docs/datapath-rbac.md).
const Audience = "mlkube-datapath"

// TokenFile is where mlkube's own pods (the manager, the e2e clients) mount their data path
// token; the kubelet refreshes it before it expires, so callers read it again now and then.
const TokenFile = TokenDir + "/token"

// TokenDir is the directory of TokenFile, where a projected token volume is mounted.
const TokenDir = "/var/run/secrets/mlkube.io/datapath"
