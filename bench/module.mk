# SPDX-License-Identifier: MIT
# bench/: benchmarks (not part of `make test`); each prints ratios against a baseline measured in
# the same run.
.PHONY: bench
bench: $(APP) ls-all
	bench/overhead
