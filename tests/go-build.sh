#!/bin/sh
# The servers built from Go modules, as a suite of make check (go-build), run in the background
# beside the CPU-bound stages so that a cold build adds little to the total: the real Kubernetes
# of the kube_* suites (tests/kube/build.sh), the JobSet, LeaderWorkerSet and KubeRay
# controllers of kube_crds (tests/kube/crds.sh) and the current time-series servers of check-tsdb
# (tests/tsdb/build.sh), each cached by version outside the work tree (a warm cache makes this
# a no-op). One PASS line for each naming what it built or found and how long it took, or a
# FAIL with the end of the build's log.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
log=${TMPDIR:-/tmp}/gpureclaim-go-build.$$.log
rc=0
t0=$(date +%s)
if env=$(sh "$TOP/tests/kube/build.sh" 2>"$log"); then
    grep '^kube-build: built' "$log" || echo "kube-build: every binary cached"
    sed 's/^/  /' "$env"
    echo "PASS: go-build/kubernetes ($(($(date +%s) - t0)) s)"
else
    tail -n 20 "$log"
    echo "FAIL: go-build/kubernetes (see $log)"
    rc=1
fi
t0=$(date +%s)
# the JobSet, LWS and KubeRay controllers of e2e-kube_crds (and their CRDs), from their modules
if sh "$TOP/tests/kube/crds.sh" --controllers >"$log.crds" 2>&1; then
    grep '^controller ' "$log.crds" | sed 's/^/  /'
    echo "PASS: go-build/controllers ($(($(date +%s) - t0)) s)"
else
    tail -n 20 "$log.crds"
    echo "FAIL: go-build/controllers (see $log.crds)"
    rc=1
fi
t0=$(date +%s)
if sh "$TOP/tests/tsdb/build.sh" >"$log.tsdb" 2>&1; then
    sed 's/^/  /' "$log.tsdb"
    echo "PASS: go-build/tsdb ($(($(date +%s) - t0)) s)"
else
    tail -n 20 "$log.tsdb"
    echo "FAIL: go-build/tsdb (see $log.tsdb)"
    rc=1
fi
[ "$rc" -eq 0 ] && rm -f "$log" "$log.tsdb" "$log.crds"
exit "$rc"
