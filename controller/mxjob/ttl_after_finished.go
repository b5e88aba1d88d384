package mxjob

import (
	"time"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// ttlAfterFinished applies runPolicy.ttlSecondsAfterFinished to a finished job: the job is deleted
// once the TTL has passed since its completion, and until then the reconcile comes back for it.
func ttlAfterFinished(job *v1beta1.MxJob, p *plan, now time.Time) {
	ttl, done := job.Spec.RunPolicy.TTLSecondsAfterFinished, p.status.CompletionTime
	if ttl == nil || done == nil {
		return
	}
	expiry := done.Add(time.Duration(*ttl) * time.Second)
	if !now.Before(expiry) {
		p.deleteJob = true
		return
	}
	p.requeue(expiry.Sub(now))
}

// requeueForTTL brings a job that finishes in this reconcile back once its TTL has passed. Its
// deletion waits for that later reconcile (ttlAfterFinished), when the cache shows it finished.
func requeueForTTL(job *v1beta1.MxJob, p *plan) {
	if ttl := job.Spec.RunPolicy.TTLSecondsAfterFinished; ttl != nil {
		p.requeue(time.Duration(*ttl) * time.Second)
	}
}
