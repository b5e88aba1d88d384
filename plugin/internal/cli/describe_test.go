package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

func TestWriteHeader(t *testing.T) {
	for name, tc := range map[string]struct {
		obj  metav1.Object
		want string
	}{
		"labels sorted": {
			obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "team-a", Labels: map[string]string{"z": "1", "app": "md5"},
				CreationTimestamp: metav1.NewTime(clitest.Now.Add(-time.Hour))}},
			want: "Name:        a\nNamespace:   team-a\nLabels:      app=md5,z=1\nCreated:     2026-05-01T11:00:00Z (60m ago)\n",
		},
		"no labels": {
			obj:  &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default", CreationTimestamp: metav1.NewTime(clitest.Now.Add(-90 * time.Second))}},
			want: "Name:        b\nNamespace:   default\nLabels:      <none>\nCreated:     2026-05-01T11:58:30Z (90s ago)\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			var out strings.Builder
			w := cli.NewDescribeWriter(&out)
			cli.WriteHeader(w, tc.obj, clitest.Now)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
