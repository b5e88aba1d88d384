package agent

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// TestHPushStalledUpload checks that a small object whose client pauses
// past the object timeout while it sends it (hpush reads such bodies whole
// before sending them) is answered 504 with the message it had when the
// transport streamed the body. Either way the answer waits for the rest of
// the body.
func TestHPushStalledUpload(t *testing.T) {
	e := newEnv(t)
	e.addTransform("echo", etlv1alpha1.CommHPush, "", echo)
	e.setTimeout("echo", 50*time.Millisecond)
	body, upload := io.Pipe()
	defer upload.Close()
	go func() {
		_, _ = upload.Write([]byte("half")) // of the 8 bytes announced
		// Not a timed assertion: only the order matters, the pause is
		// well past the timeout.
		time.Sleep(200 * time.Millisecond)
		_, _ = upload.Write([]byte("rest"))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, e.transformURL("echo", "obj", wire.Query{}), body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 8
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, body: data}
	if a.status != http.StatusGatewayTimeout {
		t.Fatalf("status %d, want 504: %s", a.status, a.body)
	}
	// The message is the one Client.Do gave when the transport read the body.
	if got := a.apiError(t).Error; !strings.HasPrefix(got, `object timeout: Put "`) || !strings.HasSuffix(got, `": context deadline exceeded`) {
		t.Errorf("error %q, want the object timeout of the PUT to the transformer", got)
	}
}
