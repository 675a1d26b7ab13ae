#!/bin/bash
# SPDX-License-Identifier: MIT
# Every current CPython, profiled from outside: pyenv's 3.12 and 3.13 (shared libpython), and
# Debian sid's 3.13, 3.14 and 3.15 (static, with probes) running chrooted, one of them in its own
# pid and mount namespaces as a container would be. Each must measure the heavy/light work ratio
# that the workload measured itself (time.thread_time, same run), name its version and build, read
# its source through /proc/PID/root, and (3.15, which has no thread-state key) attribute four
# threads' CPU within 10% of what they used.
source "$(dirname "$0")/lib.sh"

root=$("$ROOT/tests/fixtures/pyroot.sh") || { echo "FAIL: cannot build the sid root"; exit 1; }
inside=/tmp/ls-e2e-fixtures
mkdir -p "$root$inside" "$inside"
cp "$FIX/ratio3.py" "$FIX/threads4.py" "$root$inside/"
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc" || { echo "FAIL: mount proc"; exit 1; }
trap 'umount "$root/proc" 2>/dev/null; rm -rf "$WORK" "$root$inside" "$inside"' EXIT

# ratio NAME WANT_VERSION_PREFIX PATH_SUFFIX -- COMMAND...: the 3:1 check on one interpreter
ratio() {
	local name=$1 want=$2 suffix=$3 prof="$WORK/v.lsprof" j truth
	shift 4
	rm -f "$root$inside/truth.json" "$inside/truth.json"
	LS_TRUTH="$inside/truth.json" "$LS" -q --mode cpu --profile "$prof" -o "$WORK/v.html" -- \
		"$@" >/dev/null || { fail "$name: exit $?"; return; }
	j=$(json_of "$prof") || { fail "$name: report"; return; }
	truth="$root$inside/truth.json"
	[ -e "$truth" ] || truth="$inside/truth.json" # not chrooted
	check_lines < <(ratio_vs_truth "$name" "$j" "$truth" "$suffix")

	ver=$(pyq "$j" '[p["python"] for p in d["processes"] if p["python"]][-1]')
	case "$ver" in "$want"*) pass "$name: $ver" ;; *) fail "$name: version '$ver', want $want" ;; esac
	src=$(pyq "$j" "[l['source'] for l in lines(None, '$suffix') if l['line'] == 21][0]")
	case "$src" in *HEAVY*) pass "$name: source text read" ;; *) fail "$name: source '$src'" ;; esac
	LAST_JSON=$j
}

need_python /root/.pyenv/versions/3.12.1/bin/python3.12
need_python /root/.pyenv/versions/3.13.0/bin/python3.13
ratio "pyenv 3.12" "3.12.1 (shared" ratio3.py -- /root/.pyenv/versions/3.12.1/bin/python3.12 "$FIX/ratio3.py" 120
ratio "pyenv 3.13" "3.13.0 (shared" ratio3.py -- /root/.pyenv/versions/3.13.0/bin/python3.13 "$FIX/ratio3.py" 120
for v in 3.13 3.14 3.15; do
	ratio "sid $v chroot" "$v." "$inside/ratio3.py" -- chroot "$root" "/usr/bin/python$v" "$inside/ratio3.py" 120
	case "$(pyq "$LAST_JSON" '[p["python"] for p in d["processes"] if p["python"]][-1]')" in
	*static*usdt*) pass "sid $v: static build with probes" ;;
	*) fail "sid $v: build not reported as static with probes" ;;
	esac
done

# a container: its own pid and mount namespaces; pids as the host sees them, nspid beside them
ratio "sid 3.14 pid namespace" "3.14." "$inside/ratio3.py" -- unshare --pid --mount --fork \
	--mount-proc="$root/proc" chroot "$root" /usr/bin/python3.14 "$inside/ratio3.py" 120
ns=$(pyq "$LAST_JSON" '[(p["pid"], p["nspid"]) for p in d["processes"] if p["python"]][-1]')
case "$ns" in "("*", 1)") pass "pid namespace: (host pid, nspid) = $ns" ;; *) fail "nspid: $ns" ;; esac
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"

# 3.15 finds thread states through the thread list (no autoTSSkey): four threads, within 10%
prof="$WORK/t.lsprof"
LS_TRUTH="$inside/truth.json" "$LS" -q --mode cpu --profile "$prof" -o "$WORK/t.html" -- \
	chroot "$root" /usr/bin/python3.15 "$inside/threads4.py" 6000000 || fail "3.15 threads: exit $?"
j=$(json_of "$prof")
out=$("$PYQ" - "$j" "$root$inside/truth.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
for n, used in sorted(truth.items()):
    got = sum(l["total_time_s"] for l in d["lines"] if l["function"] == n)
    r = got / used
    print("%s %s: %.3fs of %.3fs (x%.3f)" % ("ok" if abs(r - 1) <= 0.10 else "FAIL", n, got, used, r))
PYEOF
)
while read -r st rest; do [ "$st" = ok ] && pass "3.15 threads $rest" || fail "3.15 threads $rest"; done <<<"$out"
finish
