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

scrape_config "$TMP/prometheus.yml" "$port" gpureclaim-exporter \
    "$TOP/rules/prometheus/gpureclaim.rules.yml"
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

$CHECK queries "$PROM_URL" "$CHECK_AT" $DASHBOARDS || TEST_FAILED=$((TEST_FAILED + 1))

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
