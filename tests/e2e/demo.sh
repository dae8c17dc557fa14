#!/bin/sh
# End-to-end test of `make demo` (deploy/demo/demo.sh): the whole loop with real Podman
# containers, the exporter on the simulated MI300X node, Prometheus with the recording rules
# and the enforcer stopping idle containers.
#
# Runs the demo non-interactively for DEMO_TEST_DURATION (default 225 s: the goes-idle workload
# is busy for its first 60 s, then needs the 2-minute idle timer, a 10 s step of max_over_time,
# up to 10 s to the next enforcement cycle, plus Prometheus' ~6 s to the first scrape and the
# start-up), keeps its directory. While it runs, after the first container is stopped, it runs
# every Grafana dashboard query against the demo's Prometheus. Then it asserts from the demo's
# output, the enforcer's audit file and the timeline's summary that exactly the idle and
# goes-idle containers were stopped, and that nothing the demo started is still running.
. "$(dirname "$0")/../lib.sh"

DURATION=${DEMO_TEST_DURATION:-225s}

# ---- the simulator alone: what it writes is what the exporter reports ----------------------

SIM=$TMP/sim
python3 "$TOP/deploy/demo/simulate.py" --root "$SIM" --samples 1 --interval 0.1 \
    --workload a=busy:amdgpu_xcp_0 --workload b=idle:0000:e5:00.0 \
    --workload c=goes-idle:amdgpu_xcp_55,amdgpu_xcp_54 --status-file "$TMP/sim.json" \
    >"$TMP/sim.log" 2>&1
check simulator-runs [ $? -eq 0 ]
check simulator-no-temp-files [ -z "$(find "$SIM" -name '*.tmp.*')" ]
port=$(free_port)
start_bg "$TMP/sim-exporter.log" "$BIN/gpureclaim-exporter" --web.listen-address="127.0.0.1:$port" \
    --path.sysfs="$SIM/sys" --path.procfs="$TMP/none" --path.devfs="$TMP/none" \
    --no-collector.amdgpu
SIM_EXPORTER=$LAST_PID
wait_http "http://127.0.0.1:$port/metrics" 60 || fail simulator-exporter-start
curl -s "http://127.0.0.1:$port/metrics" >"$TMP/sim.prom"
stop_pid "$SIM_EXPORTER"

# The simulator's record of each partition's busy percent must be the exporter's ratio, every
# other partition 0, and each GPU's busy the rounded mean of its partitions.
sim_matches() {
    python3 - "$TMP/sim.json" "$TMP/sim.prom" <<'PY'
import json, re, sys
st = json.load(open(sys.argv[1]))["workloads"]
part, gpu = {}, {}
for line in open(sys.argv[2]):
    m = re.match(r'gpureclaim_partition_busy_ratio\{gpu="([^"]+)",partition="(\d)"\} (\S+)', line)
    if m:
        part[(m.group(1), int(m.group(2)))] = round(float(m.group(3)) * 100)
    m = re.match(r'gpureclaim_gpu_busy_ratio\{gpu="([^"]+)"\} (\S+)', line)
    if m:
        gpu[m.group(1)] = round(float(m.group(2)) * 100)
want = {("0000:05:00.0", 1): st["a"]["busy"][0], ("0000:e5:00.0", 0): st["b"]["busy"][0],
        ("0000:e5:00.0", 7): st["c"]["busy"][0], ("0000:e5:00.0", 6): st["c"]["busy"][1]}
ok = len(part) == 64 and len(gpu) == 8 and all(part[k] == want.get(k, 0) for k in part)
ok = ok and 70 <= want[("0000:05:00.0", 1)] <= 95 and want[("0000:e5:00.0", 0)] <= 3
ok = ok and 70 <= want[("0000:e5:00.0", 7)] <= 95  # goes-idle starts busy
for g in gpu:
    ok = ok and gpu[g] == (sum(part.get((g, p), 0) for p in range(8)) * 2 + 8) // 16
print("partitions %d, gpus %d: %s" % (len(part), len(gpu), "ok" if ok else "MISMATCH"))
sys.exit(0 if ok else 1)
PY
}
check simulator-matches-exporter sim_matches

# The schedules: a bursty workload's burst lasts two samples, goes-idle turns idle at 60 s.
check simulator-schedules python3 -B -c '
import random, sys
sys.path.insert(0, sys.argv[1])
import simulate as s
r = random.Random(1)
ts = range(0, 200, 2)
b = [s.busy_percent(r, "bursty", t, 2.0) for t in ts]
assert [t for t, v in zip(ts, b) if v == 60] == [30, 32, 90, 92, 150, 152], b
assert all(v <= 3 for v in b if v != 60)
assert all(70 <= s.busy_percent(r, "goes-idle", t, 2.0) <= 95 for t in range(0, 60, 2))
assert all(s.busy_percent(r, "goes-idle", t, 2.0) <= 3 for t in range(60, 200, 2))
assert all(s.busy_percent(r, "exempt", t, 2.0) <= 3 for t in ts)
' "$TOP/deploy/demo"

