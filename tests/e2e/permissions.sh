#!/bin/sh
# End to end: `run` checks at start, with SelfSubjectAccessReview, every permission its rules
# can use, and reports each missing one in a metric and one log line (enforcer/perm.h).
#
# fake_kube serves data/kube_actions/cluster.json and denies what a deny file lists; the rules
# are data/kube_actions/rules.yaml (scaleToZero in apps, suspend in batch, evict in serve,
# delete in scratch and kube-system). One daemon, in dry run, evaluating every 2 s:
#   1. start: patch deployments/scale in apps, create pods/eviction in serve and create events
#      (every namespace) are denied: 6 missing series (kube-system is protected: never acted
#      in, never asked), one log line each, nothing else;
#   2. the rules change (the scale rule now in namespace apps2): checked again, the apps
#      series is gone, apps2 is granted, the events of apps2 missing (5 missing);
#   3. the review itself answers 403 (SIGHUP reloads and checks): every permission unknown,
#      none granted, one log line and a single request (the others would fail alike);
#   4. the review works again: checked again before the next cycle, nothing unknown.
. "$(dirname "$0")/../lib.sh"

KA=$TOP/tests/e2e/data/kube_actions
ENF=$BIN/gpureclaim-enforcer
KUBE_FAKE=$(fake_bin fake_kube)
PROM_FAKE=$(fake_bin fake_prom)
T0=1700000000
SSAR=/apis/authorization.k8s.io/v1/selfsubjectaccessreviews

require python3 curl "$ENF" "$KUBE_FAKE" "$PROM_FAKE"
python3 "$KA/gen_matrix.py" "$TMP"
echo tok >"$TMP/token"
printf '%s\n' 'patch deployments.apps/scale apps' 'create pods/eviction serve' \
    'create events' >"$TMP/deny"
: >"$TMP/faults"
mkdir -p "$TMP/data"
cp "$KA/cluster.json" "$TMP/data/"
KLOG=$TMP/requests
# fake_kube: SelfSubjectAccessReview itself answering 403, and grants that change between two cycles
# of one daemon at a chosen moment (the real server's RBAC answers only after its cache catches up)
start_fake_http "$TMP/kube.out" "$KUBE_FAKE" --data "$TMP/data" --log "$KLOG" \
    --token-file "$TMP/token" --deny-file "$TMP/deny" --faults-file "$TMP/faults" ||
    { fail kube-start "$(cat "$TMP/kube.out")"; exit 1; }
KURL=$FAKE_URL
start_fake_http "$TMP/prom.out" "$PROM_FAKE" 0 ok "$TMP/range.json" "$TMP/instant.json" ||
    { fail prom-start "$(cat "$TMP/prom.out")"; exit 1; }
PURL=$FAKE_URL

cp "$KA/rules.yaml" "$TMP/rules.yaml"
PORT=$(free_port)
LOG=$TMP/enf.log
start_bg "$LOG" "$ENF" run --rules.file="$TMP/rules.yaml" --prometheus.url="$PURL" \
    --at="$T0" --at.advance --enforce.interval=2s --kube.api-url="$KURL" \
    --kube.token-file="$TMP/token" --kube.allow-insecure-credentials --kube.timeout=2s \
    --web.listen-address="127.0.0.1:$PORT"
ENF_PID=$LAST_PID

metrics() { curl -s -m 10 "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics" 2>/dev/null; }
# value SAMPLE: its value in the last scrape, empty when absent
value() { awk -v s="$1" '$1 == s { print $2 }' "$TMP/metrics"; }
missing() { # GROUP RESOURCE SUBRESOURCE VERB NAMESPACE
    value "gpureclaim_enforcer_permission_missing{group=\"$1\",resource=\"$2\",subresource=\"$3\",verb=\"$4\",namespace=\"$5\"}"
}
checks() { value "gpureclaim_enforcer_permission_checks{result=\"$1\"}"; }
reviews() { grep -c "\"path\":\"$SSAR\"" "$KLOG"; }
checks_logged() { grep -c 'permission check:' "$LOG"; }
scraped_checks() { metrics && [ -n "$(checks missing)" ]; }
checked_n() { [ "$(checks_logged)" -ge "$1" ] && metrics; }

