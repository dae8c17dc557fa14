#!/bin/sh
# A workload that computes in short bursts between scrapes: the driver's accumulators count it,
# the instantaneous gauge never sees it. Two nodes, one per gpu_metrics generation: live copies
# of the 8 x MI300X CPX fixtures mi300x-cpx (v1_8, accumulators in xcp_stats) and
# mi300x-cpx-v19 (v1_9 tables and per-partition xcp_metrics v1_1). On each,
# tests/gen/burst_gpu_metrics.py rewrites GPU 0's metrics about once a second so that partition
# 3 (amdgpu_xcp_2) is busy 1 s in every 5 s (20 %) while its instantaneous busy fields read 0.
# Each node has its exporter and its kubelet (the pod-resources server, tests/podres) giving
# the partition to pod ml/burst-v18 or ml/burst-v19; a real Prometheus scrapes both every
# second and evaluates the shipped rules (rules/prometheus/gpureclaim.rules.yml). Checks:
#   * before the rules' 2-minute window has filled, the pods have no busy ratio (not the
#     gauge's 0);
#   * then gpureclaim:workload_busy:ratio reads 0.20 +- 0.02, from the accumulators;
#   * the gauge read 0 at every scrape, and so did the previous rule that averaged it (the
#     workloads would have been reclaimed as idle).
# About 2.5 minutes.
. "$(dirname "$0")/../lib.sh"

require curl node prometheus promtool python3
if [ ! -x "$BIN/gpureclaim-exporter" ]; then
    fail setup "missing $BIN/gpureclaim-exporter; run 'make'"
    exit 1
fi
need_podres_server

GPU=0000:05:00.0
PART=3
DEVICE=amdgpu_xcp_2
SEL="gpu=\"$GPU\",partition=\"$PART\""
PORTS=""

