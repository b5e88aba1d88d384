package v1alpha1

import (
	"fmt"
	"time"
)

// The manager writes a run's rate and ETA into its status, and kubectl etl spells each node's
// from its counts: both spell them with these, so the run's line and its nodes' read alike.

// Left is the number of objects of c not transformed yet, by this attempt or an earlier one.
func (c RunCounts) Left() int64 {
	return c.PlannedObjects - c.DoneObjects - c.SkippedObjects - c.FailedObjects
}

// RateText spells a rate, in MB/s as people compare disks and networks; "" for no rate.
func RateText(objectsPerSecond, bytesPerSecond float64) string {
	if objectsPerSecond == 0 && bytesPerSecond == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f obj/s, %.1f MB/s", objectsPerSecond, bytesPerSecond/1e6)
}

// ETAText is the time left objects take at objectsPerSecond, "" when there is nothing left or no
// rate to tell.
func ETAText(left int64, objectsPerSecond float64) string {
	if left <= 0 || objectsPerSecond <= 0 {
		return ""
	}
	return (time.Duration(float64(left) / objectsPerSecond * float64(time.Second))).Round(time.Second).String()
}
