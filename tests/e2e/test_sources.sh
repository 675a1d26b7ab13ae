#!/bin/bash
# SPDX-License-Identifier: MIT
# Sources as they ran: decoded as CPython decodes them (PEP 263 declarations: latin-1, cp1252); a
# script whose name is not UTF-8 (Python keeps such a name as surrogateescape, which must become
# the file's bytes again), shown escaped the same way in the text and JSON reports; and a file
# that changed on disk after its code was loaded, labelled as not what ran.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

# write FILE ENCODING DECLARATION TEXT: a spinning script with TEXT in a string on its hot line
write() {
	"$DEB_PY" - "$@" <<'PYEOF'
import sys
path, enc, decl, text = sys.argv[1:]
src = (decl + "\nimport time\ndef spin():\n    t = time.thread_time()\n"
       "    while time.thread_time() - t < 0.3: s = \"%s\"  # SPIN\nspin()\n") % text
open(path.encode("utf-8", "surrogateescape"), "wb").write(src.encode(enc))
PYEOF
}

# spins NAME FILE TEXT: the SPIN line of FILE carries TEXT in the stored source
spins() {
	local name=$1 file=$2 text=$3
	"$LS" -q --profile "$WORK/$name.lsprof" -o "$WORK/$name.html" -- "$DEB_PY" "$file" ||
		{ fail "$name: exit $?"; return; }
	j=$(json_of "$WORK/$name.lsprof") || { fail "$name: report"; return; }
	"$PYQ" - "$j" "$text" "$name" <<'PYEOF' | check_lines
import json, sys
d = json.load(open(sys.argv[1])); text, name = sys.argv[2], sys.argv[3]
spin = [l for l in d["lines"] if "# SPIN" in (l["source"] or "")]
ok = spin and ('"%s"' % text) in spin[0]["source"] and spin[0]["samples"] > 100
print("%s %s: %s" % ("ok" if ok else "FAIL", name, spin and spin[0]["source"].strip()))
PYEOF
}

write "$WORK/latin.py" latin-1 "# -*- coding: latin-1 -*-" "é À"
spins "latin-1 declared" "$WORK/latin.py" "é À"
write "$WORK/cp.py" cp1252 "#!/usr/bin/env python3
# vim: set fileencoding=cp1252 :" "€ œ"
spins "cp1252 on line 2" "$WORK/cp.py" "€ œ"
write "$WORK/plain.py" utf-8 "# plain UTF-8" "ü ß"
spins "UTF-8" "$WORK/plain.py" "ü ß"

# a name with the bytes ff fe, which are not UTF-8
bad="$WORK/bad"$'\xff\xfe'"name.py"
write "$(printf '%s' "$bad" | "$DEB_PY" -c 'import os, sys; print(os.fsdecode(sys.stdin.buffer.read()))')" \
	utf-8 "# a name that is not UTF-8" "ok"
spins "non-UTF-8 name" "$bad" "ok"
want="bad\\xff\\xfename.py"
"$LS" report "$WORK/non-UTF-8 name.lsprof" --format text | grep -F "$want:5" >/dev/null &&
	pass "text report names it $want" || fail "text report: $("$LS" report "$WORK/non-UTF-8 name.lsprof" --format text | grep SPIN)"
n=$(pyq "$(json_of "$WORK/non-UTF-8 name.lsprof")" '" ".join(f["path"] for f in d["files"] if f["path"].endswith("name.py"))')
[ "$n" = "$WORK/$want" ] && pass "JSON names it the same: $n" || fail "JSON path: $n"

# code that ran from a file that has changed since: its text is labelled, everywhere
"$LS" -q --profile "$WORK/stale.lsprof" -o "$WORK/stale.html" -- "$DEB_PY" "$FIX/stale_source.py" \
	"$WORK/edited.py" || fail "stale: exit $?"
j=$(json_of "$WORK/stale.lsprof") && st=$(pyq "$j" '[f["stale"] for f in d["files"] if f["path"].endswith("edited.py")]')
[[ "$st" == *"changed on disk after it was loaded: spin is not defined at line 2"* ]] &&
	pass "edited after loading: $st" || fail "edited after loading: $st"
"$LS" report "$WORK/stale.lsprof" --format text | grep -q "^# Stale source: $WORK/edited.py" &&
	pass "text report names the stale source" || fail "text report: no stale source line"
# and a source that matches its code has no such label
st=$(pyq "$(json_of "$WORK/latin-1 declared.lsprof")" '[f["stale"] for f in d["files"] if f["stale"]]')
[ "$st" = "[]" ] && pass "no unchanged source is labelled" || fail "unchanged source labelled: $st"
# a script that deletes itself before it is read: the report says so instead of a bare errno
cat >"$WORK/gone.py" <<'PY'
import os
import time

os.unlink(__file__)
t = time.thread_time()
while time.thread_time() - t < 0.2:
    pass
PY
"$LS" -q --profile "$WORK/gone.lsprof" -o "$WORK/gone.html" -- "$DEB_PY" "$WORK/gone.py" || fail "gone: exit $?"
u=$(pyq "$(json_of "$WORK/gone.lsprof")" '[f["unavailable"] for f in d["files"] if f["path"].endswith("gone.py")]')
[[ "$u" == *"deleted or moved before it could be read"* ]] && pass "deleted source: $u" || fail "deleted source: $u"
finish
