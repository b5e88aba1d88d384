package clitest

import "k8s.io/client-go/rest"

// As is the API server as user in groups would reach it (kubectl --as, --as-group): a plugin run
// through it has only the rights RBAC gives them, as a namespace user's would. Client stays the
// admin's, for the test's setup and checks.
func (s *APIServer) As(user string, groups ...string) *APIServer {
	as := *s
	as.Config = rest.CopyConfig(s.Config)
	as.Config.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return &as
}
