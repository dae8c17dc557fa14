#!/bin/sh
# The accumulator counters end to end: the exporter runs on a copy of the mi300x-cpx-v19
# tree, the test rewrites GPU 0's gpu_metrics v1_9 table and one partition's xcp_metrics v1_1
# file between scrapes (tests/gen/gpu_metrics_blob.py --attr), and checks the counters:
# they start at 0, advance by the raw deltas (a 20 % busy interval reads 0.20), follow a U32
# wrap of gfx_activity_acc (read raw, Prometheus would count it as a reset and lose busy
# time), do not move over a driver reload or an interval with a sentinel, never decrease,
# and omit a partition whose accumulator is unknown.
. "$(dirname "$0")/../lib.sh"

GEN="python3 $TOP/tests/gen/gpu_metrics_blob.py"
cp -a "$TOP/tests/fixtures/mi300x-cpx-v19/sys" "$TMP/sys"
GPU0=$TMP/sys/devices/pci0000:00/0000:05:00.0
XCP2=$TMP/sys/devices/platform/amdgpu_xcp_1/xcp/xcp_metrics # GPU 0, partition 2

# gpu TABLE: GPU 0's whole-device table with accumulation_counter C and gfx_activity_acc A.
gpu_table() { # C A
    $GEN --attr gpu --idle-mi300x --set accumulation_counter="$1" --set gfx_activity_acc="$2" \
        --set ppt_residency_acc="$1" --output "$GPU0/gpu_metrics.new" &&
        mv "$GPU0/gpu_metrics.new" "$GPU0/gpu_metrics"
}
# xcp BUSY_ACC COUNTER: partition 2's table ('-' = all-ones).
xcp_table() { # BUSY_ACC COUNTER
    $GEN --attr partition --fields acc-counter --set gfx_busy_inst=0 --set gfx_busy_acc="$1" \
        --set accumulation_counter="$2" --output "$XCP2.new" && mv "$XCP2.new" "$XCP2"
}

port=$(free_port)
start_bg "$TMP/exporter.log" "$BIN/gpureclaim-exporter" --web.listen-address="127.0.0.1:$port" \
    --path.sysfs="$TMP/sys" --no-collector.ownership --log.level=debug
wait_http "http://127.0.0.1:$port/healthz" 60 ||
    { fail exporter-start "$(tail -n 5 "$TMP/exporter.log")"; exit 1; }

N=0
scrape() {
    N=$((N + 1))
    curl -s "http://127.0.0.1:$port/metrics" >"$TMP/scrape.$N"
}
# get NAME LABELS: the value of one series in the last scrape, "none" if absent.
get() {
    awk -v k="$1{$2}" '$1 == k { v = $2 } END { print (v == "" ? "none" : v) }' "$TMP/scrape.$N"
}
G='gpu="0000:05:00.0"'
P="$G,partition=\"2\""
expect() { # NAME VALUE ACTUAL
    if [ "$3" = "$2" ]; then pass "$1"; else fail "$1" "want $2, got $3"; fi
}

gpu_table 1000000 4294960000
xcp_table 50000000 1000000
scrape
expect start-partition-counter 0 "$(get gpureclaim_partition_accumulation_ticks_total "$P")"
expect start-partition-busy 0 "$(get gpureclaim_partition_gfx_busy_accumulator_total "$P")"
expect start-gpu-busy 0 "$(get gpureclaim_gpu_metrics_gfx_activity_accumulator_total "$G")"
expect collector-ok 1 "$(get gpureclaim_scrape_collector_success 'collector="gpu_metrics"')"

# 1000 ticks, 20 % busy on partition 2; the whole-GPU accumulator wraps its U32 (delta 8000).
gpu_table 1001000 704
xcp_table 50020000 1001000
scrape
expect busy-interval-counter 1000 "$(get gpureclaim_partition_accumulation_ticks_total "$P")"
expect busy-interval-busy 20000 "$(get gpureclaim_partition_gfx_busy_accumulator_total "$P")"
# CPX: one XCC per partition, so no per-XCC series repeating the partition's.
expect no-xcc-series-in-cpx none \
    "$(get gpureclaim_gpu_metrics_xcc_gfx_busy_accumulator_total "$P,xcc=\"0\"")"
