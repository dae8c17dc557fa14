#!/bin/sh
# The README's "Incidents" section, run: every command it shows is run here and its output
# compared with the block the README shows under it, so the section cannot drift from what
# the enforcer, jq and kubectl print.
#
# A real Prometheus on an hour of backfilled history up to a few minutes from now
# (data/incidents/gen.py: two idle pods in namespace ml, under Deployments train and infer)
# and fake_kube serving those objects and the enforcer's own Deployment. Set-up, not shown:
# `run --once --no-dry-run` ten minutes ago sends both notices (rules.yaml: scaleToZero 10m
# after the notice). Then the section's steps, in its order: the owner of infer labels it
# exempt; the cycle at now scales train to zero and skips infer (set-up); the paged SRE asks
# the audit file why (jq), restores train (--dry-run first), gives it time with keep-until
# and checks with `plan`, and scales the enforcer to zero. Each README block follows a line
# `<!-- incident: NAME -->`; its command is run as shown, with the connection flags for the
# fakes added and the paths and URL of a real installation replaced by the test's. Times
# differ from run to run, so every RFC 3339 time is compared as <time>. UPDATE_README=1
# rewrites the README's blocks with this run's output.
. "$(dirname "$0")/../lib.sh"

DATA=$TOP/tests/e2e/data/incidents
ENF=$BIN/gpureclaim-enforcer
README=${README:-$TOP/README.md}
require python3 jq promtool prometheus "$ENF" "$(fake_bin fake_kube)"
have_kubectl || { fail setup "kubectl not installed and apt-get could not install kubernetes-client"; exit 1; }

# The action cycle at T2 (now, on the step grid), the notice cycle at T1, history to T2 + 5m
# so that `plan` at the real now still finds fresh samples.
T2=$(($(date +%s) / 15 * 15))
T1=$((T2 - 600))
python3 "$DATA/gen.py" "$TMP" $((T2 + 300))
need_history "$TMP/history.om"
# kubectl sends no token over plain http, so the fake takes none and the enforcer sends none.
# fake_kube: no fault; the README shows fixed names and uids, which a real server would not give
start_fake_http "$TMP/kube.out" "$(fake_bin fake_kube)" --data "$TMP/kube" --log "$TMP/kube.log" ||
    { fail kube-start "$(cat "$TMP/kube.out")"; exit 1; }
KURL=$FAKE_URL
KUBE="--kube.api-url=$KURL --kube.token-file= --kube.allow-insecure-credentials"

# cycle AT: one `run --once --no-dry-run` at AT (set-up; its log in $TMP/run-AT.log).
cycle() {
    # shellcheck disable=SC2086
    "$ENF" run --once --no-dry-run --rules.file="$DATA/rules.yaml" --prometheus.url="$PROM_URL" \
        --at="$1" --state.file="$TMP/state.json" --audit.file="$TMP/audit.jsonl" $KUBE \
        >"$TMP/run-$1.log" 2>&1
}

# step NAME COMMAND: run COMMAND as the README shows it; "$ COMMAND" and its output (stdout
# and stderr) go to $TMP/NAME.block, the exit status to $TMP/NAME.rc.
step() {
    _run=$(printf '%s' "$2" | sed "s|/var/log/gpureclaim/audit.jsonl|$TMP/audit.jsonl|g;
        s|/etc/gpureclaim/rules.yaml|$DATA/rules.yaml|g; s|http://prometheus:9090|$PROM_URL|g")
    case $_run in
    gpureclaim-enforcer\ plan*) _run="$ENF ${_run#gpureclaim-enforcer } $KUBE" ;;
    gpureclaim-enforcer\ *) _run="$ENF ${_run#gpureclaim-enforcer } $KUBE --audit.file=$TMP/audit.jsonl" ;;
    kubectl\ *) _run="kubectl --server=$KURL ${_run#kubectl }" ;;
    esac
    { printf '$ %s\n' "$2"; sh -c "$_run" 2>&1; echo "rc=$?" >"$TMP/$1.rc"; } >"$TMP/$1.block"
    check "$1-exit-0" grep -qx 'rc=0' "$TMP/$1.rc"
}
scaled() { # NS NAME REPLICAS: fake_kube received that /scale patch
    grep -q "\"path\":\"/apis/apps/v1/namespaces/$1/deployments/$2/scale\".*\"replicas\":$3}" \
        "$TMP/kube.log"
}

