#!/bin/bash
# SPDX-License-Identifier: MIT
# One line does 3x the loop work of another, on both CPython 3.11 builds (Debian's static,
# non-PIE interpreter with USDT; pyenv's shared libpython): the profiled heavy/light ratio matches
# the ratio the workload measured with time.thread_time() in the same run, within a tolerance that
# follows from the sample counts.
source "$(dirname "$0")/lib.sh"

for py in "$DEB_PY" "$PYENV_PY"; do
	need_python "$py"
	prof="$WORK/ratio-$(basename "$(dirname "$(dirname "$py")")").lsprof"
	LS_TRUTH="$WORK/truth.json" "$LS" -q --mode cpu --profile "$prof" -o "$WORK/ratio.html" -- \
		"$py" "$FIX/ratio3.py" 180 >/dev/null || { fail "$py: linescope-bpf exited $?"; continue; }
	j=$(json_of "$prof") || { fail "$py: report"; continue; }
	check_lines < <(ratio_vs_truth "$py" "$j" "$WORK/truth.json" ratio3.py)
	# the loop lines' own time splits the same way as the calls that run them
	fl=$(pyq "$j" 'own("ratio3.py", 13) + own("ratio3.py", 14)')
	fh=$(pyq "$j" 'own("ratio3.py", 20) + own("ratio3.py", 21)')
	call=$(pyq "$j" 'total("ratio3.py", 31) / total("ratio3.py", 29)')
	if r=$(ratio_within "$fh" "$fl" "$call" 0.05); then
		pass "$py: loop lines' own time $fh/$fl = $r, as their call lines ($call)"
	else
		fail "$py: loop lines' own time $fh/$fl = $r, call lines $call"
	fi
	# the innermost frame of the hot lines is the loop body, in the right function
	fn=$(pyq "$j" '[l["function"] for l in lines(None, "ratio3.py") if l["line"] == 21][0]')
	[ "$fn" = heavy ] && pass "$py: line 21 is in heavy" || fail "$py: line 21 function '$fn'"
	ver=$(pyq "$j" 'd["processes"][0]["python"]')
	case "$ver" in 3.11.*) pass "$py: version $ver" ;; *) fail "$py: version '$ver'" ;; esac
	# walked from its interpreter's start: known at its exec (static), or its libpython found
	# before the exec and probed (shared); what came before its start has no line to miss
	st=$(sqlite3 "$prof" "select group_concat(key || '=' || value) from stats where key in
		('unresolved_samples', 'before_start', 'received_samples')")
	[[ "$st" == *"unresolved_samples=0"* && "$st" == *"received_samples="* ]] &&
		pass "$py: no sample left unwalked ($st)" || fail "$py: samples left unwalked: $st"
done
finish
