#!/bin/bash
# SPDX-License-Identifier: MIT
# Bad input: one clear line on stderr and a non-zero exit, never a crash or a silent report.
source "$(dirname "$0")/lib.sh"

# expect_error NAME WANT_RC PATTERN -- ARGS: runs the tool, checks exit status and a one-line message
expect_error() {
	local name=$1 want=$2 pat=$3
	shift 4
	local err="$WORK/err" rc
	(cd "$WORK" && "$LS" "$@" >/dev/null 2>"$err")
	rc=$?
	if { [ "$want" = nonzero ] && [ $rc -eq 0 ]; } || { [ "$want" != nonzero ] && [ $rc -ne "$want" ]; }; then
		fail "$name: exit $rc (want $want): $(cat "$err")"
		return
	fi
	if [ $rc -ge 128 ]; then
		fail "$name: crashed (exit $rc)"
		return
	fi
	if [ "$(wc -l <"$err")" -ne 1 ] || ! grep -qE "$pat" "$err"; then
		fail "$name: message not one line matching /$pat/: $(cat "$err")"
		return
	fi
	pass "$name: exit $rc, $(cat "$err")"
}

# the checker itself: a command that succeeds must not pass as an expected error (it did: && and
# || have equal precedence in the shell, so "nonzero" with exit 0 fell through to the next test)
before=$failures
expect_error "self-check (must fail)" nonzero "." -- --version >/dev/null
if [ $failures -eq $((before + 1)) ]; then
	failures=$before
	pass "expect_error fails a command that exits 0"
else
	fail "expect_error passed a command that exits 0"
fi
# a pid that does not exist
sleep 0.01 &
dead=$!
wait $dead
expect_error "dead pid" 1 "pid $dead: no such process" -- -p "$dead" -d 1
# a process that is not Python
sleep 30 &
sl=$!
# the background child is bash until it has exec'd sleep: wait for the exec, not for a time
until [ "$(cat /proc/$sl/comm 2>/dev/null)" = sleep ]; do :; done
expect_error "non-Python pid" 1 "pid $sl \(sleep\) is not a Python process" -- -p "$sl" -d 1
kill $sl
# an unknown cgroup
expect_error "unknown cgroup" 1 "no cgroup v2 group 'no/such/group'" -- -c no/such/group -d 1
# usage errors exit 64
expect_error "no target" 64 "nothing to profile" --
expect_error "two targets" 64 "exclusive" -- -p 1 -c foo
expect_error "bad frequency" 64 "invalid frequency" -- -F abc -p 1
expect_error "frequency too high" 64 "invalid frequency '100000' \(1\.\.[0-9]+ Hz: at most 10000, and kernel.perf_event_max_sample_rate is [0-9]+\)" -- -F 100000 -p 1
expect_error "duration too long" 64 "invalid duration '1e9' \(seconds, 0 < d <= 1e7\)" -- -d 1e9 -p 1
expect_error "bad pid" 64 "invalid pid" -- -p 12x
# a command that does not exist
expect_error "missing command" 127 "cannot run '/no/such/binary'" -- -q -- /no/such/binary
# a profile that is not a profile
echo "not a database" >"$WORK/corrupt.lsprof"
expect_error "corrupt profile" 1 "is not a linescope profile or is corrupt" -- report "$WORK/corrupt.lsprof"
head -c 8192 /dev/urandom >"$WORK/random.lsprof"
expect_error "random bytes" 1 "is not a linescope profile or is corrupt" -- report "$WORK/random.lsprof"
sqlite3 "$WORK/other.lsprof" "CREATE TABLE t(x)"
expect_error "other database" 1 "not a linescope profile" -- report "$WORK/other.lsprof"
expect_error "missing profile" 1 "cannot read profile .*missing.lsprof" -- report "$WORK/missing.lsprof"
# a truncated real profile
"$LS" -q --profile "$WORK/real.lsprof" -o "$WORK/real.html" -- "$DEB_PY" -c "sum(range(10**6))"
head -c 3000 "$WORK/real.lsprof" >"$WORK/trunc.lsprof"
expect_error "truncated profile" 1 "not a linescope profile or is corrupt" -- report "$WORK/trunc.lsprof"
# --help: argp fills the paragraphs, nothing wraps mid-line, no invented bug-report address
for h in "--help" "report --help"; do
	# shellcheck disable=SC2086
	out=$("$LS" $h)
	long=$(awk 'length > 79' <<<"$out" | wc -l)
	[ "$long" = 0 ] && ! grep -qi "report bugs" <<<"$out" && grep -q "pprof\|-p, --pid" <<<"$out" &&
		pass "$h: fits 79 columns, no bug address" || fail "$h: $long long lines or a bug address"
done
finish
