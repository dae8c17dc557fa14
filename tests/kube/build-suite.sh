#!/bin/sh
# tests/kube/build.sh as a suite of make check (kube-build): one PASS line naming what it
# built or found cached and how long it took, or a FAIL with the end of the build's log.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
log=${TMPDIR:-/tmp}/gpureclaim-kube-build.$$.log
t0=$(date +%s)
if env=$(sh "$TOP/tests/kube/build.sh" 2>"$log"); then
    grep '^kube-build: built' "$log" || echo "kube-build: every binary cached"
    sed 's/^/  /' "$env"
    echo "PASS: kube-build/binaries ($(($(date +%s) - t0)) s)"
    rm -f "$log"
else
    tail -n 20 "$log"
    echo "FAIL: kube-build/binaries (see $log)"
    exit 1
fi