expect u32-wrap-followed 8000 "$(get gpureclaim_gpu_metrics_gfx_activity_accumulator_total "$G")"
expect gpu-counter 1000 "$(get gpureclaim_gpu_metrics_accumulation_ticks_total "$G")"
expect residency 1000 \
    "$(get gpureclaim_gpu_metrics_throttle_residency_accumulator_total "$G,reason=\"ppt\"")"

# The same table again (driver cache): nothing moves.
scrape
expect cached-table 1000 "$(get gpureclaim_partition_accumulation_ticks_total "$P")"

# Driver reload: the raw values restart. That interval is dropped, the counters stay.
gpu_table 500 100
xcp_table 100 500
scrape
expect reset-counter-kept 1000 "$(get gpureclaim_partition_accumulation_ticks_total "$P")"
expect reset-busy-kept 20000 "$(get gpureclaim_partition_gfx_busy_accumulator_total "$P")"
expect reset-gpu-busy-kept 8000 "$(get gpureclaim_gpu_metrics_gfx_activity_accumulator_total "$G")"

# The next interval counts again: 1000 ticks idle.
gpu_table 1500 100
xcp_table 100 1500
scrape
expect after-reset-counter 2000 "$(get gpureclaim_partition_accumulation_ticks_total "$P")"
expect after-reset-busy 20000 "$(get gpureclaim_partition_gfx_busy_accumulator_total "$P")"

# The busy accumulator becomes unknown: the partition's series is omitted (never 0), and the
# counter does not advance over that interval nor the next one.
xcp_table - 2500
scrape
expect unknown-busy-omitted none "$(get gpureclaim_partition_gfx_busy_accumulator_total "$P")"
expect unknown-interval-dropped 2000 \
    "$(get gpureclaim_partition_accumulation_ticks_total "$P")"
xcp_table 50000 3500
scrape
expect after-unknown-dropped 2000 "$(get gpureclaim_partition_accumulation_ticks_total "$P")"
expect after-unknown-busy 20000 "$(get gpureclaim_partition_gfx_busy_accumulator_total "$P")"
xcp_table 100000 4500
scrape
expect after-unknown-counts 3000 "$(get gpureclaim_partition_accumulation_ticks_total "$P")"
expect after-unknown-busy-counts 70000 \
    "$(get gpureclaim_partition_gfx_busy_accumulator_total "$P")"

# xcp_metrics v1_1 of ROCm 7.2 has no counter of its own and divides by the GPU's. While the
# GPU's table cannot be parsed (cut short, then unreadable) no accumulator is published, and
# the instantaneous gauge (0 here) is withheld too: the recording rule would fall back to it.
gpu_table 10000 100
$GEN --attr partition --set gfx_busy_inst=0 --set gfx_busy_acc=200000 --output "$XCP2.new" &&
    mv "$XCP2.new" "$XCP2"
scrape
expect gpu-counter-gauge-kept 0 "$(get gpureclaim_partition_busy_ratio "$P")"
printf '\176\004\001\011' >"$GPU0/gpu_metrics" # a v1_9 header and nothing else
scrape
expect gpu-table-cut-no-ticks none "$(get gpureclaim_partition_accumulation_ticks_total "$P")"
expect gpu-table-cut-no-gauge none "$(get gpureclaim_partition_busy_ratio "$P")"
rm "$GPU0/gpu_metrics"
scrape
expect gpu-table-gone-no-gauge none "$(get gpureclaim_partition_busy_ratio "$P")"

# GPU 2 partition 5 has no accumulator in the fixture: no series, not 0.
G2='gpu="0000:47:00.0",partition="5"'
expect fixture-unknown-partition none "$(get gpureclaim_partition_gfx_busy_accumulator_total "$G2")"
# Its slot was never valid: no tick series either, so the rule does not take it for a
# partition with accumulators (on an SPX GPU the whole-GPU branch applies instead).
expect fixture-unknown-partition-no-ticks none \
    "$(get gpureclaim_partition_accumulation_ticks_total "$G2")"

