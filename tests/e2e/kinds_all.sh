#!/bin/sh
# End to end, every built-in row of the workload kinds table (enforcer/kinds.c) through the
# whole way: notice -> action -> restore -> not reclaimed again at once. data/kinds_all/gen.py
# reads the built-in rows from enforcer/kinds.c and the suite's table (data/kinds_all/kinds.txt:
# one line per row, with the chain of owners above an idle pod, the rule's action, the object
# acted on and the one request expected on it, whether restore applies) and fails, naming the
# rows, when a row has no line, so a row cannot be added without its end to end. From the table
# it writes one cluster (one namespace per line) served by fake_kube, one rule per namespace
# (notice period 0) and fake_prom's answers (every pod idle). Then:
#   0. `plan`: per line, the target it names is the expected object with the expected way, and
#      it only reads;
#   1. one `run --once --no-dry-run`: per line, the notice annotation and its Event land on the
#      topmost known owner, the one write besides the notice is the expected request on it, and
#      nothing else in the namespace (no child, no CronJob or RayCronJob above, no Knative
#      object) is written;
#   2. `restore` of each target: scaled back, unsuspended or unannotated, with one Event; the
#      delete-only kinds (Pod, AIMService of both groups, KaiwoJob, KaiwoService) refused
#      (exit 1, a sentence naming the delete) with no write;
#   3. a second `run --once` two minutes later writes nothing: the restored workloads are
#      kept as restarted, the deleted ones kept (or gone); and the freed GPU time (act_freed)
#      ends for every restored target: the engine reads it, finds it running again, logs it and
#      records `returned` in the state file, while a delete's entry ends at its action.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/kinds_all
ENF=$BIN/gpureclaim-enforcer
KUBE_FAKE=$(fake_bin fake_kube)
PROM_FAKE=$(fake_bin fake_prom)
T0=1700000000

require python3 "$ENF" "$KUBE_FAKE" "$PROM_FAKE"
mkdir -p "$TMP/kube"
if rows=$(python3 "$DATA/gen.py" "$TOP/enforcer/kinds.c" "$DATA/kinds.txt" "$TMP" 2>&1); then
    pass "table-covers-all-$rows-builtin-rows"
else
    fail table-covers-builtin-rows "$rows"
    finish
    exit 1
fi
mv "$TMP/cluster.json" "$TMP/kube/"
echo tok-t >"$TMP/token"
start_fake_http "$TMP/prom.out" "$PROM_FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json" ||
    { fail prom-start "$(cat "$TMP/prom.out")"; exit 1; }
PURL=$FAKE_URL
# fake_kube: every row of the kinds table at once, most of them custom resources whose CRDs the real
# test cluster does not install; no fault
start_fake_kube kube "$TMP/kube" --token tok-t
KFLAGS="--kube.api-url=$KURL --kube.token-file=$TMP/token --kube.allow-insecure-credentials \
--kube.timeout=2s"

lines() { wc -l <"$KLOG" | tr -d ' '; }
# checks STAGE FROM: the per-line checks of data/kinds_all/check.py, each a PASS or a FAIL.
checks() {
    python3 "$DATA/check.py" "$1" "$TMP/cases.json" "$KLOG" "$2" "$TMP" "$KURL" \
        >"$TMP/$1.checks" 2>&1 || fail "$1-checker" "$(tail -3 "$TMP/$1.checks")"
    while read -r _res _name _why; do
        case $_res in
        PASS) pass "$_name" ;;
        FAIL) fail "$_name" "$_why" ;;
        *) fail "$1-checker" "$_res $_name $_why" ;;
        esac
    done <"$TMP/$1.checks"
}
run_once() { # AT LOG
    # shellcheck disable=SC2086
    "$ENF" run --once --rules.file="$TMP/rules.yaml" --prometheus.url="$PURL" --at="$1" \
        --state.file="$TMP/state.json" --audit.file="$TMP/audit.jsonl" $KFLAGS \
        --enforce.max-actions-per-hour=0 --no-dry-run >"$TMP/$2" 2>&1
}

# --- 0. plan names each line's target and how, reading only -----------------------------------
from=$(lines)
# shellcheck disable=SC2086
"$ENF" plan --rules.file="$TMP/rules.yaml" --prometheus.url="$PURL" --at=$T0 $KFLAGS \
    --output=json >"$TMP/plan.json" 2>"$TMP/plan.err"
check plan-exit-0 test $? = 0
checks planned "$from"

# --- 1. notice and action, each on the topmost known owner -------------------------------------
from=$(lines)
check run-exit-0 run_once $T0 run1.log
checks acted "$from"

# --- 2. restore each, or refused for the delete-only kinds -------------------------------------
from=$(lines)
for t in $(python3 -c 'import json, sys
for c in json.load(open(sys.argv[1])):
    if c["action"] != "-":
        print(c["ns"] + "=" + c["restore_target"])' "$TMP/cases.json"); do
    # shellcheck disable=SC2086
    "$ENF" restore --rules.file="$TMP/rules.yaml" $KFLAGS --audit.file="$TMP/audit.jsonl" \
        "${t#*=}" >"$TMP/restore-${t%%=*}.out" 2>&1
    echo $? >"$TMP/restore-${t%%=*}.rc"
done
checks restored "$from"

# --- 3. the next run reclaims none of them again at once ---------------------------------------
from=$(lines)
check run-again-exit-0 run_once $((T0 + 120)) run2.log
checks again "$from"
# The freed GPU time of each acted entry ends as the table says (restore yes: running again).
python3 - "$TMP/state.json" "$TMP/cases.json" "$TMP/run2.log" >"$TMP/freed.checks" 2>&1 <<'PY' ||
import json, sys
state = json.load(open(sys.argv[1]))["entries"]
cases = json.load(open(sys.argv[2]))
log = open(sys.argv[3]).read()
for c in cases:
    if c["action"] == "-":
        continue
    kind, name = c["target"].split("/", 1)
    want = "%s %s/%s" % (kind, c["ns"], name)
    es = [e for e in state if e["state"] == "acted" and e["target"].endswith(want)]
    if not es:
        print("FAIL freed-%s no acted entry for %s" % (c["ns"], want))
        continue
    e = es[0]
    if c["restore"] == "yes":
        ok = "returned" in e and "%s, acted on by rule" % e["target"] in log and \
             "runs again" in log
        why = "returned=%s" % e.get("returned")
    else:
        ok = e.get("returned") == e["updated"]
        why = "returned=%s updated=%s" % (e.get("returned"), e["updated"])
    print("%s freed-ends-%s %s" % ("PASS" if ok else "FAIL", c["ns"], why))
PY
    fail freed-checker "$(tail -3 "$TMP/freed.checks")"
while read -r _res _name _why; do
    case $_res in
    PASS) pass "$_name" ;;
    *) fail "$_name" "$_why" ;;
    esac
done <"$TMP/freed.checks"
stop_pid "$FAKE_PID"
finish
