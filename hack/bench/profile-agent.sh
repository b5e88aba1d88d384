#!/usr/bin/env bash
# hack/bench/profile-agent.sh ROWS [SECONDS]: profiles the node agent on a running e2e cluster
# ($KUBECONFIG, mlkube deployed) while the cluster benchmark drives ROWS (a MLKUBE_BENCH_ONLY
# regexp, e.g. 'hpush/4096x16') for SECONDS (60). It turns the agent's --pprof-listen on for the
# run (a rollout of the DaemonSet) and off again, and writes to BENCH_OUT/profile-<rows>/:
#   agent.pprof   the agent's Go CPU profile of the node the load generator runs on
#   cpu.txt       CPU seconds each process of the path spent in the window (user and system, from
#                 /proc), with its command line: the load generator, relay and bare echo are
#                 one binary, told apart by their arguments
#   perf.txt      where the whole machine's CPU went, by command and by kernel or user space
#                 (perf record -a), when perf is installed
set -euo pipefail
cd "$(dirname "$0")/../.."
rows=$1
seconds=${2:-60}
out=${BENCH_OUT:-_output/bench}/profile-$(echo "$rows" | tr -c 'A-Za-z0-9\n' '_')
mkdir -p "$out"
k() { hack/cluster/kubectl.sh -n mlkube-datapath "$@"; }
# cpu_times: "<pid>:<command line> <user ticks> <system ticks>" of every process on the path.
cpu_times() {
  local p
  for p in $(pgrep -x 'node-agent|echo|loadgen|io-shim'); do
    [ -r "/proc/$p/stat" ] || continue
    echo "$p:$(tr '\0 ' '_' < "/proc/$p/cmdline" | cut -c1-60) $(awk '{print $14, $15}' "/proc/$p/stat")"
  done
}
args=$(k get daemonset node-agent -o jsonpath='{.spec.template.spec.containers[0].args}')
restore() { kill $(jobs -p) 2>/dev/null || true; }
if [[ $args != *--pprof-listen* ]]; then
  # On for this run only, unless it was on already (profiles taken one after the other).
  restore() {
    kill $(jobs -p) 2>/dev/null || true
    k patch daemonset node-agent --type=json \
      -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/args\",\"value\":$args}]" >/dev/null || true
  }
  k patch daemonset node-agent --type=json \
    -p '[{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--pprof-listen=127.0.0.1:6060"}]'
fi
trap restore EXIT
k rollout status daemonset node-agent --timeout=600s
MLKUBE_BENCH_KUBECONFIG=$KUBECONFIG MLKUBE_BENCH_OUT=$(realpath "$out") MLKUBE_BENCH_ONLY=$rows MLKUBE_BENCH_SECONDS=$seconds MLKUBE_BENCH_ROUNDS=1 \
  go test -count=1 -v -timeout 30m -run '^TestDataPathOnTheCluster$' ./e2e/bench/ > "$out/bench.log" 2>&1 &
bench=$!
# The load starts once the benchmark's pods are up; profile the middle of the run.
until hack/cluster/kubectl.sh get pods -A 2>/dev/null | grep -q ' loadgen .*Running'; do
  kill -0 $bench 2>/dev/null || { cat "$out/bench.log"; exit 1; }
  sleep 2
done
node=$(hack/cluster/kubectl.sh get pods -A -o wide | awk '$2 == "loadgen" && $4 == "Running" {print $8; exit}')
# The node's agent pod, not one the rollout is still stopping.
pod=$(k get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.metadata.deletionTimestamp}{"\n"}{end}' |
  awk -v n="$node" 'NF == 2 && $2 == n {print $1}')
sleep 5
k port-forward "pod/$pod" 16060:6060 >/dev/null 2>&1 &
for _ in $(seq 30); do curl -fsS -o /dev/null http://127.0.0.1:16060/debug/pprof/ 2>/dev/null && break; sleep 1; done
window=$(( seconds / 2 ))
if command -v perf >/dev/null; then
  perf record -a -g -o "$out/perf.data" -- sleep "$window" >/dev/null 2>&1 &
fi
before=$(cpu_times)
curl -fsS -o "$out/agent.pprof" "http://127.0.0.1:16060/debug/pprof/profile?seconds=$window"
after=$(cpu_times)
join <(echo "$before" | sort) <(echo "$after" | sort) |
  awk -v w="$window" '{printf "%6.2f CPU-s of %ds user %5.2f sys %5.2f  %s\n", ($4-$2+$5-$3)/100, w, ($4-$2)/100, ($5-$3)/100, $1}' |
  sort -rn > "$out/cpu.txt"
wait $bench || { cat "$out/bench.log"; exit 1; }
if [ -f "$out/perf.data" ]; then
  perf report -i "$out/perf.data" --no-children --sort comm,dso -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40 > "$out/perf.txt"
fi
go tool pprof -top -nodecount=40 "$out/agent.pprof" > "$out/agent-top.txt"
echo "profiles of $rows on node $node in $out:"
head -20 "$out/agent-top.txt"
[ -f "$out/perf.txt" ] && head -25 "$out/perf.txt"