# xcp_metrics v1_0 (fixed layout, no counter of its own) divided by the parent GPU's counter,
# on the DPX tree (4 XCCs per partition): the partition's accumulator is the XCC mean, each XCC
# has its series, and one unknown XCC removes the partition's series.
cp -a "$TOP/tests/fixtures/mi300x-dpx/sys" "$TMP/dpx"
stop_pid "$LAST_PID"
FIRST_RUN_END=$N # scrapes after this one are of a second exporter process
DGPU=$TMP/dpx/devices/pci0000:00/0000:05:00.0
DXCP1=$TMP/dpx/devices/platform/amdgpu_xcp_0/xcp/xcp_metrics
# dpx COUNTER ACC0,ACC1,ACC2,ACC3 (None = all-ones)
dpx() {
    python3 - "$DGPU/gpu_metrics" "$DXCP1" "$1" "$2" <<'EOP'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TOP"], "tests", "gen"))
import gpu_metrics_blob as g
gpu, xcp, counter, accs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
accs = [None if a == "None" else int(a) for a in accs]
for path, blob in ((gpu, g.build("v1_6_mainline", {"accumulation_counter": counter})),
                   (xcp, g.build("partition_v1_0", {"gfx_busy_inst": [0, 0, 0, 0],
                                                    "gfx_busy_acc": accs}))):
    with open(path + ".new", "wb") as f:
        f.write(blob)
    os.replace(path + ".new", path)
EOP
}
export TOP
dpx 5000 1000,2000,3000,4000
port=$(free_port)
start_bg "$TMP/exporter-dpx.log" "$BIN/gpureclaim-exporter" --web.listen-address="127.0.0.1:$port" \
    --path.sysfs="$TMP/dpx" --no-collector.ownership --log.level=debug
wait_http "http://127.0.0.1:$port/healthz" 60 || fail exporter-dpx-start
scrape
D='gpu="0000:05:00.0",partition="1"'
dpx 6000 11000,22000,33000,44000
scrape
expect xcp-v1_0-gpu-counter 1000 "$(get gpureclaim_partition_accumulation_ticks_total "$D")"
expect xcp-v1_0-xcc-mean 25000 "$(get gpureclaim_partition_gfx_busy_accumulator_total "$D")"
expect xcp-v1_0-xcc-3 40000 \
    "$(get gpureclaim_gpu_metrics_xcc_gfx_busy_accumulator_total "$D,xcc=\"3\"")"
dpx 7000 12000,23000,None,45000
scrape
expect one-unknown-xcc-omits-partition none \
    "$(get gpureclaim_partition_gfx_busy_accumulator_total "$D")"
expect one-unknown-xcc-no-advance 1000 "$(get gpureclaim_partition_accumulation_ticks_total "$D")"

# Never decreasing over the scrapes of each exporter process.
i=1
mono=true
while [ $i -lt $N ]; do
    j=$((i + 1))
    if [ $i -eq "$FIRST_RUN_END" ]; then
        i=$j
        continue
    fi
    if ! awk 'NR == FNR { if ($1 ~ /_total[{]/) a[$1] = $2; next }
              $1 in a && $2 + 0 < a[$1] + 0 { bad = 1 } END { exit bad }' \
        "$TMP/scrape.$i" "$TMP/scrape.$j"; then
        mono=false
    fi
    i=$j
done
check counters-never-decrease $mono

# Tables the parser reads only in part (cut after accumulation_counter, before
# gfx_activity_acc) are not fed: ticks must not advance while busy time is never read.
stop_pid "$LAST_PID"
cp -a "$TOP/tests/fixtures/mi300x-cpx-v19/sys" "$TMP/cut"
GPU0=$TMP/cut/devices/pci0000:00/0000:05:00.0
port=$(free_port)
start_bg "$TMP/exporter-cut.log" "$BIN/gpureclaim-exporter" --web.listen-address="127.0.0.1:$port" \
    --path.sysfs="$TMP/cut" --no-collector.ownership --log.level=debug
wait_http "http://127.0.0.1:$port/healthz" 60 || fail exporter-cut-start
for c in 1000 2000 3000; do
    gpu_table $c $((c * 50)) && head -c 200 "$GPU0/gpu_metrics" >"$GPU0/gpu_metrics.cut" &&
        mv "$GPU0/gpu_metrics.cut" "$GPU0/gpu_metrics"
    scrape
done
expect partial-table-no-ticks none "$(get gpureclaim_gpu_metrics_accumulation_ticks_total "$G")"
finish
