#!/bin/sh
# `make help` must name every target of the Makefile (as "make TARGET", or "target all" for the
# default), so that a target added without a line in the help fails the make-help suite.
#
# usage: tests/check-make-help.sh [TREE]   (TREE defaults to the repository of this script)
set -u
TOP=${1:-$(cd "$(dirname "$0")/.." && pwd)}
help=$(make -s -C "$TOP" help) || { echo "FAIL: make-help: 'make help' failed"; exit 1; }
fails=0
for t in $(sed -n 's/^\([a-z][a-z-]*\):\([^=]\|$\).*/\1/p' "$TOP/Makefile" | sort -u); do
    if ! printf '%s\n' "$help" | grep -Eq "(make|target) $t([ )]|$)"; then
        echo "FAIL: make-help: 'make help' does not name the target '$t'"
        fails=$((fails + 1))
    fi
done
[ "$fails" -eq 0 ] && echo "PASS: make-help: 'make help' names every target of the Makefile"
exit 0
