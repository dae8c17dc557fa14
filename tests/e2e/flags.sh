#!/bin/sh
# The flags both binaries share parse alike and are refused alike (common/flags.c).
#
# Each case runs the exporter and the enforcer with --version and the same flags; --version
# is handled after every flag has been parsed and checked, and the exporter starts no
# server then. For each case the two must agree on the exit status and on stderr,
# once the program name and the log timestamp are taken out; and the status and stderr must
# be the ones the case expects: 0 and nothing, 0 and the warning a bare number of seconds
# gets (naming the duration it was read as), or 1 with "error: <message>" and the pointer to
# --help. Before the shared module the exporter refused "10s" and took "10", and the enforcer
# the reverse, and they exited 2 and 1 on a bad flag.
#
# Then the enforcer's command table (enforcer/main.c): a flag set for a command that does not
# take it exits 1 naming both, `help COMMAND` and `COMMAND --help` list only its flags, every
# flag belongs to some command, and docs/flags.md holds the tables printed from the rows.
. "$(dirname "$0")/../lib.sh"

EXPORTER=$BIN/gpureclaim-exporter
ENF=$BIN/gpureclaim-enforcer
require "$EXPORTER" "$ENF" python3

# run PROG FLAGS...: status in $rc, stderr normalised into $TMP/PROG.err.
run() {
    _prog=$1; shift
    "$_prog" --version "$@" >"$TMP/out" 2>"$TMP/err.raw"
    rc=$?
    sed -e 's/gpureclaim-exporter/PROG/g; s/gpureclaim-enforcer/PROG/g' \
        -e 's/^ts=[^ ]* //; s/"ts":"[^"]*",//' "$TMP/err.raw" >"$TMP/$(basename "$_prog").err"
}

# same NAME WANT_STATUS WANT_STDERR FLAGS...: both programs exit WANT_STATUS with stderr
# WANT_STDERR (after normalising; "" for none).
same() {
    _name=$1 _want_rc=$2 _want_err=$3; shift 3
    run "$EXPORTER" "$@"; _rc_exp=$rc
    run "$ENF" "$@"; _rc_enf=$rc
    printf '%s' "$_want_err" >"$TMP/want.err"
    [ -n "$_want_err" ] && echo >>"$TMP/want.err"
    if [ "$_rc_exp" != "$_rc_enf" ] || ! cmp -s "$TMP/gpureclaim-exporter.err" "$TMP/gpureclaim-enforcer.err"; then
        fail "$_name" "exporter $_rc_exp, enforcer $_rc_enf: $(diff "$TMP/gpureclaim-exporter.err" "$TMP/gpureclaim-enforcer.err" | tr '\n' ' ')"
    elif [ "$_rc_exp" != "$_want_rc" ] || ! cmp -s "$TMP/gpureclaim-exporter.err" "$TMP/want.err"; then
        fail "$_name" "both exit $_rc_exp with '$(cat "$TMP/gpureclaim-exporter.err")'"
    else
        pass "$_name"
    fi
}

# refused NAME MESSAGE FLAGS...: both exit 1 with "error: MESSAGE" and the --help pointer.
refused() {
    _name=$1 _msg=$2; shift 2
    same "$_name" 1 "error: $_msg
run 'PROG --help' for usage" "$@"
}

bare() { # FLAG VALUE READ_AS
    echo "level=warn msg=\"'--$1=$2' has no unit and is read as seconds ($3); write the unit, as in '--$1=$3'\""
}

same listen-address 0 "" --web.listen-address=127.0.0.1:0
same listen-address-space-form 0 "" --web.listen-address '[::1]:0'
refused listen-address-needs-value "flag '--web.listen-address' needs a value" \
    --web.listen-address
refused no-form-of-a-string "unknown flag '--no-web.listen-address'" --no-web.listen-address

same header-timeout-duration 0 "" --web.read-header-timeout=10s
same header-timeout-compound 0 "" --web.read-header-timeout=1m30s
same header-timeout-bare-seconds 0 "$(bare web.read-header-timeout 10 10s)" \
    --web.read-header-timeout=10
same header-timeout-bare-fraction 0 "$(bare web.read-header-timeout 0.5 500ms)" \
    --web.read-header-timeout 0.5
same header-timeout-bare-json 0 \
    "{\"level\":\"warn\",\"msg\":\"'--web.read-header-timeout=2' has no unit and is read as seconds (2s); write the unit, as in '--web.read-header-timeout=2s'\"}" \
    --log.format=json --web.read-header-timeout=2
