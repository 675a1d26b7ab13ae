#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Size check (STYLE.md, "Files and names"): C files under bpf/ userspace/ report/ gpu/ python-usdt/
# over MAX_FILE lines, C functions there over MAX_FUNC lines, and top-level JS functions in
# report/assets/js/*.js over MAX_FUNC lines. Prints one line per finding; exits 1 when any finding
# is not exempt. tests/ is not checked.
#
# A C function is found as clang-format writes kernel style: it starts at the last line at column 0
# before a `{` alone at column 0 (its signature) and ends at the next `}` at column 0. A JS function
# is a `function name(` at column 0 up to the next `}` at column 0.
#
# Usage: tests/lint/sizes.sh [-a]   (-a: print exempt findings too, marked "(exempt)")
set -u
cd "$(dirname "$0")/../.." || exit 2

MAX_FILE=${MAX_FILE:-800}
MAX_FUNC=${MAX_FUNC:-150}

# Exemptions, each with its reason: a path glob exempts the file and its functions, PATH:NAME one
# function. Generated sources live in .output/ and are not checked (only git's files are); a
# generated file that is committed goes here.
EXEMPT=()

all=0
[ "${1:-}" = "-a" ] && all=1

# exempt KEY FILE: KEY is FILE or FILE:FUNCTION
exempt() {
	local p
	for p in "${EXEMPT[@]}"; do
		# shellcheck disable=SC2053 # glob match on purpose
		[[ $2 == $p || $1 == $p ]] && return 0
	done
	return 1
}

# Each finding as FILE<tab>KEY<tab>MESSAGE.
findings() {
	git ls-files -- 'bpf/*.[ch]' 'userspace/*.[ch]' 'report/*.[ch]' 'gpu/*.[ch]' \
		'python-usdt/*.[ch]' | while read -r f; do
		[ -f "$f" ] || continue
		awk -v f="$f" -v maxfile="$MAX_FILE" -v maxfunc="$MAX_FUNC" '
			# the last line at column 0 that can start a declaration
			/^[A-Za-z_]/ { sig = FNR; sigtext = $0 }
			/^\{/ && sig { start = sig; text = sigtext; infn = 1; next }
			/^\}/ && infn {
				n = FNR - start + 1
				if (n > maxfunc) {
					name = text
					sub(/\(.*/, "", name)
					sub(/.*[ *]/, "", name)
					printf "%s\t%s:%s\t%s:%d: function %s() is %d lines (max %d)\n",
						f, f, name, f, start, name, n, maxfunc
				}
				infn = 0
				sig = 0
			}
			END {
				if (FNR > maxfile)
					printf "%s\t%s\t%s: %d lines (max %d)\n", f, f, f, FNR, maxfile
			}
		' "$f"
	done
	git ls-files -- 'report/assets/js/*.js' | while read -r f; do
		awk -v f="$f" -v maxfunc="$MAX_FUNC" '
			/^(async[ \t]+)?function[ \t*]/ {
				name = $0
				sub(/^(async[ \t]+)?function[ \t*]*/, "", name)
				sub(/[ \t]*\(.*/, "", name)
				start = FNR
				infn = !($0 ~ /\{/ && $0 ~ /\}[ \t;]*$/) # not a one-line function
				next
			}
			/^\}/ && infn {
				n = FNR - start + 1
				if (n > maxfunc)
					printf "%s\t%s:%s\t%s:%d: function %s() is %d lines (max %d)\n",
						f, f, name, f, start, name, n, maxfunc
				infn = 0
			}
		' "$f"
	done
}

bad=0
while IFS=$'\t' read -r file key msg; do
	if exempt "$key" "$file"; then
		[ $all = 1 ] && echo "$msg (exempt)"
	else
		echo "$msg"
		bad=1
	fi
done < <(findings)
if [ $bad = 1 ]; then
	echo "sizes: split the files and functions above (or exempt them in $0, with the reason)" >&2
	exit 1
fi
exit 0
