#!/bin/sh
# --at.before-cycle of tests/e2e/kube_faults.sh: the daemon's next cycle waits here until the
# test lets it run, so that the test sets up each cycle's fault (token, etcd, API server) while
# no cycle runs, and knows when a cycle has ended (the next one is waiting).
# usage: gate.sh DIR. Writes DIR/waiting ("N TIME": N cycles have passed the gate, TIME the
# cycle's evaluation time), then waits for DIR/go (removed). DIR/stop, or DIR gone, or 300 s
# without a go: exit 1, which stops the daemon.
G=$1
n=$(cat "$G/passed" 2>/dev/null || echo 0)
echo "$n ${GPURECLAIM_CYCLE_TIME:-}" >"$G/waiting.tmp" && mv "$G/waiting.tmp" "$G/waiting"
i=0
while [ ! -e "$G/go" ]; do
    [ -d "$G" ] && [ ! -e "$G/stop" ] && [ "$i" -lt 3000 ] || exit 1
    i=$((i + 1))
    sleep 0.1
done
rm -f "$G/go" "$G/waiting"
echo $((n + 1)) >"$G/passed"
