#!/bin/bash
# SPDX-License-Identifier: MIT
# --push: the profile sent as pprof to a loopback stand-in for Pyroscope's POST /ingest
# (tests/fixtures/ingest_server.py). Checked: a 503 is tried again and the second try lands;
# the request's path and query (name with the host and the job's rank, from/until around the
# run, format, sample rate); the body is byte for byte `report --format pprof` and go tool pprof
# reads it; an --name that tries to add labels is reduced to one label value; a 400 fails at
# once, a server that is not there after five tries, both with one line and exit 75 while the
# profile and report are still written; `push PROFILE URL` sends a stored one; --tenant is the
# X-Scope-OrgID header of every try, and one that could break the header is refused; a URL that
# is not http(s) is a usage error.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT

# serve MODE DIR: starts the stand-in, sets $srv and $port
serve() {
	mkdir -p "$2"
	"$DEB_PY" "$FIX/ingest_server.py" "$2" "$1" &
	srv=$!
	wait_log "$2/port" "[0-9]" || { fail "the ingest stand-in did not start"; finish; }
	port=$(cat "$2/port")
}
job='import time
t = time.thread_time()
while time.thread_time() - t < 0.3:  # BURN
    pass'

serve retry "$WORK/a"
RANK=3 WORLD_SIZE=4 "$LS" --push "http://127.0.0.1:$port/" --name 'train.cpu},evil={x' --tenant "team-a" \
	--profile "$WORK/a.lsprof" -o "$WORK/a.html" -- "$DEB_PY" -c "$job" 2>"$WORK/a.log"
rc=$?
[ $rc = 0 ] && pass "pushed: $(grep pushed "$WORK/a.log")" || fail "push with one 503: exit $rc, $(tail -2 "$WORK/a.log")"
kill "$srv"; wait "$srv" 2>/dev/null; srv=
"$LS" report "$WORK/a.lsprof" --format pprof -o "$WORK/a.pb.gz" || fail "report --format pprof"
"$PYQ" - "$WORK/a" "$(hostname)" <<'PYEOF' | check_lines
import json, re, sys, time
d, host = sys.argv[1], sys.argv[2]
reqs = [json.loads(l) for l in open(d + "/requests.jsonl")]
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
say(len(reqs) == 2, "%d requests: the 503 was tried again, once" % len(reqs))
q = reqs[-1]["query"]
one = {k: v[0] for k, v in q.items() if len(v) == 1}
label = re.sub(r"[^A-Za-z0-9._-]", "_", host)
want = "%s{host=%s,rank=3}" % (re.sub(r"[^A-Za-z0-9._-]", "_", "train.cpu},evil={x"), label)
say(reqs[-1]["path"] == "/ingest" and one.get("name") == want,
    "path %s, name %s (want %s)" % (reqs[-1]["path"], one.get("name"), want))
now = time.time()
f, u = int(one.get("from", 0)), int(one.get("until", 0))
say(now - 120 < f < u <= now + 1, "from %d until %d, now %d" % (f, u, now))
say(one.get("format") == "pprof" and one.get("sampleRate") == "999" and one.get("spyName") == "linescope-bpf",
    "format %s, sampleRate %s, spyName %s" % (one.get("format"), one.get("sampleRate"), one.get("spyName")))
say(reqs[-1]["content_type"] == "multipart/form-data", "content type %s" % reqs[-1]["content_type"])
say([r["tenant"] for r in reqs] == ["team-a"] * 2, "tenant header of each try: %s" % [r["tenant"] for r in reqs])
PYEOF
cmp -s "$WORK/a/profile-2.pprof" "$WORK/a.pb.gz" && pass "the body is the profile's pprof export, byte for byte" ||
	fail "the body ($(stat -c %s "$WORK/a/profile-2.pprof" 2>/dev/null) bytes) is not report --format pprof ($(stat -c %s "$WORK/a.pb.gz") bytes)"