for v in abc 50ms 2h -1 1.5s 0 ''; do
    refused "header-timeout-refuses-'$v'" \
        "invalid value '$v' for '--web.read-header-timeout': want a duration from 100ms to 1h, e.g. '10s'" \
        --web.read-header-timeout="$v"
done

same telemetry-path 0 "" --web.telemetry-path=/custom
refused telemetry-path-relative \
    "invalid value 'metrics' for '--web.telemetry-path': want a path starting with '/'" \
    --web.telemetry-path=metrics

same max-connections 0 "" --web.max-connections-per-ip=100000
for v in 0 100001 x -1 1e3; do
    refused "max-connections-refuses-'$v'" \
        "invalid value '$v' for '--web.max-connections-per-ip': want a whole number from 1 to 100000" \
        --web.max-connections-per-ip="$v"
done

# The file is read when the server starts, not when the flag is parsed.
same web-config-file 0 "" --web.config.file=/nonexistent/web.yml

for v in debug info warn error; do same "log-level-$v" 0 "" --log.level=$v; done
refused log-level-unknown "invalid value 'trace' for '--log.level': want debug, info, warn or error" \
    --log.level=trace
same log-format-json 0 "" --log.format json
refused log-format-unknown "invalid value 'xml' for '--log.format': want logfmt or json" \
    --log.format=xml

refused unknown-flag "unknown flag '--web.listen-adress'" --web.listen-adress=:1
refused switch-takes-no-value "flag '--version' takes no value" --version=true

# The exporter's collector flags are rows of the same table (exporter/collector.c).
for a in --no-collector.devices --collector.devices=false --collector.disable-defaults \
    '--collector.disable-defaults --collector.ownership'; do
    # shellcheck disable=SC2086
    "$EXPORTER" --version $a >/dev/null 2>"$TMP/coll.err"
    check "exporter-accepts-'$a'" test $? -eq 0 -a ! -s "$TMP/coll.err"
done
"$EXPORTER" --version --collector.nvidia >/dev/null 2>"$TMP/coll.err"
check exporter-refuses-unknown-collector test $? -eq 1
check exporter-names-unknown-collector grep -qx "error: unknown flag '--collector.nvidia'" \
    "$TMP/coll.err"

# --help: both print usage on stdout and exit 0, each with its flags generated from its table.
for p in "$EXPORTER" "$ENF"; do
    n=$(basename "$p")
    "$p" --help >"$TMP/$n.help" 2>"$TMP/$n.help.err"
    check "$n-help-exit-0" test $? -eq 0
    check "$n-help-lists-shared-flags" grep -q -- '--web.read-header-timeout="10s"' "$TMP/$n.help"
    check "$n-help-exit-status" grep -q '^exit status: 0 ok, 1 usage' "$TMP/$n.help"
done

# Each command takes only the flags of its groups (enforcer/main.c's command table): a flag
# of another command is refused, naming the command and the flag, instead of being ignored
# (before, `plan --from 7d` printed a plan as if --from meant something to it).
# refused_for NAME CMD FLAG ARGS...: the enforcer exits 1 naming CMD and FLAG.
refused_for() {
    _name=$1 _cmd=$2 _flag=$3; shift 3
    timeout 60 "$ENF" "$@" >"$TMP/rf.out" 2>"$TMP/rf.err"
    _rc=$?
    if [ "$_rc" -ne 1 ]; then
        fail "$_name" "exit $_rc, want 1: $(head -c 300 "$TMP/rf.err")"
    elif ! grep -qxF "error: flag '$_flag' does not apply to '$_cmd'" "$TMP/rf.err"; then
        fail "$_name" "stderr: $(head -c 300 "$TMP/rf.err")"
    elif [ -s "$TMP/rf.out" ]; then
        fail "$_name" "printed on stdout: $(head -c 200 "$TMP/rf.out")"
    else
        pass "$_name"
    fi
}
RULES=$TOP/rules/business-hours.yaml
# Prometheus and the listen address point nowhere, so that a binary that ignores the flag
# under test (the one before the table) fails fast instead of reading a server or serving.
NOWHERE=--prometheus.url=http://127.0.0.1:1
refused_for plan-refuses-from plan --from plan --from 7d --rules.file "$RULES" "$NOWHERE"
refused_for check-refuses-workload check --workload check --workload x "$RULES"
refused_for explain-refuses-output explain --output explain --output json \
    --workload 'pod="x"' --rules.file "$RULES" "$NOWHERE"
