#!/bin/bash
# Mutation smoke (make mutation-smoke; not part of make test): shows that the suite fails when a
# rule is switched off. Each mutant is a scratch copy of this tree (/tmp/firebreak-mutant-NAME,
# removed after) with one check disabled by a sed edit, built, and run through the tests that guard
# that check; it is killed when one of them fails. The script fails if any mutant survives, if an
# edit no longer applies (the code moved: update the expression), or if a guarding test fails on
# the unmutated tree (then a "kill" would prove nothing).
# Usage: tests/mutation-smoke.sh [NAME...]  (as root; it takes /tmp/fb-integration.lock itself for
# each test run, so do not run it under that lock)
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
LOCK=/tmp/fb-integration.lock
[ "$(id -u)" = 0 ] || { echo "mutation-smoke: needs root (it runs integration tests)" >&2; exit 1; }

# NAME@FILE@SED EXPRESSION@TESTS (integration test patterns; unit:BINARY for a cmocka test)
MUTANTS='
pids-cap@detectors/rules-host.c@s/if (rose(ev, "pids_max_hits", \&st->pids_max_hits, \&by) \&\& k < max) {/if (0 \&\& rose(ev, "pids_max_hits", \&st->pids_max_hits, \&by) \&\& k < max) {/@52-sandbox-caps
metadata-invariant@policy/policy-egress.c@/^const char \*policy_cidr_forbidden(/,/^}/s/^\tfor (size_t i = 0; i < ARRAY_SIZE(never_open); i++) {$/\treturn NULL;\n&/@50-sandbox-lifecycle unit:test_policy_egress
seccomp-arch@enforcer/seccomp.c@s/SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM)/SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW/@51-sandbox-isolation
gate-wrapper@policy/gate-invariants.c@s/^\tif (!w || named(t->wrappers, t->n_wrappers, w->name))$/\tif (1 || !w || named(t->wrappers, t->n_wrappers, w->name))/@53-gate
egress-hook@enforcer/egress-hook.bpf.c@s/^\tif (!(rules \& t->rules)) {$/\tif (0 \&\& !(rules \& t->rules)) {/@62-egress-per-tool
peer-cred@lib/unixsock.c@s/^\tif (cred.uid == 0)$/\tif (1 || cred.uid == 0)/@10-daemon-lifecycle
http-upload@detectors/rules-http-flow.c@s/^\tif (sum <= st->cfg.http_upload_max ||/\tif (1 ||/@97-http-detectors unit:test_detect
http-beacon@detectors/rules-http-flow.c@s/^\tif (b->n < c->http_beacon_count)$/\tif (1)/@97-http-detectors unit:test_detect
'

MUT_DIR=""
cleanup() { [ -n "$MUT_DIR" ] && rm -rf "$MUT_DIR"; }
trap cleanup EXIT

# run_tests TREE TESTS LOG: runs each test in TREE; prints the ones that failed (none: all passed).
run_tests() {
	local tree=$1 log=$3 t killed=""
	for t in $2; do
		case "$t" in
		unit:*)
			(cd "$tree" && make -s -j2 "build/tests/${t#unit:}" >>"$log" 2>&1 &&
				"build/tests/${t#unit:}") >>"$log" 2>&1 || killed="$killed $t"
			;;
		*)
			flock "$LOCK" sh "$tree/tests/run-integration.sh" "$t" >>"$log" 2>&1 || killed="$killed $t"
			;;
		esac
	done
	echo "$killed"
}

# build TREE LOG: the daemon, the CLI and the probes the tests run.
build() {
	(cd "$1" && make -s -j2 all build/probe/seccomp-probe build/probe/seccomp-log-self) >>"$2" 2>&1
}

want=" $* "
survived=""
broken=""
report=""
start_all=$(date +%s)
printf 'mutation-smoke: building the unmutated tree\n'
build "$ROOT" /dev/null || { echo "mutation-smoke: the unmutated tree does not build" >&2; exit 1; }
while IFS='@' read -r name file expr tests; do
	[ -n "$name" ] || continue
	[ "$want" = "  " ] || case "$want" in *" $name "*) ;; *) continue ;; esac
	t0=$(date +%s)
	mkdir -p "$ROOT/build/mutation-smoke"
	log=$ROOT/build/mutation-smoke/$name.log
	: >"$log"
	# The guarding tests must pass as the code is, or a failure under the mutant proves nothing.
	failed=$(run_tests "$ROOT" "$tests" "$log")
	if [ -n "$failed" ]; then
		echo "mutation-smoke: $name: the unmutated tree fails$failed (see $log)" >&2
		broken="$broken $name"
		continue
	fi
	MUT_DIR=$(mktemp -d "/tmp/firebreak-mutant-$name.XXXXXX")
	# The working tree as it is (committed or not), with its build/ so only the mutant rebuilds.
	tar -C "$ROOT" --exclude=./.git -cf - . | tar -C "$MUT_DIR" -xf -
	cp "$MUT_DIR/$file" "$MUT_DIR/$file.orig"
	sed -i "$expr" "$MUT_DIR/$file"
	if cmp -s "$MUT_DIR/$file" "$MUT_DIR/$file.orig"; then
		echo "mutation-smoke: $name: the edit no longer applies to $file: $expr" >&2
		broken="$broken $name"
		rm -rf "$MUT_DIR"
		MUT_DIR=""
		continue
	fi
	rm "$MUT_DIR/$file.orig"
	if ! build "$MUT_DIR" "$log"; then
		echo "mutation-smoke: $name: the mutant does not build (see $log)" >&2
		broken="$broken $name"
		rm -rf "$MUT_DIR"
		MUT_DIR=""
		continue
	fi
	killed=$(run_tests "$MUT_DIR" "$tests" "$log")
	rm -rf "$MUT_DIR"
	MUT_DIR=""
	took=$(($(date +%s) - t0))
	if [ -n "$killed" ]; then
		line=$(printf '%-20s killed by%s (%ss)' "$name" "$killed" "$took")
	else
		line=$(printf '%-20s SURVIVED%s (%ss)' "$name" " $tests" "$took")
		survived="$survived $name"
	fi
	echo "$line"
	report="$report$line
"
	# What killed it, for the record: the first failure each test printed.
	grep -m3 "^FAIL\|^-- FAILED\|^\[  FAILED" "$log" | sed 's/^/    /'
done <<EOF
$MUTANTS
EOF
echo "mutation-smoke: $(($(date +%s) - start_all))s in all"
[ -z "$broken" ] || { echo "mutation-smoke: could not test:$broken" >&2; exit 1; }
[ -z "$survived" ] || { echo "mutation-smoke: mutants survived:$survived" >&2; exit 1; }
[ -n "$report" ] || { echo "mutation-smoke: no mutant is named '$*'" >&2; exit 1; }
echo "mutation-smoke: every mutant was killed"
