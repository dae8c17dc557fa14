#!/bin/sh
# The exporter on nodes it was not built for (issue 20): installed on every node of a fleet, it
# meets nodes with no AMD GPU, and nodes with an AMD GPU that amdgpu does not serve. On each
# shape (tests/fixtures/node-*, built around a real NVIDIA H200 VM's PCI bus) it is scraped 20
# times with discovery redone on every scrape, and must:
#  - without an AMD GPU (no class/drm, an empty one, only an NVIDIA card): say so once at
#    info, publish 0 GPUs and 0 partitions, report every collector successful, warn never;
#  - with unserved AMD GPUs: name each one in gpureclaim_gpu_unserved and warn once per GPU,
#    and say "cleared" once when amdgpu serves it again;
#  - where nothing can tell (neither class/drm nor bus/pci/devices): fail its collectors, but
#    log each failure once, not once per scrape.
. "$(dirname "$0")/../lib.sh"

EXPORTER=$BIN/gpureclaim-exporter
SCRAPES=20

start_exporter() { # SYSFS LOG
    port=$(free_port)
    start_bg "$2" "$EXPORTER" --web.listen-address="127.0.0.1:$port" --path.sysfs="$1" \
        --path.procfs="$TMP/no-proc" --path.devfs="$TMP/no-dev" --no-collector.ownership \
        --gpu.rediscover-interval=0
    EXP_PID=$LAST_PID
    URL="http://127.0.0.1:$port"
    wait_http "$URL/healthz" 60
}

scrape_n() { # N OUT: scrape N times, keep the last answer
    _i=0
    while [ $_i -lt "$1" ]; do
        curl -s "$URL/metrics" >"$2"
        _i=$((_i + 1))
    done
}

# count LOG LEVEL TEXT: lines of LEVEL containing TEXT.
count() { grep "level=$2 " "$1" | grep -c -F -- "$3"; }

# value FILE SERIES: the value of an exact series line.
value() { grep -F -- "$2 " "$1" | grep -v '^#' | awk '{print $NF}' | head -n 1; }

for tree in node-no-drm node-empty-drm node-nvidia-drm; do
    log=$TMP/$tree.log
    if ! start_exporter "$TOP/tests/fixtures/$tree/sys" "$log"; then
        fail "$tree-start" "$(tail -n 3 "$log")"
        continue
    fi
    scrape_n $SCRAPES "$TMP/$tree.prom"
    stop_pid "$EXP_PID"
    check "$tree-said-once-at-info" test "$(count "$log" info 'no AMD GPU on this node')" -eq 1
    check "$tree-no-warning" test "$(grep -c 'level=warn ' "$log")" -eq 0
    check "$tree-gpus-0" test "$(value "$TMP/$tree.prom" gpureclaim_gpus_discovered)" = 0
    check "$tree-partitions-0" test \
        "$(value "$TMP/$tree.prom" gpureclaim_partitions_discovered)" = 0
    for c in devices gpu_metrics partitions amdgpu; do
        check "$tree-success-$c" test "$(value "$TMP/$tree.prom" \
            "gpureclaim_scrape_collector_success{collector=\"$c\"}")" = 1
    done
    check "$tree-no-unserved" sh -c "! grep -q '^gpureclaim_gpu_unserved' '$TMP/$tree.prom'"
done

# Unserved AMD GPUs, on a copy of the tree so that one of them can be served again.
tree=node-amd-unserved
cp -R "$TOP/tests/fixtures/$tree" "$TMP/$tree"
log=$TMP/$tree.log
if start_exporter "$TMP/$tree/sys" "$log"; then
    scrape_n $SCRAPES "$TMP/$tree.prom"
    check unserved-named test "$(value "$TMP/$tree.prom" \
        'gpureclaim_gpu_unserved{gpu="0000:00:07.0",pci_id="1002:74A1",driver=""}')" = 1
    check unserved-vfio-named test "$(value "$TMP/$tree.prom" \
        'gpureclaim_gpu_unserved{gpu="0000:00:08.0",pci_id="1002:74A1",driver="vfio-pci"}')" = 1
    check unserved-audio-not-a-gpu sh -c "! grep -q '0000:00:09.0' '$TMP/$tree.prom'"
    check unserved-gpus-0 test "$(value "$TMP/$tree.prom" gpureclaim_gpus_discovered)" = 0
    for c in devices gpu_metrics partitions amdgpu; do
        check "unserved-success-$c" test "$(value "$TMP/$tree.prom" \
            "gpureclaim_scrape_collector_success{collector=\"$c\"}")" = 1
    done
    check unserved-warned-once test "$(count "$log" warn "AMD GPU '0000:00:07.0'")" -eq 1
    check unserved-vfio-warned-once test \
        "$(count "$log" warn "AMD GPU '0000:00:08.0' (1002:74A1) is not served by amdgpu: it has no DRM device and is bound to 'vfio-pci'")" -eq 1
    check unserved-two-warnings test "$(grep -c 'level=warn ' "$log")" -eq 2
    # The GPU leaves the bus (or is served, which removes it from the unserved set alike).
    rm -r "$TMP/$tree/sys/bus/pci/devices/0000:00:07.0"
    scrape_n 3 "$TMP/$tree.after"
    stop_pid "$EXP_PID"
    check unserved-cleared-once test "$(count "$log" info "cleared: AMD GPU '0000:00:07.0'")" -eq 1
    check unserved-cleared-series sh -c "! grep -q '0000:00:07.0' '$TMP/$tree.after'"
    check unserved-other-stays test "$(count "$log" warn "AMD GPU '0000:00:08.0'")" -eq 1
else
    fail unserved-start "$(tail -n 3 "$log")"
fi

# Nothing to tell from: neither class/drm nor bus/pci/devices. Unknown is a failure, said once.
mkdir -p "$TMP/empty-sys"
log=$TMP/unknown.log
if start_exporter "$TMP/empty-sys" "$log"; then
    scrape_n $SCRAPES "$TMP/unknown.prom"
    stop_pid "$EXP_PID"
    check unknown-devices-fails test "$(value "$TMP/unknown.prom" \
        'gpureclaim_scrape_collector_success{collector="devices"}')" = 0
    check unknown-no-count sh -c "! grep -q '^gpureclaim_gpus_discovered' '$TMP/unknown.prom'"
    for c in devices gpu_metrics partitions amdgpu; do
        check "unknown-$c-failure-logged-once" test \
            "$(count "$log" warn "collector '$c' failed: cannot open")" -eq 1
    done
    check unknown-warnings-bounded test "$(grep -c 'level=warn ' "$log")" -le 5
else
    fail unknown-start "$(tail -n 3 "$log")"
fi
finish
