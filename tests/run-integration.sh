#!/bin/sh
# Runs every tests/integration/NN-*.sh and NN-*.py in order, as root on the real kernel. Each test
# cleans up after itself (also when it fails). A test never skips: a missing feature is a failure.
# Usage: run-integration.sh [PATTERN]  (only tests whose file name contains PATTERN; a pattern
# that matches no test is an error, not an empty pass)
# Each test has FB_TEST_TIMEOUT seconds (300 by default): past that its whole process group gets
# SIGTERM (a shell test's EXIT trap still cleans up), SIGKILL 15 s later, and it counts as failed.
# FB_TEST_DIR runs the tests of another folder (the runner's own test, 01-runner.sh, uses it).
cd "$(dirname "$0")/.." || exit 1
if [ "$(id -u)" != 0 ]; then
	echo "integration tests need root (real cgroups, namespaces, sockets owned by root)" >&2
	exit 1
fi
limit=${FB_TEST_TIMEOUT:-300}
case "$limit" in '' | *[!0-9]*)
	echo "FB_TEST_TIMEOUT must be a number of seconds, not '$limit'" >&2
	exit 1
	;;
esac
passed=0
failed=0
failures=""
matched=0
for t in "${FB_TEST_DIR:-tests/integration}"/[0-9]*; do
	case "$t" in *"${1:-}"*) ;; *) continue ;; esac
	case "$t" in
	*.py) run=python3 ;;
	*.sh) run=bash ;;
	*) continue ;;
	esac
	matched=$((matched + 1))
	echo "== $t"
	start=$(date +%s)
	# timeout(1) makes the test the leader of its own process group and signals the whole group.
	timeout -k 15 "$limit" "$run" "$t"
	rc=$?
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "-- passed ($(($(date +%s) - start))s)"
	else
		failed=$((failed + 1))
		failures="$failures $t"
		if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			echo "-- FAILED: $t timed out after ${limit}s (its process group was killed)"
		else
			echo "-- FAILED (exit $rc)"
		fi
	fi
done
if [ "$matched" -eq 0 ]; then
	echo "no integration test matches '${1:-}'" >&2
	exit 1
fi
[ -n "$failures" ] && echo "failed:$failures"
echo "integration: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
