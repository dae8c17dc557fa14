#!/bin/sh
# Rule files: the enforcer's example rule sets must pass `gpureclaim-enforcer check`, and the
# Prometheus recording/alerting rules must pass `promtool check rules` and their unit tests
# (`promtool test rules`).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
for f in rules/*.yaml rules/presets/*.yaml; do
    [ -e "$f" ] || continue
    if bin/gpureclaim-enforcer check "$f" >/tmp/cr.$$ 2>&1; then
        echo "PASS: rules/check-$(basename "$f")"
    else
        echo "FAIL: rules/check-$(basename "$f")"; cat /tmp/cr.$$
    fi
done
# Every invalid rules file gives exactly the errors in its .err file, through the CLI too.
for f in tests/rules/invalid/*.yaml; do
    [ -e "$f" ] || continue
    b=$(basename "$f" .yaml)
    if (cd tests/rules/invalid && ../../../bin/gpureclaim-enforcer check "$b.yaml" | sed '$d' |
        diff -u "$b.err" -) >/tmp/cr.$$ 2>&1; then
        echo "PASS: rules/invalid-$b"
    else
        echo "FAIL: rules/invalid-$b"; cat /tmp/cr.$$
    fi
done
# rules/README.md's key tables are generated from the loader's key specification.
sh tests/rules-readme.sh
for f in rules/prometheus/*.yml rules/prometheus/presets/*.yml; do
    [ -e "$f" ] || continue
    if promtool check rules "$f" >/tmp/cr.$$ 2>&1; then
        echo "PASS: rules/promtool-check-$(basename "$f")"
    else
        echo "FAIL: rules/promtool-check-$(basename "$f")"; cat /tmp/cr.$$
    fi
done
for f in tests/prometheus/*.yml; do
    [ -e "$f" ] || continue
    if promtool test rules "$f" >/tmp/cr.$$ 2>&1; then
        echo "PASS: rules/promtool-test-$(basename "$f")"
    else
        echo "FAIL: rules/promtool-test-$(basename "$f")"; cat /tmp/cr.$$
    fi
done
# promtool orders rule groups at random unless the test names the order: a test over a rule
# file with several groups would pass or fail by chance (it did in CI, once in about four runs).
for f in tests/prometheus/*.yml; do
    [ -e "$f" ] || continue
    groups=0 missing=""
    # The entries of the rule_files: block, each relative to the test file.
    for r in $(awk '/^rule_files:/ {on = 1; next} on && /^[^ #]/ {on = 0}
                    on && /^ *- / {sub(/^ *- */, ""); print}' "$f"); do
        if [ -f "$(dirname "$f")/$r" ]; then
            groups=$((groups + $(grep -c '^ *- name:' "$(dirname "$f")/$r")))
        else
            missing="$missing $r"
        fi
    done
    if [ -n "$missing" ]; then
        echo "FAIL: rules/group-order-$(basename "$f") (rule file not found:$missing)"
    elif [ "$groups" -le 1 ] || grep -q '^group_eval_order:' "$f"; then
        echo "PASS: rules/group-order-$(basename "$f")"
    else
        echo "FAIL: rules/group-order-$(basename "$f") ($groups groups, no group_eval_order)"
    fi
done
rm -f /tmp/cr.$$
