// Command echo is the identity transformer: every object comes back as it
// went in. It measures the data path itself and checks a deployment end to end.
package main

import (
	"context"
	"io"

	"github.com/mlkube/mlkube/sdk/transformer"
)

func main() { transformer.Main(echo) }

func echo(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
	return in, nil
}
