// Command md5 transforms every object into the hex MD5 digest of its bytes.
package main

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"strings"

	"github.com/mlkube/mlkube/sdk/transformer"
)

func main() { transformer.Main(digest) }

func digest(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
	h := md5.New()
	if _, err := io.Copy(h, in); err != nil {
		return nil, err
	}
	return strings.NewReader(hex.EncodeToString(h.Sum(nil))), nil
}
