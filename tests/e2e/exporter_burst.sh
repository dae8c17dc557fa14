#!/bin/sh
# A workload that computes in short bursts between scrapes: the driver's accumulators count it,
# the instantaneous gauge never sees it. On a live copy of the 8 x MI300X CPX fixture,
# tests/gen/burst_gpu_metrics.py rewrites GPU 0's gpu_metrics about once a second so that
# partition 3 (amdgpu_xcp_2) is busy 1 s in every 5 s (20 %) while its instantaneous busy
# fields read 0. The exporter serves it, the kubelet pod-resources server (tests/podres) gives
# the partition to pod ml/burst, and a real Prometheus scrapes every second and evaluates the
# shipped rules (rules/prometheus/gpureclaim.rules.yml). After the rules' 2-minute window has
# filled, gpureclaim:workload_busy:ratio{pod="burst"} must read 0.20 +- 0.02 from the
# accumulators, while the gauge the previous rules averaged read 0 at every scrape (the
# workload would have been reclaimed as idle). About 2.5 minutes.
. "$(dirname "$0")/../lib.sh"

require curl prometheus promtool python3
if [ ! -x "$BIN/gpureclaim-exporter" ]; then
    fail setup "missing $BIN/gpureclaim-exporter; run 'make'"
    exit 1
fi
need_podres_server

GPU=0000:05:00.0
PART=3
DEVICE=amdgpu_xcp_2
SEL="gpu=\"$GPU\",partition=\"$PART\""

# A private copy of the fixture: the writer changes one of its files.
mkdir -p "$TMP/root" "$TMP/proc" "$TMP/dev"  # no processes: the kubelet names the owner
cp -a "$TOP/tests/fixtures/mi300x-cpx/sys" "$TMP/root/sys"
BLOB=$TMP/root/sys/bus/pci/devices/$GPU/gpu_metrics
start_bg "$TMP/writer.log" python3 "$TOP/tests/gen/burst_gpu_metrics.py" --file "$BLOB" \
    --partition "$PART" --busy-seconds 1 --period 5 --interval 1 --ready "$TMP/writer.ready"
i=0
while [ ! -f "$TMP/writer.ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$TMP/writer.ready" ] || { fail writer-start "$(tail -n 3 "$TMP/writer.log")"; exit 1; }

cat >"$TMP/podres.json" <<EOF
{"list": {"pod_resources": [{"name": "burst", "namespace": "ml", "containers": [
  {"name": "main", "devices": [{"resource_name": "amd.com/gpu", "device_ids": ["$DEVICE"]}]}]}]},
 "allocatable": {}}
EOF
SOCK=$TMP/kubelet.sock
start_bg "$TMP/podres.log" node "$TOP/tests/podres/server.js" "$SOCK" "$TMP/podres.json"
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$SOCK" ] || { fail podres-start "$(tail -n 3 "$TMP/podres.log")"; exit 1; }

port=$(free_port)
start_bg "$TMP/exporter.log" "$BIN/gpureclaim-exporter" --web.listen-address="127.0.0.1:$port" \
    --path.sysfs="$TMP/root/sys" --path.procfs="$TMP/proc" --path.devfs="$TMP/dev" \
    --kubelet.pod-resources-socket="$SOCK" --collector.ownership.refresh-interval=1
wait_http "http://127.0.0.1:$port/healthz" 10 ||
    { fail exporter-start "$(tail -n 5 "$TMP/exporter.log")"; exit 1; }

scrape_config "$TMP/prometheus.yml" "$port" gpureclaim-exporter \
    "$TOP/rules/prometheus/gpureclaim.rules.yml"
check promtool-config promtool check config "$TMP/prometheus.yml"
start_prometheus "$TMP/prometheus.yml" "$TMP/data" ||
    { fail prometheus-start "$(tail -n 5 "$TMP/prometheus.log")"; exit 1; }
started=$(date +%s)

# within V LO HI: LO <= V <= HI (V a number).
within() {
    python3 -c 'import sys; v, lo, hi = map(float, sys.argv[1:]); sys.exit(not lo <= v <= hi)' \
        "$1" "$2" "$3" 2>/dev/null
}

# The kubelet names the owner.
deadline=$((started + 30))
while [ "$(prom_value "gpureclaim_owner_info{pod=\"burst\",$SEL}")" = none ] &&
    [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 0.5
done
check owner [ "$(prom_value "gpureclaim_owner_info{pod=\"burst\",$SEL}")" = 1 ]

# The rules' window is 2 minutes (plus about 6 s before the first scrape); then let the value
# settle for a few evaluations. Until then the partition has no value at all (its accumulators
# exist), never the gauge's 0.
RATIO="gpureclaim:workload_busy:ratio{namespace=\"ml\",pod=\"burst\"}"
METHOD="gpureclaim:workload_busy_devices:count{pod=\"burst\",activity_method=\"accumulator\"}"
sleep 60
check accumulator-series [ "$(prom_value "count(gpureclaim_partition_gfx_busy_accumulator_total{$SEL})")" = 1 ]
check counter-series [ "$(prom_value "count(gpureclaim_partition_accumulation_counter_total{$SEL})")" = 1 ]
check no-value-before-window [ "$(prom_value "$RATIO")" = none ]
deadline=$((started + 170))
while [ "$(prom_value "$METHOD")" = none ] && [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 1
done
first=$(( $(date +%s) - started ))
sleep 10
ratio=$(prom_value "$RATIO")
echo "note: $SUITE: workload_busy:ratio = $ratio (accumulator value from ${first}s after Prometheus started)"
check method-accumulator [ "$(prom_value "$METHOD")" = 1 ]
check accumulator-ratio-0.20 within "$ratio" 0.18 0.22
check one-series [ "$(prom_value "count(gpureclaim:workload_busy:ratio{pod=\"burst\"})")" = 1 ]

# The gauge read 0 at every scrape over the whole run (it has been scraped, and its maximum is
# 0), and so does the previous rule, which averaged it.
check gauge-scraped within "$(prom_value "count_over_time(gpureclaim_partition_busy_ratio{$SEL}[3m])")" 100 1000
check gauge-max-0 [ "$(prom_value "max_over_time(gpureclaim_partition_busy_ratio{$SEL}[3m])")" = 0 ]
check gauge-rule-0 [ "$(prom_value "avg by (namespace, pod) (max by (namespace, pod, instance, gpu, partition) (gpureclaim_partition_busy_ratio * on (instance, gpu, partition) group_right gpureclaim_owner_info{pod=\"burst\"}))")" = 0 ]
echo "note: $SUITE: $(( $(date +%s) - started ))s after Prometheus started"
finish
