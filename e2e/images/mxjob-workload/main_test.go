package main

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/mlkube/mlkube/api/mxnet/mxconfig"
	"github.com/mlkube/mlkube/e2e/workloads/psrendezvous"
)

// localEnv is what the controller gives the one worker of a local MxJob.
var localEnv = map[string]string{
	mxconfig.EnvRole:          "worker",
	mxconfig.EnvRootURI:       "",
	mxconfig.EnvRootPort:      "0",
	mxconfig.EnvNumServer:     "0",
	mxconfig.EnvNumWorker:     "1",
	mxconfig.EnvUseKubernetes: "1",
	mxconfig.EnvWorkerID:      "0",
	mxconfig.EnvName:          `{"cluster":{"worker":[{"url":"solo-worker-0","port":9091}]},"task":{"type":"worker","index":0}}`,
}

func TestRun(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	for name, tc := range map[string]struct {
		ctx        context.Context
		args       []string
		env        map[string]string // on top of localEnv
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		"local mode succeeds": {
			wantStdout: "worker-0: finished OK",
		},
		"injected failure from the environment": {
			env:        map[string]string{psrendezvous.EnvFailReplica: "worker-0", psrendezvous.EnvFailCode: "137"},
			wantCode:   137,
			wantStderr: "worker-0: injected failure, exit code 137",
		},
		"flags override the environment": {
			args:     []string{"-fail-replica=worker-0", "-fail-code", "3"},
			env:      map[string]string{psrendezvous.EnvFailCode: "137"},
			wantCode: 3,
		},
		"bad environment names the variable": {
			env:        map[string]string{mxconfig.EnvNumWorker: "two"},
			wantCode:   exitUsage,
			wantStderr: `DMLC_NUM_WORKER: must be an integer in 0..10000, got "two"`,
		},
		"bad flag value names the variable": {
			args:       []string{"-deadline=soon"},
			wantCode:   exitUsage,
			wantStderr: `MXJOB_DEADLINE: must be a positive duration`,
		},
		"help": {
			args:       []string{"-h"},
			wantStderr: "-fail-replica value",
		},
		"unknown flag": {
			args:       []string{"-bogus"},
			wantCode:   exitUsage,
			wantStderr: "flag provided but not defined: -bogus",
		},
		"stray argument": {
			args:       []string{"train.py"},
			wantCode:   exitUsage,
			wantStderr: `unexpected arguments ["train.py"]`,
		},
		"SIGTERM while sleeping": {
			ctx:        canceled,
			args:       []string{"-sleep=1h"},
			wantCode:   exitTerminated,
			wantStderr: "worker-0: interrupted while sleeping",
		},
	} {
		t.Run(name, func(t *testing.T) {
			env := maps.Clone(localEnv)
			maps.Copy(env, tc.env)
			ctx := tc.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			var stdout, stderr bytes.Buffer
			code := run(ctx, tc.args, func(k string) string { return env[k] }, &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.wantCode, &stdout, &stderr)
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantStdout, &stdout)
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantStderr, &stderr)
			}
		})
	}
}

func TestFlagName(t *testing.T) {
	for env, want := range map[string]string{
		psrendezvous.EnvFailReplica:    "fail-replica",
		psrendezvous.EnvFailOnceMarker: "fail-once-marker",
		psrendezvous.EnvDeadline:       "deadline",
	} {
		if got := flagName(env); got != want {
			t.Errorf("flagName(%s) = %q, want %q", env, got, want)
		}
	}
}
