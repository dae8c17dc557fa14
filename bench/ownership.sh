#!/bin/sh
# Ownership collector benchmark: a generated procfs of 1,000 processes of which 200 hold
# render nodes and /dev/kfd (each with a KFD entry) on the 8 x MI300X CPX fixture, and one
# of 10,000 processes with the same 200 GPU holders to show how the background refresh grows
# with the process count. The processes on a partition belong to one pod (50 pods over the 64
# partitions), as on a real node. Prints, per node:
#   (a) the background refresh time (gpureclaim_ownership_refresh_duration_seconds over
#       REFRESHES refreshes: median and max);
#   (b) with the default 10 s interval, the scrape latency with only the ownership collector
#       enabled (bench/scrape.c over
#       fresh connections: median, p99) and the collector's own time on the scrape path
#       (gpureclaim_scrape_collector_duration_seconds{collector="ownership"}, median).
# The scrape path renders a snapshot and must stay within a 2 ms median on the 1,000-process
# node; the script says FAIL on stderr and exits 1 if it does not. SCRAPES (default 2000).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SCRAPES=${SCRAPES:-2000}
REFRESHES=${REFRESHES:-20}
TREE=$TOP/tests/fixtures/mi300x-cpx
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpureclaim-bench-ownership.XXXXXX")
PIDS=""
bench_cleanup() { for p in $PIDS; do kill $p 2>/dev/null || true; wait $p 2>/dev/null || true; done; rm -rf "$TMP"; }
# A closed output pipe or Ctrl-C must not leave the servers this script started running.
trap bench_cleanup EXIT
trap 'bench_cleanup; trap - EXIT; exit 130' INT TERM HUP PIPE
cc -O2 -o "$TMP/scrape" "$TOP/bench/scrape.c"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$1$2" && return 0; sleep 0.05; done; return 1; }

# median_max: read numbers on stdin, print "median max" (in milliseconds, from seconds).
median_max() {
    python3 -c 'import sys, statistics
v = [float(x) * 1e3 for x in sys.stdin.read().split()]
print("%.3f %.3f" % (statistics.median(v), max(v)) if v else "nan nan")'
}

status=0
run() { # NPROC NGPU
    root=$TMP/n$1
    mkdir -p "$root"
    cp -a "$TREE/sys" "$root/sys"
    python3 "$TOP/tests/gen/gen_proc_fixtures.py" --bench "$1" "$2" "$root" "$TREE/sys" >/dev/null
    mkdir -p "$root/sys/class/kfd/kfd/proc"
    cp -a "$root/kfd-proc/." "$root/sys/class/kfd/kfd/proc/"
    p=$(port)
    "$TOP/bin/gpureclaim-exporter" --web.listen-address="127.0.0.1:$p" \
        --path.sysfs="$root/sys" --path.procfs="$root/proc" --kubelet.pod-resources-socket= \
        --collector.disable-defaults --collector.ownership \
        --collector.ownership.refresh-interval=250ms --log.level=error &
    e=$!
    PIDS="$PIDS $e"
    wait_up "$p" /healthz
    # (a) one refresh duration per refresh: sample every interval
    : >"$TMP/refresh"
    i=0
    while [ $i -lt "$REFRESHES" ]; do
        curl -s "http://127.0.0.1:$p/metrics" |
            awk '/^gpureclaim_ownership_refresh_duration_seconds / {print $2}' >>"$TMP/refresh"
        sleep 0.25
        i=$((i + 1))
    done
    # shellcheck disable=SC2046 # word splitting wanted
    set -- $(sort -u "$TMP/refresh" | median_max) "$1" "$2"
    r_med=$1 r_max=$2 nproc=$3 ngpu=$4
    kill "$e"
    wait "$e" 2>/dev/null || true
    # Scrapes with the default interval, so that refreshes do not compete for the CPU.
    "$TOP/bin/gpureclaim-exporter" --web.listen-address="127.0.0.1:$p" \
        --path.sysfs="$root/sys" --path.procfs="$root/proc" --kubelet.pod-resources-socket= \
        --collector.disable-defaults --collector.ownership --log.level=error &
    e=$!
    PIDS="$PIDS $e"
    wait_up "$p" /healthz
    sleep 1
    # (b) scrape latency, and the collector's own share of it
    "$TMP/scrape" "$p" /metrics 50 >/dev/null
    # shellcheck disable=SC2046 # word splitting wanted
    set -- $("$TMP/scrape" "$p" /metrics "$SCRAPES")
    s_med=$1 s_p99=$2 s_bytes=$3
    : >"$TMP/coll"
    i=0
    while [ $i -lt 200 ]; do
        curl -s "http://127.0.0.1:$p/metrics" |
            awk '/^gpureclaim_scrape_collector_duration_seconds\{collector="ownership"\}/ {print $2}' \
                >>"$TMP/coll"
        i=$((i + 1))
    done
    # shellcheck disable=SC2046 # word splitting wanted
    set -- $(median_max <"$TMP/coll")
    c_med=$1
    series=$(curl -s "http://127.0.0.1:$p/metrics" | grep -vc '^#')
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$e/status")
    printf '%6d processes (%d on GPUs): refresh median %s ms, max %s ms | scrape median %s ms, p99 %s ms (%s bytes, %s series) | collector median %s ms | RSS %s KiB\n' \
        "$nproc" "$ngpu" "$r_med" "$r_max" "$s_med" "$s_p99" "$s_bytes" "$series" "$c_med" "$rss"
    kill "$e"
    wait "$e" 2>/dev/null || true
    if [ "$nproc" -eq 1000 ] && ! python3 -c "import sys; sys.exit(0 if float('$s_med') < 2 else 1)"; then
        echo "FAIL: scrape median $s_med ms >= 2 ms on the 1,000-process node" >&2
        status=1
    fi
}

echo "== ownership collector: background refresh and scrape latency (8 x MI300X CPX) =="
run 1000 200
run 10000 200
exit $status
