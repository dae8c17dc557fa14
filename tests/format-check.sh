#!/bin/sh
# clang-format check of every C file: one FAIL line per file that differs from .clang-format
# (run `make format` to fix), one PASS line when all are clean.
set -u
bad=0
for f in "$@"; do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "FAIL: format/$f"
        bad=$((bad + 1))
    fi
done
[ "$bad" -eq 0 ] && echo "PASS: format/clang-format ($# files)"
exit 0
