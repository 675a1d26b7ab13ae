#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every cmocka unit-test binary given; fails if any fails.
set -u
fail=0
for t in "$@"; do
	echo "== $t"
	if ! "$t"; then
		echo "FAILED: $t"
		fail=1
	fi
done
exit $fail
