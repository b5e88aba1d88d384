package kubetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// WaitFor polls obj until reached says its current version is what the test waits for, and
// returns that version; reached may return an error made by [Stop]. Every poll reads into a new
// object: decoding into the last one would keep fields the API server has since dropped.
func WaitFor[T client.Object](t testing.TB, c Client, what string, obj T, reached func(T) (bool, error)) T {
	t.Helper()
	var got T
	c.Eventually(t, what, func(ctx context.Context) (bool, error) {
		got = reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
			return false, err
		}
		return reached(got)
	})
	return got
}

// WaitForJob waits for job to reach state and returns it. A job that ended in another state
// fails the test at once: Succeeded and Failed are final.
func (c Client) WaitForJob(t testing.TB, job *v1beta1.MxJob, state v1beta1.State) *v1beta1.MxJob {
	t.Helper()
	return WaitFor(t, c, fmt.Sprintf("MxJob %s to be %s", job.Name, state), job, func(got *v1beta1.MxJob) (bool, error) {
		if got.Status.State != state && (got.Status.State == v1beta1.StateSucceeded || got.Status.State == v1beta1.StateFailed) {
			return false, Stop(fmt.Errorf("job ended %s (%s), not %s", got.Status.State, got.Status.Reason, state))
		}
		return got.Status.State == state, nil
	})
}

// WaitForStage waits for tr to reach stage and returns it. A Transform that aborted fails the
// test at once, unless Aborted is the stage awaited: nothing restarts an aborted Transform.
func (c Client) WaitForStage(t testing.TB, tr *v1alpha1.Transform, stage v1alpha1.Stage) *v1alpha1.Transform {
	t.Helper()
	return WaitFor(t, c, fmt.Sprintf("Transform %s to be %s", tr.Name, stage), tr, func(got *v1alpha1.Transform) (bool, error) {
		if got.Status.Stage == v1alpha1.StageAborted && stage != v1alpha1.StageAborted {
			return false, Stop(fmt.Errorf("aborted: %s", got.Status.Reason))
		}
		return got.Status.Stage == stage, nil
	})
}

// SuspendJob suspends job as a user would, with a patch, and waits until it is Suspended and its
// pods are deleted.
func (c Client) SuspendJob(t testing.TB, job *v1beta1.MxJob) {
	t.Helper()
	Patch(t, c, job.DeepCopy(), func(j *v1beta1.MxJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) })
	c.WaitForJob(t, job, v1beta1.StateSuspended)
	c.WaitForPods(t, fmt.Sprintf("the suspended MxJob %s's pods deleted", job.Name), job, 0)
}

// ResumeJob clears job's suspend with a patch.
func (c Client) ResumeJob(t testing.TB, job *v1beta1.MxJob) {
	t.Helper()
	Patch(t, c, job.DeepCopy(), func(j *v1beta1.MxJob) { j.Spec.RunPolicy.Suspend = ptr.To(false) })
}

// StopTransform stops tr as a user would, with a patch, and waits until it is Stopped and its
// pods are deleted.
func (c Client) StopTransform(t testing.TB, tr *v1alpha1.Transform) {
	t.Helper()
	Patch(t, c, tr.DeepCopy(), func(cur *v1alpha1.Transform) { cur.Spec.Stopped = true })
	c.WaitForStage(t, tr, v1alpha1.StageStopped)
	c.WaitForPods(t, fmt.Sprintf("the stopped Transform %s's pods deleted", tr.Name), tr, 0)
}

// StartTransform clears tr's stopped with a patch.
func (c Client) StartTransform(t testing.TB, tr *v1alpha1.Transform) {
	t.Helper()
	Patch(t, c, tr.DeepCopy(), func(cur *v1alpha1.Transform) { cur.Spec.Stopped = false })
}
