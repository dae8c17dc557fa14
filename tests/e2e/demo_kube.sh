#!/bin/sh
# End-to-end test of `make demo-kube` (deploy/demo/demo-kube.sh): the demo's timeline on the
# real test cluster (tests/kube/cluster.sh). Runs the demo with --keep and asserts, from its
# output (the timeline reads the live objects, Events and annotations from the API server) and
# the kept directory (the enforcer's audit and logs), that:
#   * the cluster named its real components; the enforcer ran as the shipped ServiceAccount;
#   * in dry run it only reported (the notebook's "would scaleToZero"), changing nothing;
#   * with --no-dry-run the idle notebook's StatefulSet got a notice (annotation, Event), was
#     scaled to zero and lost its pod; the training Job, idle after 30 s, got a notice and was
#     suspended; the busy inference Deployment was never noticed nor acted on;
#   * `restore` brought both back (Events IdleGPUReclaimRestored, pods Running again);
#   * nothing the demo started is still running.
# About three minutes warm (the idle timer is 1 minute, the notice 20 s): make check runs it
# beside the CPU-bound stages (Makefile, KUBE_BG_SUITES), not among the timed e2e suites.
. "$(dirname "$0")/../lib.sh"
require python3 curl openssl go node prometheus "$BIN/gpureclaim-enforcer" "$BIN/gpureclaim-exporter"

out=$TMP/demo-kube.out
T0=$(date +%s)
sh "$TOP/deploy/demo/demo-kube.sh" --keep </dev/null >"$out" 2>&1 &
DEMO_PID=$!
BG_PIDS="$BG_PIDS $DEMO_PID"
wait "$DEMO_PID"
rc=$?
echo "demo-kube ran $(( $(date +%s) - T0 )) s"
check exit-status [ "$rc" -eq 0 ]
sed 's/^/    | /' "$out"
DIR=$(sed -n 's/^working directory //p' "$out" | head -n 1)
if [ -z "$DIR" ] || [ ! -d "$DIR" ]; then
    fail kept-directory "no demo directory in the output"
    finish
    exit
fi

for c in "kube-apiserver v1\." "etcd 3\.6\." "kwok v0\." "kube-state-metrics v2\."; do
    check "versions-${c%% *}" grep -q "^ *$c" "$out"
done
check enforcer-is-the-sa grep -q 'the enforcer authenticates as system:serviceaccount:gpureclaim:gpureclaim-enforcer' "$out"
check permissions-granted grep -q 'permission check: all [0-9]* permissions the rules can use are granted' "$out"

# audit N EVENT RESULT NAME: how many audit lines of that event and result name the workload
# (a pod of it, or it as the root owner)
audit() {
    python3 - "$DIR/audit.jsonl" "$@" <<'PY'
import json, sys
path, event, result, name = sys.argv[1:5]
n = 0
for line in open(path):
    a = json.loads(line)
    if a.get("event") != event or a.get("result") != result:
        continue
    if (a.get("workload") or {}).get("pod", "").startswith(name + "-") or \
            any(o.get("name") == name for o in a.get("owner_chain") or []):
        n += 1
print(n)
PY
}
is_n() { [ "$(audit "$@")" = "$N" ]; }

# dry run: a report, and nothing else from that enforcer
check dry-run-reported grep -q 'enforcer: dry run: would scaleToZero StatefulSet notebooks/notebook-alice' "$out"
N=1; check dry-run-audit is_n dry_run dry_run notebook-alice
check dry-run-changed-nothing sh -c '! grep -Eq "msg=\"(notice|reclaimed|scaled|patch)" "$1"' sh "$DIR/enforcer-dry.log"
check then-no-dry-run grep -q 'enforcer restarted with --no-dry-run' "$out"

# the notebook and the Job: notice, action, restore, each once; their Events and annotations
# as the timeline read them from the API server
N=1
for w in notebook-alice train-carol; do
    check "notice-$w" is_n notice ok "$w"
    check "action-$w" is_n action ok "$w"
    check "restore-$w" is_n restore ok "$w"
done
check notebook-annotation grep -q 'notebooks/notebook-alice annotation gpureclaim.io/reclaim-notice: {"actAt"' "$out"
check notebook-event-notice grep -q 'Event IdleGPUReclaimNotice on StatefulSet/notebook-alice' "$out"
check notebook-event-reclaimed grep -q 'Event IdleGPUReclaimed on StatefulSet/notebook-alice: idle GPU reclaimed: scaled from 1 to 0' "$out"
check notebook-scaled grep -q 'notebooks/notebook-alice statefulset/notebook-alice: replicas 0' "$out"
check notebook-event-restored grep -q 'Event IdleGPUReclaimRestored on StatefulSet/notebook-alice' "$out"
check job-event-notice grep -q 'Event IdleGPUReclaimNotice on Job/train-carol' "$out"
check job-event-reclaimed grep -q 'Event IdleGPUReclaimed on Job/train-carol: idle GPU reclaimed' "$out"
check job-suspended grep -q 'training/train-carol *job/train-carol: suspended' "$out"
check job-event-restored grep -q 'Event IdleGPUReclaimRestored on Job/train-carol' "$out"
check job-resumed grep -q 'training/train-carol *job/train-carol: running' "$out"
# the inference Deployment: busy, never noticed, never acted on, its two pods kept
N=0
# the dry run's report does not stay beside the live notice to be withdrawn after the action
check notebook-dry-run-not-withdrawn is_n spared ok notebook-alice
check inference-no-notice is_n notice ok llm-serve-bob
check inference-no-action is_n action ok llm-serve-bob
check inference-no-dry-run is_n dry_run dry_run llm-serve-bob
check inference-kept grep -q 'kept: inference/llm-serve-bob, replicas 2, 2 pods' "$out"
check inference-busy grep -Eq 'busy: .*llm-serve-bob [7-9][0-9]% [7-9][0-9]%' "$out"
check restored-running grep -q 'restored: notebook-alice and train-carol Running again' "$out"
check summary-all-ok [ "$(grep -Ec '^  [a-z]+/[a-z-]+ .* ok$' "$out")" -eq 3 ]
check activity-source-said grep -q 'Activity: generated busy values (simulate.py)' "$out"

left=$(ps -eo pid=,args= | grep -F "$DIR" | grep -v grep || true)
if [ -z "$left" ]; then pass no-process-left; else fail no-process-left "$left"; fi
if [ "$TEST_FAILED" -ne 0 ]; then
    for f in enforcer-dry enforcer exporter kube-node podres simulator; do
        echo "---- $f.log (last lines) ----"
        tail -n 10 "$DIR/$f.log" 2>/dev/null | sed 's/^/    /'
    done
fi
rm -rf "$DIR"
finish
