#!/bin/sh
# Exporter benchmark: median and p99 scrape latency and RSS of gpureclaim-exporter on the
# 8 x MI300X CPX fixture, side by side with node_exporter's drm collector on the same tree.
# Numbers, not a pass/fail test, and no targets beside them: the figures, and node_exporter's
# over gpureclaim's as the one comparison (docs/benchmarks.md says what they mean).
# SCRAPES (default 10000) sets the number of scrapes; BENCH_TREE (default mi300x-cpx) the fixture tree, e.g. mi300x-cpx-v19 (gpu_metrics v1_9
# tables, xcp_metrics files and the accumulator counters); a tree without proc/ uses
# mi300x-cpx's processes, which name the same render nodes.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
SCRAPES=${SCRAPES:-10000}
TREE=$TOP/tests/fixtures/${BENCH_TREE:-mi300x-cpx}
PROCFS=$TREE/proc
[ -d "$PROCFS" ] || PROCFS=$TOP/tests/fixtures/mi300x-cpx/proc
TMP=$(mktemp -d)
PIDS=""
bench_cleanup() { for p in $PIDS; do kill $p 2>/dev/null; done; rm -rf "$TMP"; }
# A closed output pipe or Ctrl-C must not leave the servers this script started running.
trap bench_cleanup EXIT
trap 'bench_cleanup; trap - EXIT; exit 130' INT TERM HUP PIPE
cc -O2 -o "$TMP/scrape" "$TOP/bench/scrape.c"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$1$2" && return 0; sleep 0.05; done; return 1; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

echo "== exporter scrape benchmark: $SCRAPES scrapes of the 8 x MI300X CPX fixture ($(basename "$TREE")) =="
P1=$(port)
"$TOP/bin/gpureclaim-exporter" --web.listen-address="127.0.0.1:$P1" --path.sysfs="$TREE/sys" \
    --path.procfs="$PROCFS" --path.devfs="$TREE/dev" --kubelet.pod-resources-socket= \
    --log.level=error &
E=$!; PIDS="$PIDS $E"
wait_up "$P1" /healthz
"$TMP/scrape" "$P1" /metrics 50 >/dev/null
set -- $("$TMP/scrape" "$P1" /metrics "$SCRAPES")
g_med=$1; g_p99=$2; g_bytes=$3
g_rss=$(rss_kib $E)
series=$(curl -s "http://127.0.0.1:$P1/metrics" | grep -vc '^#')
printf 'gpureclaim-exporter: median %s ms, p99 %s ms, %s bytes, %s series, RSS %s KiB after %s scrapes\n' \
    "$g_med" "$g_p99" "$g_bytes" "$series" "$g_rss" "$SCRAPES"

N_SCRAPES=$((SCRAPES / 10))
P2=$(port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$P2" --path.sysfs="$TREE/sys" \
    --path.procfs="$PROCFS" --collector.disable-defaults --collector.drm --log.level=error &
N=$!; PIDS="$PIDS $N"
wait_up "$P2" /metrics
"$TMP/scrape" "$P2" /metrics 20 >/dev/null
set -- $("$TMP/scrape" "$P2" /metrics "$N_SCRAPES")
n_med=$1; n_p99=$2; n_bytes=$3
n_rss=$(rss_kib $N)
n_cards=$(curl -s "http://127.0.0.1:$P2/metrics" | grep -c '^node_drm_card_info' || true)
printf 'node_exporter 1.5 --collector.drm: median %s ms, p99 %s ms, %s bytes, RSS %s KiB after %s scrapes (%s cards seen: card[0-9] only)\n' \
    "$n_med" "$n_p99" "$n_bytes" "$n_rss" "$N_SCRAPES" "$n_cards"
python3 -c "import sys; g,n,gr,nr=map(float,sys.argv[1:]); print('ratio node_exporter / gpureclaim-exporter: median %.1fx, RSS %.1fx' % (n/g, nr/gr))" \
    "$g_med" "$n_med" "$g_rss" "$n_rss"
for extra in ownership enforcer rules replay incremental recommend; do
    if [ -f "$TOP/bench/$extra.sh" ]; then
        echo
        sh "$TOP/bench/$extra.sh"
    fi
done
