#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs the browser tests of the HTML report: Debian's chromium driven by playwright-core.
# Usage: tests/report/run.sh DIR  (DIR holds fixture.{json,html} and plain.{json,html}, see
# report/module.mk)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: run.sh DIR}
if [ ! -d "$here/node_modules/playwright-core" ]; then
	echo "test-report: playwright-core is not installed; run ./setup.sh (npm install in tests/report)" >&2
	exit 1
fi
if [ ! -x /usr/bin/chromium ]; then
	echo "test-report: /usr/bin/chromium is missing; run ./setup.sh" >&2
	exit 1
fi
# run.js: the whole report; spark.js: the Spark view (each starts its own browser)
rc=0
node "$here/run.js" "$dir" || rc=1
node "$here/spark.js" "$dir" || rc=1
exit $rc