refused_for backtest-refuses-no-form backtest --once backtest --no-once --from 1h \
    --rules.file "$RULES" "$NOWHERE"
# backtest and recommend take the --kube.* and --runtime.* clients, to look workloads up, but
# not run's own flags of acting: the pressure check and the stop timeout.
refused_for backtest-refuses-confirm-pressure backtest --kube.confirm-pressure backtest \
    --from 1h --kube.confirm-pressure --rules.file "$RULES" "$NOWHERE"
refused_for recommend-refuses-stop-timeout recommend --runtime.stop-timeout recommend \
    --from 1h --runtime.stop-timeout=5s --rules.file "$RULES" "$NOWHERE"
refused_for restore-refuses-listen restore --web.listen-address restore ml/notebook/x \
    --web.listen-address=127.0.0.1:0
refused_for run-refuses-from run --from run --from 7d --once --rules.file "$RULES" "$NOWHERE" \
    --web.listen-address=127.0.0.1:0 --state.file="$TMP/state.json" --audit.file="$TMP/audit"
refused_for plan-refuses-namespace-short plan --namespace plan -n ml --rules.file "$RULES" \
    "$NOWHERE"
# The global flags apply to every command: `check` with --log.level still checks.
"$ENF" check --log.level=warn "$RULES" >"$TMP/chk.out" 2>"$TMP/chk.err"
check check-takes-global-flags test $? -eq 0

# help COMMAND and COMMAND --help: the command's flags only, the same text.
"$ENF" help backtest >"$TMP/h-bt" 2>&1
check help-backtest-exit-0 test $? -eq 0
"$ENF" backtest --help >"$TMP/h-bt2" 2>&1
check help-backtest-twice-alike cmp -s "$TMP/h-bt" "$TMP/h-bt2"
check help-backtest-lists-from grep -q -- '--from=""' "$TMP/h-bt"
check help-backtest-lists-global grep -q -- '--log.level="info"' "$TMP/h-bt"
check help-backtest-omits-workload sh -c "! grep -q -- '--workload' '$TMP/h-bt'"
check help-backtest-omits-web sh -c "! grep -q -- '--web.listen-address' '$TMP/h-bt'"
check help-backtest-lists-kube grep -q -- '--kube.api-url=""' "$TMP/h-bt"
check help-backtest-lists-runtime grep -q -- '--runtime.socket=""' "$TMP/h-bt"
"$ENF" help recommend >"$TMP/h-rec" 2>&1
check help-recommend-lists-kube-and-runtime sh -c "grep -q -- '--kube.api-url=\"\"' '$TMP/h-rec' && grep -q -- '--runtime.scope-label=\"\"' '$TMP/h-rec'"
"$ENF" help plan >"$TMP/h-plan" 2>&1
check help-plan-omits-from sh -c "! grep -q -- '--from=' '$TMP/h-plan'"
check help-plan-lists-stats grep -q -- '--\[no-\]stats' "$TMP/h-plan"
"$ENF" help check >"$TMP/h-check" 2>&1
check help-check-omits-rules-file sh -c "! grep -q -- '--rules.file' '$TMP/h-check'"
"$ENF" help nosuch >/dev/null 2>"$TMP/h-bad"
check help-unknown-command-exit-1 test $? -eq 1
check help-unknown-command-named grep -qx "error: unknown command 'nosuch'" "$TMP/h-bad"

# Every flag of the full --help applies to some command, with the same default there.
"$ENF" --help | grep -o -- '^  --[^ ]*' | sort -u >"$TMP/all-flags"
for c in check plan explain run backtest recommend restore; do "$ENF" help $c; done |
    grep -o -- '^  --[^ ]*' | sort -u >"$TMP/cmd-flags"
check every-flag-belongs-to-a-command cmp -s "$TMP/all-flags" "$TMP/cmd-flags"

# docs/flags.md holds the per-command tables printed from the same rows.
"$ENF" flags-markdown >"$TMP/flags-md" 2>&1
check flags-markdown-exit-0 test $? -eq 0
python3 - "$TMP/flags-md" "$TOP/docs/flags.md" <<'PY' >"$TMP/md-diff" 2>&1
import sys
gen, doc = open(sys.argv[1]).read(), open(sys.argv[2]).read()
sys.exit(0 if gen in doc else 1)
PY
check docs-flags-md-generated-from-table test $? -eq 0

exit "$TEST_FAILED"
