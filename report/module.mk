# SPDX-License-Identifier: MIT
# report/: rules for this directory (see the top-level Makefile for the variables it extends).
# Every report/*.c is a library object: the model, writers, tokenizer and symbol index.
LIB_OBJS += $(patsubst report/%.c,$(OUTPUT)/report/%.o,$(wildcard report/*.c))

# --- HTML report front-end (report/assets, html.c, escape.c) ---------------------------------
# The browser code lives in real files: report/assets/js/*.js are concatenated in name order into
# one strict-mode function (.output/report/report.js), and report/gen-assets.sh embeds it with the
# template and the stylesheet through .incbin, so `make` rebuilds the binary when an asset changes.
REPORT_JS_SRCS := $(sort $(wildcard report/assets/js/*.js))
REPORT_ASSETS := report/assets/template.html report/assets/report.css $(OUTPUT)/report/report.js
REPORT_HTML_OBJS := $(OUTPUT)/report/assets.o $(OUTPUT)/report/html.o $(OUTPUT)/report/escape.o
LIB_OBJS += $(REPORT_HTML_OBJS)

$(OUTPUT)/report/report.js: $(REPORT_JS_SRCS) | $(OUTPUT)/report
	$(call msg,CAT,$@)
	$(Q){ printf '/* LineScope-BPF report; generated from report/assets/js. */\n(function () {\n"use strict";\n'; \
		cat $^; printf '})();\n'; } > $@

$(OUTPUT)/report/assets.S: report/gen-assets.sh $(REPORT_ASSETS) | $(OUTPUT)/report
	$(call msg,GEN,$@)
	$(Q)report/gen-assets.sh $(REPORT_ASSETS) > $@

$(OUTPUT)/report/assets.o: $(OUTPUT)/report/assets.S
	$(call msg,AS,$@)
	$(Q)$(CC) -c $< -o $@

# Browser tests: fixtures from make-fixture.py, wrapped into HTML by the real ls_html__write().
REPORT_TEST_DIR := $(OUTPUT)/tests/report
REPORT_MKHTML := $(REPORT_TEST_DIR)/mkhtml
REPORT_FIXTURES := $(REPORT_TEST_DIR)/fixture.html $(REPORT_TEST_DIR)/plain.html

$(REPORT_TEST_DIR):
	$(call msg,MKDIR,$@)
	$(Q)mkdir -p $@

$(REPORT_MKHTML): tests/report/mkhtml.c $(REPORT_HTML_OBJS) report/html.h | $(REPORT_TEST_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(filter %.c %.o,$^) -o $@

$(REPORT_TEST_DIR)/fixture.json: tests/report/make-fixture.py | $(REPORT_TEST_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(PYTHON311) $< -o $@

$(REPORT_TEST_DIR)/plain.json: tests/report/make-fixture.py | $(REPORT_TEST_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(PYTHON311) $< --plain -o $@

$(REPORT_TEST_DIR)/big.json: tests/report/make-fixture.py | $(REPORT_TEST_DIR)
	$(call msg,FIXTURE,$@)
	$(Q)$(PYTHON311) $< --big -o $@

$(REPORT_TEST_DIR)/%.html: $(REPORT_TEST_DIR)/%.json $(REPORT_MKHTML)
	$(call msg,HTML,$@)
	$(Q)$(REPORT_MKHTML) $< $@ "LineScope-BPF test report ($*)"

.PHONY: test-report bench-report-open
TEST_TARGETS += test-report
test-report: $(REPORT_FIXTURES) $(REPORT_FIXTURES:.html=.json)
	$(Q)tests/report/run.sh $(REPORT_TEST_DIR)

bench-report-open: $(REPORT_TEST_DIR)/big.html $(REPORT_TEST_DIR)/fixture.html
	$(Q)bench/report-open $(REPORT_TEST_DIR)/big.html $(REPORT_TEST_DIR)/fixture.html