# ---- the whole demo -----------------------------------------------------------------------

for c in podman prometheus busybox; do
    if ! command -v "$c" >/dev/null 2>&1; then
        echo "SKIP: $SUITE/demo ('$c' is not installed; run 'make deps')"
        finish
        exit
    fi
done

out=$TMP/demo.out
dash=$TMP/dashboards.out
sh "$TOP/deploy/demo/demo.sh" --duration "$DURATION" --keep </dev/null >"$out" 2>&1 &
DEMO_PID=$!
# If this test dies first, its EXIT trap stops the demo, which then stops what it started.
BG_PIDS="$BG_PIDS $DEMO_PID"

# ---- the dashboards against the running demo ------------------------------------------------
# Once the enforcer has stopped a container (the timeline's first "-> STOPPED") every panel has
# something to show: activity, owners, idle runs, decisions and an action. The demo runs
# containers only (no pods, no kube-state-metrics), so check.py --container-only requires data
# from every query but the few pod-only ones it lists, and those to be empty. The URL of the
# demo's Prometheus is the one it prints. The check waits until Prometheus holds at least two
# samples of the enforcer's action counter since the stop, which rate() needs.
deadline=$(( $(date +%s) + 200 ))
while kill -0 "$DEMO_PID" 2>/dev/null && ! grep -q -- '-> STOPPED' "$out" &&
    [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 1
done
PROM_URL=$(sed -n 's|^  Prometheus  *\(http://127\.0\.0\.1:[0-9]*\)/graph.*|\1|p' "$out" |
    head -n 1)
if grep -q -- '-> STOPPED' "$out" && [ -n "$PROM_URL" ] && kill -0 "$DEMO_PID" 2>/dev/null; then
    # Asked at the very time the dashboards' queries are then run at (whole seconds, as
    # check.py takes it): a sample newer than that time would not count there.
    two_samples() {
        CHECK_AT=$(date +%s)
        [ "$(curl -s "$PROM_URL/api/v1/query" --data-urlencode "time=$CHECK_AT" --data-urlencode \
            'query=count(count_over_time(gpureclaim_enforcer_actions_total[1m]) >= 2)' |
            python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else 0)')" -ge 1 ]
    }
    wait_for 60 two_samples || echo "note: $SUITE: fewer than two action counter samples in 60 s"
    python3 "$TOP/tests/dashboards/check.py" queries --container-only "$PROM_URL" "$CHECK_AT" \
        "$TOP"/dashboards/*.json >"$dash" 2>&1
    check dashboards-queries [ $? -eq 0 ]
    grep -q '^PASS: ' "$dash" || fail dashboards-ran "no query was checked"
    sed 's/^/    dashboards: /' "$dash"
else
    fail dashboards-queries "no '-> STOPPED' while the demo ran (Prometheus '$PROM_URL')"
fi

wait "$DEMO_PID"
rc=$?
check exit-status [ "$rc" -eq 0 ]
DEMO_DIR=$(sed -n 's/^working directory //p' "$out" | head -n 1)
if [ -z "$DEMO_DIR" ] || [ ! -d "$DEMO_DIR" ]; then
    fail kept-directory "no demo directory in the output"
    sed 's/^/    /' "$out"
    finish
    exit
fi

# The demo's own output (URLs, timeline, summary) goes into this suite's log for reading.
sed 's/^/    | /' "$out"
check urls-printed grep -q '^  Prometheus  *http://127\.0\.0\.1:[0-9]*/graph?g0.expr=' "$out"
check enforcer-url grep -q '^  enforcer metrics  *http://127\.0\.0\.1:[0-9]*/metrics' "$out"
check summary-printed grep -q '^Summary' "$out"
# The backtest of the demo's own history, its rules against the stricter variant: both tables,
# the differences, and at least the three containers the enforcer stopped as reclaims of A.
check backtest-ran sh -c '! grep -q "^demo: backtest failed" "$1"' sh "$out"
check backtest-a grep -q '^A .*deploy/demo/rules.yaml: .*, every 10s, [0-9]* cycles; returns within 1h$' "$out"
check backtest-b grep -q '^B .*deploy/demo/rules-strict.yaml: ' "$out"
check backtest-compare grep -q '^reclaims only in  *[0-9]*  *[0-9]*$' "$out"
# pinned-erin is idle throughout and never stopped: its exempt label is on the container,
# which the history does not show but the Podman API does. The backtest looks each candidate
# up as it is now and leaves it out, named, as run did; it is always a candidate, so always
# looked up. The containers the enforcer really stopped are reclaimed only where a 10 s cycle
# falls between their proof and their stop (a few seconds on a loaded machine), so they are
# not counted on.
check backtest-a-lookup grep -q '^A looked up as they are now in the container runtime (reads only, once per workload): gpureclaim.io/exempt and --runtime.scope-label on containers: [1-9][0-9]* workloads\{0,1\}, 1 left out, 0 not checked (counted)$' "$out"
check backtest-a-erin-left-out grep -q '^A   left out: demo-always {container_name="pinned-erin"}: labelled gpureclaim.io/exempt=true in its owner chain$' "$out"
check backtest-a-erin-not-reclaimed sh -c '! grep -q "pinned-erin.* GPU-hours, [0-9]* reclaim\|only A: .*pinned-erin" "$1"' sh "$out"
# Then recommend on the same history: the grid, the node's group with R's current setting,
# and pinned-erin left out of every point.
check recommend-ran sh -c '! grep -q "^demo: recommend failed" "$1"' sh "$out"
check recommend-head grep -q '^.*deploy/demo/rules.yaml: chosen on .* every 10s; target: at most 10% returned within 5m; 12 grid points$' "$out"
check recommend-group grep -q '^demo-always instance=127\.0\.0\.1:[0-9]* ([0-9]* workloads): 10% 2m notice 0s -> ' "$out"
check recommend-current grep -q '^  current  *[0-9]* reclaims, [0-9.]* GPU-hours freed, ' "$out"
check recommend-erin-left-out grep -q '^  left out: {container_name="pinned-erin"}: labelled gpureclaim.io/exempt=true in its owner chain$' "$out"

# audit_has KIND NAME: the audit file has an event of that kind for that container.
audit_has() {
    python3 - "$DEMO_DIR/audit.jsonl" "$1" "$2" <<'EOF'
import json, sys
path, kind, name = sys.argv[1:]
found = False
with open(path) as f:
    for line in f:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("event") == kind and name in json.dumps(ev):
            found = True
sys.exit(0 if found else 1)
EOF
}

# outcome NAME: "stopped" or "running" from the timeline's summary.
outcome() {
    python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
print(next((r["actual"] for r in rows if r["workload"] == sys.argv[2]), "missing"))
' "$DEMO_DIR/summary.json" "$1" 2>/dev/null || echo "missing"
}

check audit-file [ -s "$DEMO_DIR/audit.jsonl" ]
for w in notebook-alice notebook-frank eval-dave; do
    check "stopped-$w" [ "$(outcome "$w")" = stopped ]
    check "audit-action-$w" audit_has action "$w"
    check "timeline-$w" grep -q "$w .*-> STOPPED by rule demo-always" "$out"
done
for w in train-bob sweep-carol pinned-erin; do
    check "running-$w" [ "$(outcome "$w")" = running ]
    if audit_has action "$w"; then fail "no-action-$w"; else pass "no-action-$w"; fi
done
# The exempt workload was idle too: the enforcer found its label and wrote why it was spared.
check audit-exempt-pinned-erin python3 -c '
import json, sys
sys.exit(0 if any(e.get("event") == "skipped" and e.get("result") == "exempt"
                  and e.get("workload", {}).get("container_name") == "pinned-erin"
                  for e in map(json.loads, open(sys.argv[1]))) else 1)' "$DEMO_DIR/audit.jsonl"
check timeline-spared grep -q 'pinned-erin .*SPARED by rule demo-always' "$out"
# The bursty workload was idle long enough to be a candidate but each burst restarted its timer.
check bursty-restarts grep -q 'sweep-carol .*active again' "$out"
check summary-all-ok [ "$(grep -c ' ok$' "$out")" -eq 6 ]
check cleanup-message grep -q '^stopping everything the demo started' "$out"

# Nothing left behind: no process mentions the demo directory (Podman service, conmon,
# exporter, Prometheus, enforcer, simulator) and no process is in a cgroup of a container the
# demo created (podman prints each container id on `run -d`).
left=$(ps -eo pid=,args= | grep -F "$DEMO_DIR" | grep -v grep || true)
if [ -z "$left" ]; then pass no-process-left; else fail no-process-left "$left"; fi
stray=""
for id in $(grep -E '^[0-9a-f]{64}$' "$DEMO_DIR/podman-run.log" 2>/dev/null); do
    if grep -l "$id" /proc/[0-9]*/cgroup 2>/dev/null | grep -q .; then stray="$stray $id"; fi
done
check containers-created [ "$(grep -cE '^[0-9a-f]{64}$' "$DEMO_DIR/podman-run.log")" -eq 6 ]
if [ -z "$stray" ]; then pass no-container-left; else fail no-container-left "$stray"; fi

if [ "$TEST_FAILED" -ne 0 ]; then
    echo "---- demo output ----"
    sed 's/^/    /' "$out"
    for f in enforcer exporter simulator; do
        echo "---- $f.log (last lines) ----"
        tail -n 15 "$DEMO_DIR/$f.log" 2>/dev/null | sed 's/^/    /'
    done
fi
rm -rf "$DEMO_DIR"
finish
