#!/bin/sh
# Runs each cmocka unit test binary given; prints cmocka's own lines, then one closing line.
passed=0
failed=0
if [ $# -eq 0 ]; then
	echo "run-unit.sh: no unit test binaries given" >&2
	exit 1
fi
for t in "$@"; do
	echo "== $t"
	if "$t"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAILED: $t"
	fi
done
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
