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

func TestWriteSections(t *testing.T) {
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(clitest.Now.Add(-d)) }
	table := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Node"}, {Name: "Last Seen"}},
		Rows:              []metav1.TableRow{{Cells: []any{"node-a", int64(3)}}, {Cells: []any{"node-bb", true}}},
	}
	events := []corev1.Event{
		{Type: "Warning", Reason: "Late", Message: " second \n", LastTimestamp: ago(time.Minute), Count: 2, Source: corev1.EventSource{Component: "kubelet"}},
		{Type: "Normal", Reason: "Early", Message: "first", EventTime: metav1.NewMicroTime(clitest.Now.Add(-time.Hour)), ReportingController: "mlkube"},
	}
	var out strings.Builder
	err := cli.WriteSections(cli.NewDescribeWriter(&out),
		cli.TableSection("Nodes", table),
		cli.ConditionsSection(nil, clitest.Now),
		cli.ConditionsSection([]metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "AllReady", LastTransitionTime: ago(90 * time.Second), Message: "ok"}}, clitest.Now),
		cli.Section{Title: "Empty", Columns: []string{"A"}},
		cli.EventsSection(events, clitest.Now),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := "Nodes:\n" +
		"  NODE      LAST SEEN\n" +
		"  node-a    3\n" +
		"  node-bb   true\n" +
		"Conditions:   <none>\n" +
		"Conditions:\n" +
		"  TYPE    STATUS   REASON     AGE   MESSAGE\n" +
		"  Ready   True     AllReady   90s   ok\n" +
		"Empty:   <none>\n" +
		"Events:\n" +
		"  TYPE      REASON   AGE        FROM      MESSAGE\n" +
		"  Normal    Early    60m        mlkube    first\n" +
		"  Warning   Late     60s (x2)   kubelet   second\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
