package local

import (
	"bytes"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
)

// credential is one static bearer token of the API server's --token-auth-file.
type credential struct {
	User  string
	Token string
}

// mastersGroup is the only group a token grants. Every component of this throwaway test cluster
// is a cluster admin: it spares the Node authorizer, bootstrap tokens and per-component RBAC,
// which a test of mlkube does not exercise.
const mastersGroup = "system:masters"

func newCredential(user string) (credential, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return credential{}, err
	}
	return credential{User: user, Token: hex.EncodeToString(b)}, nil
}

// tokensFile renders creds in --token-auth-file's CSV format: token,user,uid,"group,...".
func tokensFile(creds []credential) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	for _, c := range creds {
		if err := w.Write([]string{c.Token, c.User, c.User, mastersGroup}); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}
