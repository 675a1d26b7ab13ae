# SPDX-License-Identifier: MIT
# Shared by tests/bpf/test_trace*.sh: root check, the built artefacts, the interpreters to test,
# a scratch directory ($tmp, removed at exit) and the failure flag ($fail).
if [ "$(id -u)" != 0 ]; then
	echo "$(basename "$0"): needs root (BPF programs, uprobes); run as root" >&2
	exit 1
fi
TRACE_LOADER=.output/tests/bpf/trace_loader
TRACE_SITE=.output/python-usdt/site
if [ ! -x "$TRACE_LOADER" ] || [ ! -f "$TRACE_SITE/sitecustomize.py" ]; then
	echo "$(basename "$0"): not built; run: make pyusdt $TRACE_LOADER" >&2
	exit 1
fi
TRACE_PYTHONS=""
for py in /usr/bin/python3.11 /root/.pyenv/versions/3.11.7/bin/python3 \
	/root/.pyenv/versions/3.12.1/bin/python3 /root/.pyenv/versions/3.13.0/bin/python3; do
	if [ ! -x "$py" ]; then
		echo "$(basename "$0"): $py is missing (setup.sh and the pyenv builds provide it)" >&2
		exit 1
	fi
	TRACE_PYTHONS="$TRACE_PYTHONS $py"
done

# --usdt for every build in the site directory
trace_usdt_args() {
	local so
	for so in "$TRACE_SITE"/linescope_usdt*.so; do
		printf -- '--usdt %s ' "$so"
	done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
