// SPDX-License-Identifier: MIT
/*
 * Profile reader (report/model*.c through store.c): the input is a whole .lsprof file, loaded and
 * rendered as the report's JSON and as text, compared with itself (`report --diff`) in every
 * diff format, and loaded with its stacks and timeline and exported as pprof, folded stacks,
 * speedscope and a Chrome trace, as `linescope-bpf report` would; then merged with a real profile
 * (`linescope-bpf merge`) and the merged profile loaded and rendered.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "diff.h"
#include "export.h"
#include "json.h"
#include "json_diff.h"
#include "log.h"
#include "merge.h"
#include "model.h"
#include "text.h"
#include "text_diff.h"

/* Every diff format of m against base (NULL out: the text is skipped). */
static void diff(FILE *out, const struct ls_model *m, const struct ls_model *base)
{
	struct ls_diff *d;
	size_t len;

	if (ls_diff__build(m, base, &d))
		return;
	free(ls_json__report_text_diff(m, d, "base", &len));
	json_decref(ls_json__diff(d, "new", "base"));
	if (out)
		ls_text__write_diff(out, d, "new", "base", 40);
	ls_diff__free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the other side of the diffs: a real profile, so that lines move, appear and vanish */
	static struct ls_model *base;
	static char path[64], merged[64];
	struct ls_model *m;
	FILE *f;

	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/ls-fuzz-profile-%d.lsprof", getpid());
		snprintf(merged, sizeof(merged), "/tmp/ls-fuzz-merged-%d.lsprof", getpid());
		ls_log_set_level(LS_LOG_QUIET - 1);
		if (ls_model__load_flags("tests/fuzz/corpus/profile/wall.lsprof", LS_MODEL_STACKS,
					 &base))
			base = NULL;
	}
	f = fopen(path, "w");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	if (!ls_model__load(path, &m)) {
		size_t len;
		char *s = ls_json__report_text(m, &len);
		json_t *j = ls_json__lines(m);
		FILE *null = fopen("/dev/null", "w");

		free(s);
		json_decref(j);
		if (null)
			ls_text__write(null, m, 40);
		diff(null, m, m);
		if (base) {
			diff(null, m, base);
			diff(null, base, m);
		}
		if (null)
			fclose(null);
		ls_model__free(m);
	}
	if (!ls_model__load_flags(path, LS_MODEL_STACKS | LS_MODEL_TIMELINE, &m)) {
		FILE *null = fopen("/dev/null", "w");

		if (null) {
			ls_export__pprof(null, m);
			ls_export__collapsed(null, m, LS_EXPORT_SAMPLES);
			ls_export__collapsed(null, m, LS_EXPORT_TIME);
			ls_export__speedscope(null, m);
			ls_export__chrome(null, m);
			/* with the stacks on both sides: the differential flame graph too */
			if (base)
				diff(NULL, m, base);
			fclose(null);
		}
		ls_model__free(m);
	}
	{
		const char *in[] = {path, "tests/fuzz/corpus/profile/wall.lsprof"};

		if (!ls_merge__run(in, 2, merged, -1, -1) && !ls_model__load(merged, &m)) {
			size_t len;

			free(ls_json__report_text(m, &len));
			ls_model__free(m);
		}
		unlink(merged);
	}
	unlink(path);
	return 0;
}
