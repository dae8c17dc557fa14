#!/bin/sh
# Grafana dashboards without Grafana (Debian 12 packages no Grafana server): structural checks, then
# every variable and panel query, variables substituted, against a real Prometheus that
# scrapes the exporter on the 8 x MI300X CPX fixture with rules/prometheus/ loaded and holds one
# hour of backfilled owners, enforcer metrics and kube-state-metrics. Every query must return
# data. Optionally type-checks the JSON against @grafana/schema with tsc (needs the npm
# registry; skipped with a note otherwise).
. "$(dirname "$0")/../lib.sh"

CHECK="python3 $TOP/tests/dashboards/check.py"
DASHBOARDS=$(ls "$TOP"/dashboards/*.json)

# ---- structure ------------------------------------------------------------------------------
$CHECK structure $DASHBOARDS || TEST_FAILED=$((TEST_FAILED + 1))

# The checker itself must reject a broken dashboard: duplicate panel id, a panel on a fixed
# datasource, an unknown metric.
python3 - "$TOP/dashboards/gpureclaim-cluster.json" "$TMP/broken.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = [x for x in d["panels"] if x["type"] != "row"]
p[1]["id"] = p[0]["id"]
p[2]["targets"][0]["datasource"] = {"type": "prometheus", "uid": "prom1"}
p[3]["targets"][0]["expr"] = "sum(gpureclaim_no_such_metric)"
json.dump(d, open(sys.argv[2], "w"))
EOF
$CHECK structure "$TMP/broken.json" >"$TMP/broken.out" 2>&1
for c in panel-ids-unique datasource-variable-everywhere known-metrics-only; do
    check "checker-rejects-$c" grep -q "^FAIL: dashboards/broken.json/$c" "$TMP/broken.out"
done

# Provisioning files: the data source is Prometheus, the provider loads files.
check provisioning python3 -c '
import os, sys
sys.path.insert(0, sys.argv[1] + "/tests/dashboards")
from miniyaml import load
d = sys.argv[1] + "/dashboards/provisioning/"
ds = load(open(d + "datasource.yaml").read())
pv = load(open(d + "dashboards.yaml").read())
assert ds["apiVersion"] == 1 and ds["datasources"][0]["type"] == "prometheus"
assert pv["apiVersion"] == 1 and pv["providers"][0]["type"] == "file"
assert pv["providers"][0]["options"]["path"]
' "$TOP"

# ---- Prometheus with live exporter data and backfilled history -------------------------------
TREE=$TOP/tests/fixtures/mi300x-cpx
port=$(free_port)
start_bg "$TMP/exporter.log" "$BIN/gpureclaim-exporter" --web.listen-address="127.0.0.1:$port" \
    --path.sysfs="$TREE/sys" --path.procfs="$TREE/proc" --path.devfs="$TREE/dev"
if ! wait_http "http://127.0.0.1:$port/healthz" 60; then
    fail exporter-start "$(tail -n 5 "$TMP/exporter.log")"
    exit 1
fi

now=$(date +%s)
$CHECK backfill "$TMP/history.om" "$now" "http://127.0.0.1:$port/metrics"
check backfill promtool tsdb create-blocks-from openmetrics "$TMP/history.om" "$TMP/data" -q

# The shipped rules, but the group gpureclaim.idle_beyond evaluated every second like the
# others instead of every minute, so that its panel has data without waiting up to a minute
# for its first evaluation (here only whether the query returns data counts; its numbers are
# checked at the shipped 1m on a week of history below).
sed 's/^    interval: 1m$/    interval: 1s/' "$TOP/rules/prometheus/gpureclaim.rules.yml" >"$TMP/rules.yml"
check rules-copy-differs-in-interval-only test "$(diff "$TOP/rules/prometheus/gpureclaim.rules.yml" "$TMP/rules.yml" | grep -c '^[<>]')" -eq 2
scrape_config "$TMP/prometheus.yml" "$port" gpureclaim-exporter "$TMP/rules.yml"
check promtool-config promtool check config "$TMP/prometheus.yml"
if ! start_prometheus "$TMP/prometheus.yml" "$TMP/data"; then
    fail prometheus-start "$(tail -n 5 "$TMP/prometheus.log")"
    exit 1
fi

# count EXPR: number of series an instant query returns.
count() {
    prom_query "$@" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))'
}
# The first scrape comes about 6 s after ready; the recording rules need it and one evaluation.
deadline=$(( $(date +%s) + 90 ))
while [ "$(count 'gpureclaim:workload_busy:ratio')" -lt 2 ] && [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 0.5
done
check recording-workloads [ "$(count 'gpureclaim:workload_busy:ratio')" -eq 2 ]
check recording-idle-pod-zero [ "$(count 'gpureclaim:workload_busy:ratio{pod="idle-b"} == 0')" -eq 1 ]
check recording-container [ "$(count 'gpureclaim:container_busy:ratio{container_name="bench"} == 0.37')" -eq 1 ]
# The exporter may add owners of its own (processes on the fixture): compare with the data.
check recording-allocated [ "$(count 'gpureclaim:partitions_allocated:count == scalar(count(group by (gpu, partition) (gpureclaim_owner_info)))')" -eq 1 ]
# Let the recording rules write a few points for the range queries: three evaluations of each
# workload's ratio, as counted by Prometheus (a fixed sleep is not three on a loaded machine).
# Asked at the very time (whole seconds) the queries below are then run at.
three_points() {
    CHECK_AT=$(date +%s)
    [ "$(count 'count_over_time(gpureclaim:workload_busy:ratio[1m]) >= 3' "$CHECK_AT")" -eq 2 ]
}
wait_for 60 three_points || fail recording-points "fewer than 3 evaluations in 60 s"
# The idle-beyond group too: 4 timers of namespace ml.
idle_beyond_ready() {
    CHECK_AT=$(date +%s)
    [ "$(count 'gpureclaim:namespace_idle_beyond_timer:gpu_hours{namespace="ml"}' "$CHECK_AT")" -eq 4 ]
}
wait_for 30 idle_beyond_ready || fail recording-idle-beyond "no evaluation of gpureclaim.idle_beyond in 30 s"

$CHECK queries "$PROM_URL" "$CHECK_AT" $DASHBOARDS || TEST_FAILED=$((TEST_FAILED + 1))
stop_pid "$PROM_PID"

# ---- idle beyond each timer: a week of known history ------------------------------------------
# The panel's numbers on a generated week (check.py IDLE_PODS: idle stretches of known length,
# a hole, an unknown device) against the ones worked out by hand. The rules are evaluated by a
# real Prometheus, every minute as the group's interval says (check.py idle-eval), in two
# passes because the timer rules read the per-pod one, each pass backfilled for the next. The
# server answers with a 30 s lookback so that an instant selector at a minute sees that
# minute's sample only: the generated history has no staleness markers, which a live
# recording rule's series gets when it stops.
END=1698969600 # 2023-11-03T00:00:00Z; the history starts 8 days before
$CHECK idle-history "$TMP/idle.om" "$END"
backfill_idle() { # NAME OPENMETRICS
    check "idle-backfill-$1" promtool tsdb create-blocks-from openmetrics \
        --max-block-duration=240h "$2" "$TMP/idle" -q
}
mkdir -p "$TMP/idle"
backfill_idle history "$TMP/idle.om"
printf 'global:\n  scrape_interval: 15s\nscrape_configs: []\n' >"$TMP/idle.yml"
for pass in 1 2; do
    if ! start_prometheus "$TMP/idle.yml" "$TMP/idle" --query.lookback-delta=30s; then
        fail "idle-prometheus-$pass" "$(tail -n 5 "$TMP/prometheus.log")"
        break
    fi
    # pass 1 from a day before the week, for the 24h windows of its first day
    from=$((END - 7 * 86400 - (2 - pass) * 86400))
    check "idle-eval-$pass" $CHECK idle-eval $pass "$PROM_URL" "$from" "$END" "$TMP/idle-pass$pass.om"
    stop_pid "$PROM_PID"
    backfill_idle "pass$pass" "$TMP/idle-pass$pass.om"
done
if start_prometheus "$TMP/idle.yml" "$TMP/idle" --query.lookback-delta=30s; then
    $CHECK idle-check "$PROM_URL" "$END" "$TOP/dashboards/gpureclaim-enforcer.json" ||
        TEST_FAILED=$((TEST_FAILED + 1))
    stop_pid "$PROM_PID"
else
    fail idle-prometheus "$(tail -n 5 "$TMP/prometheus.log")"
fi

# ---- optional: types from @grafana/schema ----------------------------------------------------
# Each dashboard becomes a TypeScript object literal typed Dashboard, so string literals keep
# their literal types and unknown keys are errors. The schema's enums (MappingType,
# ThresholdsMode, ...) cannot be written in JSON, so "'"value"' is not assignable to
# MappingType" is dropped when "value" is one of the enum's values.
if [ -n "${SKIP_TSC:-}" ]; then
    echo "note: SKIP_TSC set, @grafana/schema type check skipped"
elif ! command -v npm >/dev/null 2>&1; then
    echo "note: npm not installed, @grafana/schema type check skipped"
else
    mkdir -p "$TMP/tsc"
    if (cd "$TMP/tsc" && npm install --silent --no-audit --no-fund --no-save \
            @grafana/schema typescript@5 >"$TMP/npm.log" 2>&1); then
        cat >"$TMP/tsc/tsconfig.json" <<'EOC'
{"compilerOptions": {"strict": true, "noEmit": true, "module": "nodenext",
  "moduleResolution": "nodenext", "skipLibCheck": true}, "include": ["*.ts"]}
EOC
        for f in $DASHBOARDS; do
            {
                echo "import type { Dashboard } from '@grafana/schema';"
                printf 'export const d: Dashboard = '
                cat "$f"
                echo ';'
            } >"$TMP/tsc/$(basename "$f" .json).ts"
        done
        (cd "$TMP/tsc" && ./node_modules/.bin/tsc -p . >"$TMP/tsc.log" 2>&1)
        $CHECK tsc-filter "$TMP/tsc.log" "$TMP/tsc/node_modules/@grafana/schema/dist/types" ||
            TEST_FAILED=$((TEST_FAILED + 1))
    else
        echo "note: npm install @grafana/schema failed (no registry?), type check skipped:"
        tail -n 3 "$TMP/npm.log"
    fi
fi
finish
