#!/bin/sh
# End to end: the enforcer presets for other exporters (rules/presets/) on a backfilled history
# shaped exactly like those exporters' output (data/presets/gen_history.py says whose and from
# which commit), through their own recording rules, as a cluster would run them:
#   1. the raw history (dcgm-exporter, AMD device-metrics-exporter, kube-state-metrics) is
#      backfilled into a real Prometheus;
#   2. the presets' recording rules (rules/prometheus/presets/) are evaluated over that
#      history with `promtool tsdb create-blocks-from rules`, and Prometheus restarted on
#      both;
#   3. `gpureclaim-enforcer plan` with each preset must decide every workload as expected:
#      idle pods reclaimed (whole GPU, MIG instance, unpartitioned AMD GPU), busy ones kept
#      (a MIG instance whose DCGM_FI_DEV_GPU_UTIL reads 0 included), and missing data
#      (lost pod labels, no profiling metrics, partitioned AMD GPUs) kept.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/presets
ENF=$BIN/gpureclaim-enforcer
AT=1700000000

require prometheus promtool python3 curl "$ENF"

for p in "$TOP"/rules/presets/*.yaml; do
    check "check-$(basename "$p" .yaml)" "$ENF" check "$p"
done

python3 "$DATA/gen_history.py" history "$TMP/history.om"
need_history "$TMP/history.om"

# Evaluate the recording rules over the whole history, as Prometheus would have every 30 s.
mkdir -p "$TMP/recorded"
if promtool tsdb create-blocks-from rules --start=$((AT - 7200)) --end=$AT \
    --url="$PROM_URL" --eval-interval=30s --output-dir="$TMP/recorded" \
    "$TOP"/rules/prometheus/presets/*.yml >"$TMP/rules-backfill.log" 2>&1; then
    pass rules-backfill
else
    fail rules-backfill "$(tail -n 3 "$TMP/rules-backfill.log")"
    exit 1
fi
stop_pid "$PROM_PID"
mv "$TMP"/recorded/* "$TMP/tsdb/"
start_prometheus "$TMP/prometheus.yml" "$TMP/tsdb" ||
    { fail prometheus-restart "$(tail -n 5 "$TMP/prometheus.log")"; exit 1; }
pass prometheus-restart

# The recorded series exist: MIG instances and whole GPUs alike.
n=$(prom_query 'count(gpureclaim:dcgm_workload_busy:ratio)' $AT |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
check recorded-dcgm test "$n" = 4

# plan_check PRESET: plan at AT, compare every expected workload's decision and reason.
plan_check() {
    "$ENF" plan --rules.file="$TOP/rules/presets/$1.yaml" --prometheus.url="$PROM_URL" \
        --at=$AT --output=json >"$TMP/$1.plan.json" 2>"$TMP/$1.plan.err"
    check "$1-plan-exit-0" test $? -eq 0
    python3 "$DATA/gen_history.py" expect "$1" >"$TMP/$1.expect.json"
    python3 - "$TMP/$1.plan.json" "$TMP/$1.expect.json" "$SUITE" "$1" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
expect = json.load(open(sys.argv[2]))
suite, preset = sys.argv[3], sys.argv[4]
got = {d["workload"].get("pod"): (d["decision"], d["reason"]) for d in plan}
for pod, want in sorted(expect.items()):
    g = got.get(pod)
    ok = g == tuple(want)
    print("%s: %s/%s-%s%s" % ("PASS" if ok else "FAIL", suite, preset, pod,
                              "" if ok else " (want %s, got %s)" % (want, g)))
extra = sorted(p for p, (dec, _) in got.items() if p not in expect and dec == "reclaim")
print("%s: %s/%s-nothing-else-reclaimed%s" % ("FAIL" if extra else "PASS", suite, preset,
                                             " (%s)" % extra if extra else ""))
PY
}
plan_check dcgm-exporter
plan_check amd-device-metrics-exporter

# The reclaimed workloads carry the resource's Kubernetes name, which --kube.confirm-pressure
# looks for in the scheduler's "Insufficient <resource>" message.
resource() {
    python3 -c '
import json, sys
print(" ".join(d["resource"] for d in json.load(open(sys.argv[1])) if d["workload"]["pod"] == sys.argv[2]))' "$TMP/$1.plan.json" "$2"
}
check dcgm-resource-gpu test "$(resource dcgm-exporter nv-idle)" = nvidia.com/gpu
check dcgm-resource-mig test "$(resource dcgm-exporter mig-idle)" = nvidia.com/mig-1g.10gb
check amd-resource-gpu test "$(resource amd-device-metrics-exporter amd-idle)" = amd.com/gpu

# The same decisions in the table a user reads: the MIG instance is kept as active.
"$ENF" plan --rules.file="$TOP/rules/presets/dcgm-exporter.yaml" --prometheus.url="$PROM_URL" \
    --at=$AT >"$TMP/dcgm.plan.txt" 2>&1
check dcgm-table-mig-busy grep -q 'pod="mig-busy" *keep *active' "$TMP/dcgm.plan.txt"
finish
