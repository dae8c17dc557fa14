#!/bin/sh
# End to end: an owner's gpureclaim.io/keep-until as `plan` and `explain` show it, given the
# Kubernetes API (the --kube.* flags of `run`), and as `run` honours it.
#
# fake_kube serves restore.sh's flow objects (pod web-7f-abcde -> ReplicaSet -> Deployment
# web, idle in fake_prom's answers) with the annotation on the Deployment. A rule allowing 1d
# shows "kept until ... at the owner's request"; a request past it "capped"; a malformed one
# kept as long as the rule allows; a rule allowing 0 "ignored"; without the API, no note.
# Then `run` with a noticePeriod of 0 posts the notice (telling the owner about the
# annotation) and keeps the workload (skipped kept_until), no scale.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/restore
ENF=$BIN/gpureclaim-enforcer
KUBE_FAKE=$(fake_bin fake_kube)
PROM_FAKE=$(fake_bin fake_prom)
require python3 "$ENF" "$KUBE_FAKE" "$PROM_FAKE"
T0=1700000000 # 2023-11-14T22:13:20Z

mkdir -p "$TMP/flow"
python3 "$DATA/gen_objects.py" "$TMP/unused.json" "$TMP"
echo 's3cret-token' >"$TMP/token"
start_fake_http "$TMP/prom.out" "$PROM_FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json" ||
    { fail prom-start "$(cat "$TMP/prom.out")"; exit 1; }
PURL=$FAKE_URL

# kube NAME VALUE: a fake_kube whose Deployment web carries keep-until VALUE; sets KURL.
kube() {
    mkdir -p "$TMP/$1"
    python3 - "$TMP/flow/objects.json" "$TMP/$1/objects.json" "$2" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))
for o in l["items"]:
    if o["kind"] == "Deployment":
        o["metadata"]["annotations"] = {"gpureclaim.io/keep-until": sys.argv[3]}
json.dump(l, open(sys.argv[2], "w"))
PY
    # fake_kube: no fault; the real server could serve this annotation (kept: fixed pod names in the
    # expected output)
    start_fake_kube "$1" "$TMP/$1" --token-file "$TMP/token"
}

# rules MAX [NOTICE]: the flow's rule with maxKeepUntil MAX.
rules() {
    sed "s/^  action: scaleToZero/  action: scaleToZero\n  maxKeepUntil: $1\n  noticePeriod: ${2:-0s}/" \
        "$DATA/rules.yaml" >"$TMP/rules.yaml"
}

plan() { # OUT ARGS...
    _o=$1; shift
    "$ENF" plan --rules.file="$TMP/rules.yaml" --prometheus.url="$PURL" --at=$T0 \
        --kube.api-url="$KURL" --kube.token-file="$TMP/token" --kube.allow-insecure-credentials \
        "$@" >"$TMP/$_o" 2>&1
}

kube honoured 2023-11-15T10:00:00Z
rules 1d
check plan-exit-0 plan honoured.table
check plan-note grep -qF 'note: namespace="flow",pod="web-7f-abcde", rule '"'scale'"': kept until 2023-11-15T10:00:00Z at the owner'"'"'s request (gpureclaim.io/keep-until on Deployment flow/web)' "$TMP/honoured.table"
plan honoured.json --output json
check plan-json-note grep -q '"note": "kept until 2023-11-15T10:00:00Z at the owner' "$TMP/honoured.json"
"$ENF" explain --workload 'pod="web-7f-abcde"' --rules.file="$TMP/rules.yaml" \
    --prometheus.url="$PURL" --at=$T0 --kube.api-url="$KURL" --kube.token-file="$TMP/token" \
    --kube.allow-insecure-credentials >"$TMP/explain.out" 2>&1
check explain-note grep -q '^  note: kept until 2023-11-15T10:00:00Z at the owner' "$TMP/explain.out"
check plan-only-gets test "$(grep -vc '"method":"GET"' "$TMP/honoured.requests")" = 0

kube capped 2023-12-31T00:00:00Z
plan capped.table
check plan-capped grep -q "kept until 2023-11-15T22:13:20Z at the owner's request, capped: gpureclaim.io/keep-until on Deployment flow/web asks for 2023-12-31T00:00:00Z, rule 'scale' allows at most 1d after the notice" "$TMP/capped.table"

kube malformed 'next friday'
plan malformed.table
check plan-malformed grep -q "kept until 2023-11-15T22:13:20Z, the most rule 'scale' allows (1d after the notice): gpureclaim.io/keep-until on Deployment flow/web is 'next friday', not an RFC 3339 time" "$TMP/malformed.table"

rules 0s
kube ignored 2023-11-15T10:00:00Z
plan ignored.table
check plan-ignored grep -q "gpureclaim.io/keep-until '2023-11-15T10:00:00Z' on Deployment flow/web ignored: rule 'scale' allows 0" "$TMP/ignored.table"

"$ENF" plan --rules.file="$TMP/rules.yaml" --prometheus.url="$PURL" --at=$T0 >"$TMP/nokube.table" 2>"$TMP/nokube.err"
check plan-without-api-no-note test "$(grep -c 'keep-until' "$TMP/nokube.table")" = 0

# --- run: the notice tells the owner, the action waits -------------------------------------------
rules 1d 0s
kube run 2023-11-15T10:00:00Z
"$ENF" run --once --no-dry-run --rules.file="$TMP/rules.yaml" --prometheus.url="$PURL" \
    --at=$T0 --state.file="$TMP/state.json" --audit.file="$TMP/audit.jsonl" \
    --kube.api-url="$KURL" --kube.token-file="$TMP/token" --kube.allow-insecure-credentials \
    --enforce.max-actions-per-hour=0 >"$TMP/run.log" 2>&1
check run-notice-offers-time grep -q 'to postpone it, annotate the workload gpureclaim.io/keep-until=<RFC 3339 time> (at most 1d after this notice' "$TMP/run.requests"
check run-no-scale test "$(grep -c '/scale' "$TMP/run.requests")" = 0
check run-kept-until grep -q '"result":"kept_until","message":"kept until 2023-11-15T10:00:00Z' "$TMP/audit.jsonl"

finish
