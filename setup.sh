#!/bin/bash
# SPDX-License-Identifier: MIT
# Installs everything LineScope-BPF needs to build and test on Debian 12 (run as root); Jupyter
# (ipykernel, nbconvert, nbclient) runs the notebook tests; lz4, zstd and snappy decode Spark event
# logs.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
	echo "setup.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
pkgs=(
	build-essential pkg-config clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
	libsqlite3-dev sqlite3 libjansson-dev libxxhash-dev libcmocka-dev systemtap-sdt-dev
	python3.11 python3.11-dev python3-line-profiler libpython3.11-testsuite bpftrace debootstrap
	chromium clang-format openssl clang-14 libclang-rt-14-dev
	libprotobuf-c-dev protobuf-c-compiler golang-github-google-pprof-dev golang-go
	python3-ipykernel jupyter-nbconvert python3-nbclient python3-notebook python3-nbformat
	libcurl4-openssl-dev libssl-dev liblz4-dev libzstd-dev libsnappy-dev
)
# Node.js may come from nodesource (which bundles npm and conflicts with Debian's npm package).
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Browser tests drive Debian's chromium through playwright-core (no browser download); the
# speedscope export is checked in speedscope's own app, the npm package's built release.
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/tests/report/package.json" ] &&
	{ [ ! -d "$here/tests/report/node_modules/playwright-core" ] ||
		[ ! -d "$here/tests/report/node_modules/speedscope" ]; }; then
	(cd "$here/tests/report" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi
# gpu/ builds against the CUDA 13 headers and tests through libcupti.so.13 (no GPU or driver
# needed); CUDA is not a Debian package, so it is checked, not installed.
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -r "$cuda/include/cupti.h" ] || [ ! -e "$cuda/lib64/libcupti.so.13" ]; then
	echo "setup.sh: CUDA 13 with CUPTI not found under $cuda (need include/cupti.h and" \
		"lib64/libcupti.so.13); install the CUDA toolkit or set CUDA_HOME" >&2
	exit 1
fi
echo "setup.sh: dependencies installed"
