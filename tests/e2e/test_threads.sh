#!/bin/bash
# SPDX-License-Identifier: MIT
# Four threads with CPU work 1:2:3:4: each thread's share within 10% of its expected share, both
# by the line each thread runs (worker lines' total time) and by the thread ids of the samples.
source "$(dirname "$0")/lib.sh"

for py in "$DEB_PY" "$PYENV_PY"; do
	need_python "$py"
	prof="$WORK/threads.lsprof"
	"$LS" -q --mode cpu --profile "$prof" -o "$WORK/threads.html" -- "$py" "$FIX/threads4.py" 2500000 ||
		{ fail "$py: linescope-bpf exited $?"; continue; }
	j=$(json_of "$prof") || { fail "$py: report"; continue; }
	w=()
	for line in 17 21 25 29; do
		w+=("$(pyq "$j" "total('threads4.py', $line)")")
	done
	sum=$("$PYQ" -c "import sys; print(sum(map(float, sys.argv[1:])))" "${w[@]}")
	for k in 1 2 3 4; do
		if r=$(ratio_within "${w[$((k - 1))]}" "$sum" "$("$PYQ" -c "print($k/10)")" 0.10); then
			pass "$py: worker$k share $r (want $k/10)"
		else
			fail "$py: worker$k share $r, want $k/10 +/- 10% (${w[*]})"
		fi
	done
	# the same from the samples' thread ids (the main thread, tid == pid, only starts them)
	shares=$(sqlite3 "$prof" "SELECT sum(count) FROM samples s JOIN processes p ON p.id = s.process_id
		WHERE s.kind = 0 AND s.tid != p.pid GROUP BY s.tid ORDER BY 1 DESC")
	read -r -d '' t4 t3 t2 t1 <<<"$(echo "$shares" | tr '\n' ' ')"
	tsum=$((t1 + t2 + t3 + t4))
	for k in 1 2 3 4; do
		v=$(eval echo "\$t$k")
		if r=$(ratio_within "$v" "$tsum" "$("$PYQ" -c "print($k/10)")" 0.10); then
			pass "$py: thread with work $k has share $r"
		else
			fail "$py: thread with work $k has share $r, want $k/10 +/- 10% ($shares)"
		fi
	done
	n=$(pyq "$j" 'd["processes"][0]["threads"]')
	[ "$n" -ge 5 ] && pass "$py: $n threads observed" || fail "$py: $n threads observed, want >= 5"
done
finish