if go tool pprof -top -lines -sample_index=samples "$WORK/a/profile-2.pprof" >"$WORK/top" 2>"$WORK/top.err"; then
	grep -q "BURN\|<string>:3" "$WORK/top" && pass "go tool pprof reads it: $(grep -m1 'of .* total' "$WORK/top")" ||
		fail "go tool pprof: no line 3 of the job: $(head -12 "$WORK/top")"
else
	fail "go tool pprof: $(head -2 "$WORK/top.err")"
fi

# `push PROFILE URL`: a stored profile, the same body
serve ok "$WORK/s"
"$LS" push -q "$WORK/a.lsprof" "http://127.0.0.1:$port/ingest" --name stored || fail "push PROFILE URL exited $?"
kill "$srv"; wait "$srv" 2>/dev/null; srv=
n=$(grep -c '"/ingest"' "$WORK/s/requests.jsonl" 2>/dev/null)
[ "$n" = 1 ] && cmp -s "$WORK/s/profile-1.pprof" "$WORK/a.pb.gz" && grep -q '"stored{host=' "$WORK/s/requests.jsonl" &&
	grep -q '"tenant": null' "$WORK/s/requests.jsonl" &&
	pass "push PROFILE URL: one request to /ingest, the same pprof" || fail "push PROFILE URL: $(cat "$WORK/s/requests.jsonl" 2>/dev/null)"

# refused: one try, one line, exit 75; the profile and report are there anyway
serve refuse "$WORK/b"
"$LS" -q --push "http://127.0.0.1:$port" --profile "$WORK/b.lsprof" -o "$WORK/b.html" -- "$DEB_PY" -c pass 2>"$WORK/b.log"
rc=$?
kill "$srv"; wait "$srv" 2>/dev/null; srv=
[ $rc = 75 ] && [ "$(wc -l <"$WORK/b.log")" = 1 ] && grep -q "after 1 try: HTTP 400: bad profile" "$WORK/b.log" &&
	[ -s "$WORK/b.lsprof" ] && [ -s "$WORK/b.html" ] && pass "refused: exit 75, $(cat "$WORK/b.log")" ||
	fail "refused: exit $rc, $(cat "$WORK/b.log")"

# nobody there: five tries
"$LS" -q --push "http://127.0.0.1:$port" --profile "$WORK/c.lsprof" -o "$WORK/c.html" -- "$DEB_PY" -c pass 2>"$WORK/c.log"
rc=$?
[ $rc = 75 ] && grep -q "failed after 5 tries" "$WORK/c.log" && [ -s "$WORK/c.lsprof" ] &&
	pass "unreachable: exit 75, $(cat "$WORK/c.log")" || fail "unreachable: exit $rc, $(cat "$WORK/c.log")"

"$LS" --push "ftp://127.0.0.1/x" -- "$DEB_PY" -c pass 2>"$WORK/d.log"
rc=$?
[ $rc = 64 ] && pass "not http(s): $(cat "$WORK/d.log")" || fail "ftp:// URL: exit $rc, $(cat "$WORK/d.log")"

# a tenant goes into a header as it is: anything that could end the line or add one is refused
for bad in $'a\r\nX-Evil: 1' "a b" ".." "$(printf 'x%.0s' {1..151})"; do
	"$LS" push "$WORK/a.lsprof" "http://127.0.0.1:1/" --tenant "$bad" 2>"$WORK/t.log"
	rc=$?
	[ $rc = 64 ] && [ "$(wc -l <"$WORK/t.log")" = 1 ] && pass "--tenant $(printf %q "${bad:0:12}"): exit 64, $(cut -c1-90 "$WORK/t.log")" ||
		fail "--tenant $(printf %q "${bad:0:12}"): exit $rc, $(cat "$WORK/t.log")"
done
"$LS" --tenant a -- "$DEB_PY" -c pass 2>"$WORK/t.log"
rc=$?
[ $rc = 64 ] && pass "--tenant without --push: $(cat "$WORK/t.log")" || fail "--tenant without --push: exit $rc, $(cat "$WORK/t.log")"
finish
