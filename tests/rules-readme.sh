#!/bin/sh
# rules/README.md's key tables are generated from the rules loader's key specification
# (key_specs in enforcer/rules.c, printed by the hidden `gpureclaim-enforcer rules-schema
# TABLE`) between `<!-- BEGIN generated: gpureclaim-enforcer rules-schema TABLE ... -->` and
# `<!-- END generated -->`. Without -u: PASS, or FAIL with a diff when README and the spec
# disagree (or a table's markers are gone). With -u: rewrite README's tables from the spec.
# usage: tests/rules-readme.sh [-u]   (ENF=path and README=path to check other files)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
ENF=${ENF:-$TOP/bin/gpureclaim-enforcer}
README=${README:-$TOP/rules/README.md}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: rules/readme-key-tables"; echo "$1"; exit 1; }
for t in rule-keys queries; do
    "$ENF" rules-schema "$t" >"$TMP/$t" || fail "cannot generate table '$t'"
    n=$(grep -c "^<!-- BEGIN generated: gpureclaim-enforcer rules-schema $t " "$README")
    [ "$n" -eq 1 ] || fail "$README: $n markers for table '$t', expected 1"
done
awk -v dir="$TMP" '
    /^<!-- BEGIN generated: gpureclaim-enforcer rules-schema / {
        print; f = dir "/" $6
        while ((getline l < f) > 0) print l
        close(f); skip = 1; next
    }
    /^<!-- END generated -->/ { skip = 0 }
    !skip { print }' "$README" >"$TMP/new"
if [ "${1:-}" = -u ]; then
    cp "$TMP/new" "$README" && echo "updated $README"
elif diff -u "$README" "$TMP/new" >"$TMP/diff"; then
    echo "PASS: rules/readme-key-tables"
else
    fail "$(cat "$TMP/diff")
rules/README.md differs from the key specification: run sh tests/rules-readme.sh -u"
fi
