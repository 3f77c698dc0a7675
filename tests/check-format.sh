#!/bin/sh
# make check: every tracked .c and .h is as clang-format (with the repo's .clang-format) writes
# it. Lists the files that are not, and how to fix them.
set -u
cd "$(git rev-parse --show-toplevel)" || exit 1
bad=""
for f in $(git ls-files '*.c' '*.h'); do
	clang-format --style=file "$f" | cmp -s - "$f" || bad="$bad $f"
done
if [ -n "$bad" ]; then
	echo "check-format: not as clang-format writes them (run make format):"
	for f in $bad; do echo "  $f"; done
	exit 1
fi
echo "check-format: $(git ls-files '*.c' '*.h' | wc -l) files as clang-format writes them"
