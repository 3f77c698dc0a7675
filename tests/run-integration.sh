#!/bin/sh
# Runs every tests/integration/NN-*.sh and NN-*.py in order, as root on the real kernel. Each test
# cleans up after itself (also when it fails). A test never skips: a missing feature is a failure.
# Usage: run-integration.sh [PATTERN]  (only tests whose file name contains PATTERN)
cd "$(dirname "$0")/.." || exit 1
if [ "$(id -u)" != 0 ]; then
	echo "integration tests need root (real cgroups, namespaces, sockets owned by root)" >&2
	exit 1
fi
passed=0
failed=0
failures=""
for t in tests/integration/[0-9]*; do
	case "$t" in *"${1:-}"*) ;; *) continue ;; esac
	echo "== $t"
	start=$(date +%s)
	case "$t" in
	*.py) python3 "$t" ;;
	*.sh) bash "$t" ;;
	*) continue ;;
	esac
	rc=$?
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "-- passed ($(($(date +%s) - start))s)"
	else
		failed=$((failed + 1))
		failures="$failures $t"
		echo "-- FAILED (exit $rc)"
	fi
done
[ -n "$failures" ] && echo "failed:$failures"
echo "integration: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
