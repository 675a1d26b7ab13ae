#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs each libFuzzer target for SECONDS from its seed corpus (tests/fuzz/corpus/<target>, never
# written to: new inputs go to .output/fuzz/corpus/<target>). A crash, leak or sanitizer report
# fails the run and leaves its input in .output/fuzz/crash/<target>/.
#	tests/fuzz/run.sh SECONDS TARGET...
set -u
cd "$(dirname "$0")/../.."
secs=$1
shift
out=.output/fuzz
fail=0
for t in "$@"; do
	bin=$out/fuzz_$t seeds=tests/fuzz/corpus/$t work=$out/corpus/$t crash=$out/crash/$t
	[ -x "$bin" ] || { echo "fuzz: $bin not built (make fuzz-build)"; exit 1; }
	[ -d "$seeds" ] || { echo "fuzz: no seed corpus $seeds"; exit 1; }
	mkdir -p "$work" "$crash"
	log=$out/$t.log
	# -rss_limit_mb: the profile reader loads whole databases; 2 GiB is still a bug's worth
	extra=()
	# the tokenizer and the index also start from the tricky sources the unit tests use
	case $t in pytok | pyindex) extra=(tests/fixtures/pysyms) ;; esac
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$crash/" "$work" "$seeds" "${extra[@]}" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	if [ $rc -ne 0 ]; then
		echo "fuzz $t: FAILED after ${runs:-?} runs ($cov); see $log and $crash/"
		grep -m3 -E "ERROR|runtime error|SUMMARY" "$log"
		fail=1
	else
		echo "fuzz $t: ${secs}s, ${runs:-?} runs, $cov, no crash"
	fi
done
exit $fail