check notices cycle $T1
step exempt 'kubectl -n ml label deployment infer gpureclaim.io/exempt=true'
check actions cycle $T2
check train-scaled-to-0 scaled ml train 0
check infer-untouched sh -c "! grep -q 'deployments/infer/scale' '$TMP/kube.log'"
check infer-skipped-exempt grep -q '"event":"skipped".*"pod":"infer-5c-q8m4t".*"result":"exempt"' "$TMP/audit.jsonl"
step why "jq -c 'select(any(.owner_chain[]?; .namespace == \"ml\" and .name == \"train\")) | {time, event, rule, idle_since, window, action, result, message}' /var/log/gpureclaim/audit.jsonl"
check why-notice-then-action test "$(sed -n 's/.*"event":"\([a-z_]*\)".*/\1/p' "$TMP/why.block" | tr '\n' ' ')" = "notice action "
step restore-dry 'gpureclaim-enforcer restore --dry-run ml/deployment/train'
step restore 'gpureclaim-enforcer restore ml/deployment/train'
check train-scaled-back scaled ml train 1
step keep-until "kubectl -n ml annotate deployment train gpureclaim.io/keep-until=$(date -u -d @$((T2 + 36000)) +%Y-%m-%dT%H:%M:%SZ)"
step plan 'gpureclaim-enforcer plan --rules.file /etc/gpureclaim/rules.yaml --prometheus.url http://prometheus:9090'
check plan-keeps-infer grep -q 'kept: labelled gpureclaim.io/exempt=true' "$TMP/plan.block"
check plan-notes-keep-until grep -q 'pod="train-7f-x2k9p".*kept until .* at the owner.s request' "$TMP/plan.block"
step stop 'kubectl -n gpureclaim scale deployment gpureclaim-enforcer --replicas=0'
check enforcer-scaled-to-0 scaled gpureclaim gpureclaim-enforcer 0

python3 - "$README" "$TMP" "${UPDATE_README:-}" <<'PY' >"$TMP/readme.diff"
import difflib, os, re, sys
readme, tmp, update = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(readme, encoding="utf-8").read()
pat = re.compile(r"(<!-- incident: ([a-z-]+) -->\n```console\n)(.*?)(```\n)", re.S)
names = [m.group(2) for m in pat.finditer(text)]
have = sorted(f[:-6] for f in os.listdir(tmp) if f.endswith(".block"))
bad = sorted(set(have) ^ set(names)) + sorted({n for n in names if names.count(n) > 1})
if bad:
    sys.exit("README blocks and the steps run differ: " + ", ".join(bad))
new = pat.sub(lambda m: m.group(1) + open(os.path.join(tmp, m.group(2) + ".block"),
                                         encoding="utf-8").read() + m.group(4), text)
if update:
    open(readme, "w", encoding="utf-8").write(new)
    sys.exit(0)
times = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
a, b = times.sub("<time>", text), times.sub("<time>", new)
sys.stdout.writelines(difflib.unified_diff(a.splitlines(True), b.splitlines(True),
                                           "README.md", "as run"))
PY
if [ $? -ne 0 ] || [ -s "$TMP/readme.diff" ]; then
    fail readme-as-run "$(cat "$TMP/readme.diff"); UPDATE_README=1 sh tests/e2e/readme_incidents.sh rewrites it"
else
    pass readme-as-run
fi
finish