# wait_file PATH: poll up to 10 s for a file or socket.
wait_file() {
    _i=0
    while [ ! -e "$1" ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
    [ -e "$1" ]
}

# start_node NAME FIXTURE [--xcp-metrics]: a private copy of the fixture's sys tree animated
# by the writer, its kubelet and its exporter (on NODE_PORT, appended to PORTS). 1 on a failed
# start.
start_node() {
    _n=$1; _root=$TMP/$1
    mkdir -p "$_root/proc" "$_root/dev"  # no processes: the kubelet names the owner
    cp -a "$TOP/tests/fixtures/$2/sys" "$_root/sys"
    _xcp=""
    [ "${3:-}" != --xcp-metrics ] ||
        _xcp="--xcp-metrics=$_root/sys/devices/platform/$DEVICE/xcp/xcp_metrics"
    start_bg "$TMP/writer-$_n.log" python3 "$TOP/tests/gen/burst_gpu_metrics.py" \
        --gpu-metrics="$_root/sys/bus/pci/devices/$GPU/gpu_metrics" $_xcp --partition="$PART" \
        --busy-seconds=1 --period=5 --interval=1 --ready="$_root/writer.ready"
    wait_file "$_root/writer.ready" || { fail "$_n-writer" "$(tail -n 3 "$TMP/writer-$_n.log")"; return 1; }

    cat >"$_root/podres.json" <<EOF
{"list": {"pod_resources": [{"name": "burst-$_n", "namespace": "ml", "containers": [
  {"name": "main", "devices": [{"resource_name": "amd.com/gpu", "device_ids": ["$DEVICE"]}]}]}]},
 "allocatable": {}}
EOF
    start_bg "$TMP/podres-$_n.log" node "$TOP/tests/podres/server.js" "$_root/kubelet.sock" \
        "$_root/podres.json"
    wait_file "$_root/kubelet.sock" || { fail "$_n-podres" "$(tail -n 3 "$TMP/podres-$_n.log")"; return 1; }

    _port=$(free_port)
    start_bg "$TMP/exporter-$_n.log" "$BIN/gpureclaim-exporter" \
        --web.listen-address="127.0.0.1:$_port" --path.sysfs="$_root/sys" \
        --path.procfs="$_root/proc" --path.devfs="$_root/dev" \
        --kubelet.pod-resources-socket="$_root/kubelet.sock" \
        --collector.ownership.refresh-interval=1s
    wait_http "http://127.0.0.1:$_port/healthz" 60 ||
        { fail "$_n-exporter" "$(tail -n 5 "$TMP/exporter-$_n.log")"; return 1; }
    PORTS="$PORTS $_port"
    NODE_PORT=$_port
}
start_node v18 mi300x-cpx || exit 1
NODES="v18:$NODE_PORT"
start_node v19 mi300x-cpx-v19 --xcp-metrics || exit 1
NODES="$NODES v19:$NODE_PORT"

scrape_config "$TMP/prometheus.yml" "$PORTS" gpureclaim-exporter \
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

# The kubelets name the owners.
deadline=$((started + 30))
while [ "$(prom_value "count(gpureclaim_owner_info{pod=~\"burst-.*\",$SEL})")" != 2 ] &&
    [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 0.5
done
check owners [ "$(prom_value "count(gpureclaim_owner_info{pod=~\"burst-.*\",$SEL})")" = 2 ]

# The rules' window is 2 minutes (plus about 6 s before the first scrape). Until it has
# filled, the partitions have no value at all (their accumulators exist), never the gauge's 0.
sleep 60
for node in $NODES; do
    n=${node%%:*}
    pod="namespace=\"ml\",pod=\"burst-$n\""
    inst="instance=\"127.0.0.1:${node#*:}\""
    check "$n-accumulator-series" [ "$(prom_value "count(gpureclaim_partition_gfx_busy_accumulator_total{$inst,$SEL})")" = 1 ]
    check "$n-counter-series" [ "$(prom_value "count(gpureclaim_partition_accumulation_ticks_total{$inst,$SEL})")" = 1 ]
    check "$n-no-value-before-window" [ "$(prom_value "gpureclaim:workload_busy:ratio{$pod}")" = none ]
done
METHOD="gpureclaim:workload_busy_devices:count{pod=~\"burst-.*\",activity_method=\"accumulator\"}"
deadline=$((started + 170))
while [ "$(prom_value "count($METHOD)")" != 2 ] && [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 1
done
first=$(( $(date +%s) - started ))
# Let the value settle for a few evaluations.
sleep 10
for node in $NODES; do
    n=${node%%:*}
    pod="namespace=\"ml\",pod=\"burst-$n\""
    inst="instance=\"127.0.0.1:${node#*:}\""
    ratio=$(prom_value "gpureclaim:workload_busy:ratio{$pod}")
    echo "note: $SUITE: $n workload_busy:ratio = $ratio (accumulators complete ${first}s after Prometheus started)"
    check "$n-method-accumulator" [ "$(prom_value "gpureclaim:workload_busy_devices:count{$pod,activity_method=\"accumulator\"}")" = 1 ]
    check "$n-accumulator-ratio-0.20" within "$ratio" 0.18 0.22
    check "$n-one-series" [ "$(prom_value "count(gpureclaim:workload_busy:ratio{$pod})")" = 1 ]
    # The gauge read 0 at every scrape over the whole run (it has been scraped, and its
    # maximum is 0), and so did the previous rule, which averaged it.
    check "$n-gauge-scraped" within "$(prom_value "count_over_time(gpureclaim_partition_busy_ratio{$inst,$SEL}[3m])")" 100 1000
    check "$n-gauge-max-0" [ "$(prom_value "max_over_time(gpureclaim_partition_busy_ratio{$inst,$SEL}[3m])")" = 0 ]
    check "$n-gauge-rule-0" [ "$(prom_value "avg by (namespace, pod) (max by (namespace, pod, instance, gpu, partition) (gpureclaim_partition_busy_ratio * on (instance, gpu, partition) group_right gpureclaim_owner_info{$pod}))")" = 0 ]
done
echo "note: $SUITE: $(( $(date +%s) - started ))s after Prometheus started"
finish
