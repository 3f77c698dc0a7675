#!/bin/sh
# Runs each libFuzzer harness given, one after the other, for SECONDS each (docs/fuzzing.md):
# over a corpus of its own under build/fuzz/corpus/NAME that starts from the seeds and the
# regression inputs of fuzz/corpus/NAME (every one of which is run first). Prints one line per
# harness (executions, per second, coverage) and fails if any harness found a crash, a leak, an
# undefined behaviour or a timeout; its input is then in build/fuzz/crashes/.
#   sh fuzz/run.sh SECONDS build/fuzz/fuzz-NAME...
secs=$1
shift
out=build/fuzz
failed=0
mkdir -p "$out/crashes"
for bin in "$@"; do
	name=${bin##*/fuzz-}
	work=$out/corpus/$name
	log=$out/$name.log
	mkdir -p "$work"
	# stderr of the code under test is closed (the config parser logs each bad line);
	# libFuzzer and the sanitizers keep theirs.
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=2 \
		-print_final_stats=1 -artifact_prefix="$out/crashes/$name-" \
		"$work" "fuzz/corpus/$name" >"$log" 2>&1
	rc=$?
	done=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
	if [ "$rc" -ne 0 ] || [ -z "$done" ]; then
		failed=$((failed + 1))
		echo "FAILED: fuzz-$name (exit $rc); its report, from $log:"
		grep -A40 -E '^==[0-9]+==|runtime error|^SUMMARY|Test unit written' "$log" | head -n 60
		continue
	fi
	execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
	echo "$done" | awk -v n="$name" -v e="$execs" -v s="$secs" '{
		for (i = 1; i <= NF; i++) {
			if ($i == "cov:") cov = $(i + 1);
			if ($i == "ft:") ft = $(i + 1);
			if ($i == "exec/s:") rate = $(i + 1);
		}
		printf "fuzz-%-12s %3ss  %9s execs  %7s exec/s  cov: %5s  ft: %6s\n", n, s, e, rate, cov, ft
	}'
done
echo "fuzz: $(($# - failed)) harnesses found nothing, $failed failed"
[ "$failed" -eq 0 ]
