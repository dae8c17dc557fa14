#!/bin/sh
# A real Prometheus (Debian's package) scrapes the exporter running on the 8 x MI300X CPX
# fixture; instant queries must see 8 GPUs, 64 partitions and the busy values documented in
# tests/fixtures/mi300x-cpx/GENERATED.md.
. "$(dirname "$0")/../lib.sh"

TREE=$TOP/tests/fixtures/mi300x-cpx
port=$(free_port)
start_bg "$TMP/exporter.log" "$BIN/gpureclaim-exporter" --web.listen-address="127.0.0.1:$port" \
    --path.sysfs="$TREE/sys" --path.procfs="$TREE/proc" --path.devfs="$TREE/dev" \
    --kubelet.pod-resources-socket=
wait_http "http://127.0.0.1:$port/healthz" 60 ||
    { fail exporter-start "$(tail -n 5 "$TMP/exporter.log")"; exit 1; }
scrape_config "$TMP/prometheus.yml" "$port" gpureclaim
check promtool-config promtool check config "$TMP/prometheus.yml"
start_prometheus "$TMP/prometheus.yml" "$TMP/data" ||
    { fail prometheus-start "$(tail -n 5 "$TMP/prometheus.log")"; exit 1; }

# Service discovery sends targets at most every 5 s: poll for the first scrape.
deadline=$(( $(date +%s) + 90 ))
while [ "$(prom_value 'count(gpureclaim_gpu_info)')" = none ] && [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 0.5
done
check target-up [ "$(prom_value 'up{job="gpureclaim"}')" = 1 ]
check gpus-8 [ "$(prom_value 'count(gpureclaim_gpu_info)')" = 8 ]
check partitions-64 [ "$(prom_value 'count(gpureclaim_partition_info)')" = 64 ]
check partition-busy-64 [ "$(prom_value 'count(gpureclaim_partition_busy_ratio)')" = 64 ]
check partitions-per-gpu [ "$(prom_value 'count(gpureclaim_gpu_partitions == 8)')" = 8 ]
check busy-sum [ "$(prom_value 'round(sum(gpureclaim_partition_busy_ratio) * 100)')" = 2421 ]
check idle-partitions-29 [ "$(prom_value 'count(gpureclaim_partition_busy_ratio == 0)')" = 29 ]
check busy-a7-p4 [ "$(prom_value 'gpureclaim_partition_busy_ratio{gpu="0000:a7:00.0",partition="4"}')" = 0.99 ]
check busy-e5-p7 [ "$(prom_value 'gpureclaim_partition_busy_ratio{gpu="0000:e5:00.0",partition="7"}')" = 0.37 ]
check gpu-busy-a7 [ "$(prom_value 'gpureclaim_gpu_busy_ratio{gpu="0000:a7:00.0"}')" = 0.44 ]
check all-collectors-but-amdgpu-ok [ "$(prom_value 'sum(gpureclaim_scrape_collector_success{collector!="amdgpu"})')" = 4 ]
check device-id-join [ "$(prom_value 'count(gpureclaim_partition_busy_ratio * on (gpu, partition) group_left (device_id) gpureclaim_partition_info{device_id=~"amdgpu_xcp_.*"})')" = 56 ]
finish