# --- 1. start -----------------------------------------------------------------------------------
if wait_for 60 scraped_checks; then pass metrics-served; else fail metrics-served; fi
check missing-scale-apps [ "$(missing apps deployments scale patch apps)" = 1 ]
check missing-eviction-serve [ "$(missing "" pods eviction create serve)" = 1 ]
for ns in apps batch serve scratch; do
    check "missing-events-$ns" [ "$(missing "" events "" create $ns)" = 1 ]
done
check scale-elsewhere-granted [ -z "$(missing apps statefulsets scale patch apps)" ]
check six-missing [ "$(checks missing)" = 6 ]
check protected-never-asked [ "$(grep -c '"namespace":"kube-system"' "$KLOG")" = 0 ]
check none-unknown [ "$(checks unknown)" = 0 ]
TOTAL=$(( $(checks granted) + 6 ))
check one-review-each [ "$(reviews)" = "$TOTAL" ]
check log-line-each [ "$(grep -c 'permission missing: cannot' "$LOG")" = 6 ]
check log-line-scale grep -q \
    "permission missing: cannot patch 'deployments.apps/scale' in namespace 'apps'; needed by rule 'scale' (scaleToZero)" \
    "$LOG"
check log-line-events-names-rules grep -q \
    "permission missing: cannot create 'events' in namespace 'scratch'; needed by rule 'delete' (delete)" \
    "$LOG"
check log-summary grep -q "permission check: $((TOTAL - 6)) of $TOTAL permissions granted, 6 missing, 0 unknown" "$LOG"
check timestamp-set [ -n "$(value gpureclaim_enforcer_permission_last_check_timestamp_seconds)" ]

# --- 2. new rules: checked again ------------------------------------------------------------------
sed 's/namespaces: \[apps\]/namespaces: [apps2]/' "$KA/rules.yaml" >"$TMP/rules.new"
mv "$TMP/rules.new" "$TMP/rules.yaml"
if wait_for 60 checked_n 2; then pass rechecked-on-reload; else fail rechecked-on-reload; fi
check apps-series-gone [ -z "$(missing apps deployments scale patch apps)" ]
check apps2-scale-granted [ -z "$(missing apps deployments scale patch apps2)" ]
check apps2-events-missing [ "$(missing "" events "" create apps2)" = 1 ]
check five-missing [ "$(checks missing)" = 5 ]

# --- 3. the review itself forbidden: unknown, never granted --------------------------------------
before=$(reviews)
echo "POST $SSAR=403" >"$TMP/faults"
sleep 1.1 # the faults file is told apart by its mtime (seconds)
kill -HUP "$ENF_PID"
if wait_for 60 checked_n 3; then pass rechecked-on-sighup; else fail rechecked-on-sighup; fi
check all-unknown [ "$(checks unknown)" = "$TOTAL" ]
check none-granted [ "$(checks granted)" = 0 ]
check none-missing [ "$(checks missing)" = 0 ]
check unknown-series [ "$(value "gpureclaim_enforcer_permission_unknown{group=\"\",resource=\"pods\",subresource=\"eviction\",verb=\"create\",namespace=\"serve\"}")" = 1 ]
check one-failing-review [ "$(( $(reviews) - before ))" -ge 1 ]
check unknown-logged-once [ "$(grep -c 'cannot check permissions with SelfSubjectAccessReview' "$LOG")" -ge 1 ]
check unknown-log-line grep -q \
    "cannot check permissions with SelfSubjectAccessReview: .*HTTP 403.*; $TOTAL of $TOTAL permissions unknown (not assumed granted)" \
    "$LOG"

# --- 4. the review works again: checked before the next cycle ------------------------------------
: >"$TMP/faults"
sleep 1.1
known_again() { metrics && [ "$(checks unknown)" = 0 ]; }
if wait_for 60 known_again; then pass rechecked-after-failure; else fail rechecked-after-failure; fi
check missing-again [ "$(checks missing)" = 5 ]
n=$(checks_logged)
# two more cycles: the check is complete, so not done again
wait_cycles "http://127.0.0.1:$PORT/metrics" 2 || fail two-more-cycles
check no-check-without-cause [ "$(checks_logged)" = "$n" ]

stop_pid "$ENF_PID"
finish
