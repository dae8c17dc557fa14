#!/bin/sh
# End-to-end test of the ownership collector (exporter/collector_ownership.c, owners.c).
#
# The exporter runs on the 8 x MI300X CPX fixture with the generated processes
# (tests/fixtures/mi300x-cpx/proc) and KFD process files (sys-kfd-proc, copied with the sys
# tree into a temporary root because gen_fixtures.py owns sys/), against the real gRPC
# pod-resources server (tests/podres/server.js) answering mi300x-cpx-owners.json. Checks:
#   1. the ownership families equal tests/golden/ownership.prom (UPDATE_GOLDEN=1 rewrites it)
#      and the whole /metrics passes `promtool check metrics`;
#   2. with the kubelet gone, scrapes still succeed, source_up{source="kubelet"} is 0, the
#      kubelet owners disappear and the partition metrics do not change;
#   3. --collector.ownership.per-process adds gpureclaim_process_* series with a pid label;
#   4. with a real Podman API service, a container labelled gpureclaim.io/devices=amdgpu_xcp_3
#      becomes a runtime owner of that partition, and stops being one when removed.
set -u
. "$(dirname "$0")/../lib.sh"

EXPORTER=$BIN/gpureclaim-exporter
FIX=$TOP/tests/fixtures/mi300x-cpx
GOLDEN=$TOP/tests/golden/ownership.prom
SERVER_DIR=$TOP/tests/podres

require curl
if [ ! -x "$EXPORTER" ]; then
    fail setup "missing $EXPORTER; run 'make'"
    exit 1
fi
need_podres_server

# The sysfs root: the generated tree plus the KFD process files where the kernel has them.
mkdir -p "$TMP/root"
cp -a "$FIX/sys" "$TMP/root/sys"
mkdir -p "$TMP/root/sys/class/kfd/kfd/proc"
cp -a "$FIX/sys-kfd-proc/." "$TMP/root/sys/class/kfd/kfd/proc/"

# The ownership families, without the refresh time and duration (they change every run).
FAMILIES='gpureclaim_(owner_info|workload_[a-z_]*|process_[a-z_]*|ownership_source_up)'
own_filter() {
    grep -E "^(# (HELP|TYPE) )?${FAMILIES}[ {]"
}

# start_exporter NAME ARGS...: start on a free port; sets $URL and $EXP_PID.
start_exporter() {
    _name=$1; shift
    _port=$(free_port)
    start_bg "$TMP/exporter-$_name.log" "$EXPORTER" --web.listen-address="127.0.0.1:$_port" \
        --path.sysfs="$TMP/root/sys" --path.procfs="$FIX/proc" --path.devfs="$TMP/nodev" \
        --no-collector.amdgpu --collector.ownership.refresh-interval=500ms --log.level=debug "$@"
    EXP_PID=$LAST_PID
    URL="http://127.0.0.1:$_port"
    wait_http "$URL/healthz" 60
}

# wait_metric PATTERN [SECONDS]: poll /metrics until a line matches the extended regex.
wait_metric() {
    _deadline=$(( $(date +%s) + ${2:-60} ))
    while [ "$(date +%s)" -le "$_deadline" ]; do
        curl -s "$URL/metrics" | grep -qE "$1" && return 0
        sleep 0.2
    done
    return 1
}

# ---- 1. golden -----------------------------------------------------------------------------
SOCK=$TMP/kubelet.sock
start_bg "$TMP/podres.log" node "$SERVER_DIR/server.js" "$SOCK" \
    "$TOP/tests/fixtures/podres/mi300x-cpx-owners.json"
PODRES_PID=$LAST_PID
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$SOCK" ] || fail podres-start "$(tail -n 3 "$TMP/podres.log")"

if ! start_exporter main --kubelet.pod-resources-socket="$SOCK"; then
    fail exporter-start "$(tail -n 5 "$TMP/exporter-main.log")"
    exit 1
fi
if wait_metric 'gpureclaim_ownership_source_up\{source="kubelet"\} 1'; then
    pass kubelet-up
else
    fail kubelet-up "$(curl -s "$URL/metrics" | grep ownership_source_up)"
fi
curl -s "$URL/metrics" >"$TMP/main.raw"
own_filter <"$TMP/main.raw" >"$TMP/main.prom"
if [ -n "${UPDATE_GOLDEN:-}" ]; then
    cp "$TMP/main.prom" "$GOLDEN"
    echo "updated $GOLDEN"
fi
if diff -u "$GOLDEN" "$TMP/main.prom" >"$TMP/golden.diff" 2>&1; then
    pass golden
else
    head -n 40 "$TMP/golden.diff"
    fail golden
fi
check collector-success grep -qx 'gpureclaim_scrape_collector_success{collector="ownership"} 1' \
    "$TMP/main.raw"
if command -v promtool >/dev/null 2>&1; then
    if promtool check metrics <"$TMP/main.raw" >"$TMP/promtool.out" 2>&1; then
        pass promtool
    else
        fail promtool "$(head -n 5 "$TMP/promtool.out")"
    fi
else
    fail promtool "promtool not installed; run 'make deps'"
fi
# Owners join the partition metrics on (gpu, partition): every owned partition has a busy series.
awk -F'[{},]' '/^gpureclaim_owner_info\{/ {
        for (i = 2; i <= NF; i++) { if ($i ~ /^gpu=/) g = $i; if ($i ~ /^partition=/) p = $i }
        print g "," p }' "$TMP/main.raw" | sort -u >"$TMP/owned.keys"
