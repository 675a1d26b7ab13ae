# SPDX-License-Identifier: MIT
# bench/: benchmarks (not part of `make test`); each prints ratios against a baseline measured in
# the same run.
.PHONY: bench bench-pyindex bench-report bench-asuser
bench: $(APP) ls-all
	bench/overhead

# pyindex: indexing speed of report/pyindex.c (synthetic 2,000 files x 100 lines, then the stdlib)
$(OUTPUT)/bench/pyindex: bench/pyindex.c $(OUTPUT)/liblinescope.a
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(OUTPUT)/liblinescope.a $(LDLIBS) -o $@

bench-pyindex: $(OUTPUT)/bench/pyindex
	$(Q)$(OUTPUT)/bench/pyindex
	$(Q)$(OUTPUT)/bench/pyindex --dir /usr/lib/python3.11

# report: a 2,000-file, 200,000-line stored profile rendered to HTML and opened in Chromium
$(OUTPUT)/bench/mkprofile: bench/mkprofile.c $(OUTPUT)/liblinescope.a
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(OUTPUT)/liblinescope.a $(LDLIBS) -o $@

bench-report: $(APP) $(OUTPUT)/bench/mkprofile
	$(Q)bench/report

# asuser: an open with a target's rights (lib/asuser.c): root's own, one user's in a row, two
# users' alternating
$(OUTPUT)/bench/asuser_open: bench/asuser_open.c $(OUTPUT)/liblinescope.a
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $< $(OUTPUT)/liblinescope.a $(LDLIBS) -o $@

bench-asuser: $(OUTPUT)/bench/asuser_open
	$(Q)$(OUTPUT)/bench/asuser_open
