// Package etl is `kubectl etl`: the commands that create, inspect, feed and remove Transforms
// (etl.mlkube.io/v1alpha1) and TransformRuns, after AIStore's `ais etl`. What a command computes
// (the Transform an init builds, the rows of a table, the progress line of a run) lives in plain
// functions beside thin cobra and client plumbing, so tests compare it exactly.
package etl