awk -F'[{},]' '/^gpureclaim_partition_busy_ratio\{/ {
        for (i = 2; i <= NF; i++) { if ($i ~ /^gpu=/) g = $i; if ($i ~ /^partition=/) p = $i }
        print g "," p }' "$TMP/main.raw" | sort -u >"$TMP/busy.keys"
if [ -s "$TMP/owned.keys" ] && [ -z "$(comm -23 "$TMP/owned.keys" "$TMP/busy.keys")" ]; then
    pass labels-join-partitions
else
    fail labels-join-partitions "$(comm -23 "$TMP/owned.keys" "$TMP/busy.keys" | head -n 3)"
fi
# The same snapshot renders the same way: two scrapes agree (timestamps filtered).
curl -s "$URL/metrics" | own_filter >"$TMP/main.again"
check stable cmp -s "$TMP/main.prom" "$TMP/main.again"

# ---- 2. kubelet gone -----------------------------------------------------------------------
grep -E '^gpureclaim_partition_' "$TMP/main.raw" >"$TMP/partitions.before"
stop_pid "$PODRES_PID"
if wait_metric 'gpureclaim_ownership_source_up\{source="kubelet"\} 0'; then
    pass kubelet-down-reported
else
    fail kubelet-down-reported
fi
code=$(curl -s -o "$TMP/down.raw" -w '%{http_code}' "$URL/metrics")
check scrape-ok-without-kubelet [ "$code" = 200 ]
grep -E '^gpureclaim_partition_' "$TMP/down.raw" >"$TMP/partitions.after"
check partitions-unchanged cmp -s "$TMP/partitions.before" "$TMP/partitions.after"
check collector-failed-without-kubelet \
    grep -qx 'gpureclaim_scrape_collector_success{collector="ownership"} 0' "$TMP/down.raw"
check no-kubelet-owners sh -c "! grep -q '^gpureclaim_owner_info{.*source=\"kubelet\"' '$TMP/down.raw'"
# Processes are still seen; the one on llm-train-0's partition has no pod name any more.
check processes-still-seen grep -q \
    '^gpureclaim_owner_info{.*device_id="0000:05:00.0".*source="process"} 1' "$TMP/down.raw"
check procfs-still-up grep -qx 'gpureclaim_ownership_source_up{source="procfs"} 1' \
    "$TMP/down.raw"
if grep -q "cannot use pod-resources socket '$SOCK'" "$TMP/exporter-main.log"; then
    pass kubelet-error-logged
else
    fail kubelet-error-logged
fi
stop_pid "$EXP_PID"

# ---- 3. per-process series -----------------------------------------------------------------
if start_exporter perproc --kubelet.pod-resources-socket= --collector.ownership.per-process &&
    wait_metric '^gpureclaim_process_vram_bytes\{'; then
    curl -s "$URL/metrics" >"$TMP/perproc.raw"
    check per-process-pid grep -q \
        '^gpureclaim_process_vram_bytes{gpu="0000:27:00.0",partition="0",.*,pid="4201"} 42949672960' \
        "$TMP/perproc.raw"
    # Without the kubelet configured there is no kubelet source at all, not a failed one.
    check kubelet-not-configured sh -c "! grep -q 'source=\"kubelet\"' '$TMP/perproc.raw'"
    check per-process-success grep -qx \
        'gpureclaim_scrape_collector_success{collector="ownership"} 1' "$TMP/perproc.raw"
else
    fail per-process-pid "no gpureclaim_process_ series"
fi
stop_pid "$EXP_PID"

# ---- 4. Podman container with the devices label --------------------------------------------
. "$TOP/tests/podman.sh"
if ! podman_start "$TMP/podman"; then
    fail podman-start "$PODMAN_ERR"
    finish
    exit
fi
# lib.sh's clean-up stops what start_bg started; the Podman service is podman.sh's.
CLEANUP_HOOK=podman_stop
NAME=gr-owner-$$
if ! podman_cmd run -d --name "$NAME" --label gpureclaim.io/devices=amdgpu_xcp_3 \
    "$PODMAN_IMAGE" sleep 600 >"$TMP/podman-run.log" 2>&1; then
    fail podman-run "$(tail -n 3 "$TMP/podman-run.log")"
else
    start_exporter podman --kubelet.pod-resources-socket= --runtime.socket="$PODMAN_SOCK"
    WANT="gpureclaim_owner_info\\{gpu=\"0000:05:00.0\",partition=\"4\",device_id=\"amdgpu_xcp_3\""
    WANT="$WANT.*container_name=\"$NAME\",source=\"runtime\"\\} 1"
    if wait_metric "$WANT" 60; then
        pass runtime-owner-from-label
    else
        fail runtime-owner-from-label "$(curl -s "$URL/metrics" | grep -E 'owner_info.*runtime|source_up')"
    fi
    check runtime-up sh -c "curl -s '$URL/metrics' | grep -qx 'gpureclaim_ownership_source_up{source=\"runtime\"} 1'"
    podman_cmd rm -f -t 0 "$NAME" >/dev/null 2>&1
    gone() { ! curl -s "$URL/metrics" | grep -q "container_name=\"$NAME\""; }
    if wait_metric 'gpureclaim_ownership_source_up\{source="runtime"\} 1' 60 && wait_for 60 gone; then
        pass runtime-owner-removed
    else
        fail runtime-owner-removed
    fi
    stop_pid "$EXP_PID"
fi
finish
