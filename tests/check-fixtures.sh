#!/bin/sh
# Generated fixtures must be exactly what their generators produce today: regenerate the
# sysfs trees (gen_fixtures.py --check) and the gpu_metrics blobs into a temp dir and compare.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
python3 "$TOP/tests/gen/gen_fixtures.py" --check "$TOP/tests/fixtures"
python3 "$TOP/tests/gen/gen_proc_fixtures.py" --check "$TOP/tests/fixtures"
tmp=$(mktemp -d)
python3 "$TOP/tests/gen/gpu_metrics_blob.py" --out "$tmp" >/dev/null
if diff -r -x GENERATED.md "$TOP/tests/fixtures/gpu_metrics/generated" "$tmp" >/dev/null; then
    echo "PASS: fixtures/gpu_metrics-blobs"
else
    echo "FAIL: fixtures/gpu_metrics-blobs"
    diff -rq -x GENERATED.md "$TOP/tests/fixtures/gpu_metrics/generated" "$tmp"
fi
rm -rf "$tmp"
