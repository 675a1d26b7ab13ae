#!/bin/bash
# SPDX-License-Identifier: MIT
# One line does 3x the loop work of another: measured 3.0 +/- 10% on both CPython 3.11 builds
# (Debian's static, non-PIE interpreter with USDT; pyenv's shared libpython).
source "$(dirname "$0")/lib.sh"

for py in "$DEB_PY" "$PYENV_PY"; do
	need_python "$py"
	prof="$WORK/ratio-$(basename "$(dirname "$(dirname "$py")")").lsprof"
	"$LS" -q --mode cpu --profile "$prof" -o "$WORK/ratio.html" -- "$py" "$FIX/ratio3.py" 180 >/dev/null ||
		{ fail "$py: linescope-bpf exited $?"; continue; }
	j=$(json_of "$prof") || { fail "$py: report"; continue; }
	light=$(pyq "$j" 'total("ratio3.py", 23)')
	heavy=$(pyq "$j" 'total("ratio3.py", 24)')
	if r=$(ratio_within "$heavy" "$light" 3.0 0.10); then
		pass "$py: heavy()/light() call lines $heavy/$light = $r"
	else
		fail "$py: heavy()/light() call lines $heavy/$light = $r, want 3.0 +/- 10%"
	fi
	fl=$(pyq "$j" 'own("ratio3.py", 8) + own("ratio3.py", 9)')
	fh=$(pyq "$j" 'own("ratio3.py", 15) + own("ratio3.py", 16)')
	if r=$(ratio_within "$fh" "$fl" 3.0 0.10); then
		pass "$py: heavy/light loop lines own time $fh/$fl = $r"
	else
		fail "$py: heavy/light loop lines own time $fh/$fl = $r, want 3.0 +/- 10%"
	fi
	# the innermost frame of the hot lines is the loop body, in the right function
	fn=$(pyq "$j" '[l["function"] for l in lines(None, "ratio3.py") if l["line"] == 16][0]')
	[ "$fn" = heavy ] && pass "$py: line 16 is in heavy" || fail "$py: line 16 function '$fn'"
	ver=$(pyq "$j" 'd["processes"][0]["python"]')
	case "$ver" in 3.11.*) pass "$py: version $ver" ;; *) fail "$py: version '$ver'" ;; esac
done
finish
