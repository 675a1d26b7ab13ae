#!/bin/bash
# SPDX-License-Identifier: MIT
# The BPF frame walker on code shapes: methods, static methods, closures, generators, decorated
# functions, coroutines, exception handlers, lambdas, and a stack deeper than the walk limit. For
# each, the hottest line of the named function must be the line marked "# HOT <qualname>".
source "$(dirname "$0")/../e2e/lib.sh"

for py in "$DEB_PY" "$PYENV_PY"; do
	need_python "$py"
	prof="$WORK/shapes.lsprof"
	"$LS" -q --mode cpu --profile "$prof" -o "$WORK/shapes.html" -- "$py" "$FIX/walker_shapes.py" ||
		{ fail "$py: exit $?"; continue; }
	j=$(json_of "$prof") || { fail "$py: report"; continue; }
	out=$("$PYQ" - "$j" "$FIX/walker_shapes.py" <<'PYEOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
want = {}
for no, text in enumerate(open(sys.argv[2]), 1):
    m = re.search(r"# HOT (\S+)", text)
    if m:
        want[m.group(1)] = no
for qual, line in sorted(want.items()):
    rows = [l for l in d["lines"] if l["path"].endswith("walker_shapes.py") and l["function"] == qual]
    if not rows:
        print("FAIL %s: no samples in that function" % qual)
        continue
    best = max(rows, key=lambda l: l["self_time_s"])
    print("%s %s: hottest line %d (want %d)" % ("ok" if best["line"] == line else "FAIL", qual, best["line"], line))
lam = [l for l in d["lines"] if l["function"] and l["function"].startswith("<lambda>")]
print("%s lambda frames present" % ("ok" if lam else "FAIL"))
print("%s truncated stacks counted: %d" % ("ok" if d["run"]["lost"]["truncated_stacks"] > 0 else "FAIL", d["run"]["lost"]["truncated_stacks"]))
deep = [l for l in d["lines"] if l["function"] == "burn"]
print("%s deep stack still attributes its leaf (burn)" % ("ok" if deep else "FAIL"))
PYEOF
)
	while read -r status rest; do
		if [ "$status" = ok ]; then pass "$py: $rest"; else fail "$py: $rest"; fi
	done <<<"$out"
done
finish
