// SPDX-License-Identifier: MIT
/*
 * Writes a synthetic profile through the real store API, for bench/report: FILES project sources
 * of LINES lines each (plausible Python), one function per 10 lines, every line sampled, each
 * sample's stack a line called from a line of the previous file, so edges, totals and symbols are
 * all exercised; DEPTH > 2 adds callers from further files (FILES x LINES distinct stacks either
 * way, e.g. 1000 x 100 for the flame graph's 100,000).
 * Usage: mkprofile OUT.lsprof [FILES [LINES [DEPTH]]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store.h"

int main(int argc, char **argv)
{
	int files = argc > 2 ? atoi(argv[2]) : 2000, lines = argc > 3 ? atoi(argv[3]) : 100;
	int depth = argc > 4 ? atoi(argv[4]) : 2;
	struct ls_store *s;
	struct ls_store_proc p = {
		.id = 1,
		.pid = 4242,
		.ppid = 1,
		.nspid = 4242,
		.parent_id = -1,
		.spawn_stack = -1,
		.spawn_tid = -1,
		.comm = "python3",
		.argv = "python3 big_app.py",
		.start_ns = 0,
		.end_ns = 60000000000LL,
		.exit_code = 0,
		.python = "3.11.2",
		.python_build = "static",
	};
	char *text, path[128], hash[64];
	int64_t stack = 1;
	uint32_t frames[2 * 64];

	if (argc < 2 || files <= 0 || lines < 10 || depth < 2 || depth > 64) {
		fprintf(stderr, "usage: mkprofile OUT.lsprof [FILES [LINES>=10 [DEPTH 2-64]]]\n");
		return 64;
	}
	if (ls_store__create(argv[1], -1, -1, &s))
		return 1;
	text = malloc((size_t)lines * 80 + 1);
	if (!text)
		return 1;
	ls_store__begin(s);
	ls_store__put_meta(s, "tool", "linescope-bpf " LS_VERSION);
	ls_store__put_meta(s, "status", "Success");
	ls_store__put_meta(s, "method", "Sampling");
	ls_store__put_meta(s, "collector", "bpf-sampling");
	ls_store__put_meta(s, "mode", "wall");
	ls_store__put_meta(s, "scope_kind", "command");
	ls_store__put_meta(s, "scope", "python3 big_app.py");
	ls_store__put_meta(s, "finished", "1");
	ls_store__put_meta_int(s, "frequency_hz", 999);
	ls_store__put_meta_int(s, "period_ns", 1001001);
	ls_store__put_meta_int(s, "elapsed_ns", 60000000000LL);
	ls_store__put_process(s, &p);
	ls_store__put_thread(s, 1, 4242, "python3", -1);
	for (int f = 0; f < files; f++) {
		size_t o = 0;

		/* a module of functions; each body calls the previous module's function */
		for (int l = 0; l < lines; l++) {
			int fn = l / 10;

			if (l % 10 == 0)
				o += sprintf(text + o, "def f%d_%d(x):\n", f, fn);
			else if (l % 10 == 1)
				o += sprintf(text + o, "    y = helper_%d(x) + %d\n", fn, l);
			else if (l % 10 == 9)
				o += sprintf(text + o, "    return y\n");
			else
				o += sprintf(text + o, "    y = (y * %d + x) %% %d  # work\n", l,
					     97 + l);
		}
		snprintf(path, sizeof(path), "/srv/app/pkg%d/mod%d.py", f / 100, f);
		snprintf(hash, sizeof(hash), "%032x", f + 1);
		ls_store__put_source(s, f + 1, hash, text, o);
		ls_store__put_file(s, f + 1, path, f + 1, "python", NULL);
		for (int fn = 0; fn < lines / 10; fn++)
			ls_store__put_function(s, (int64_t)f * (lines / 10) + fn + 1, f + 1, "f",
					       fn * 10 + 1);
		for (int l = 1; l <= lines; l++) {
			int64_t func = (int64_t)f * (lines / 10) + (l - 1) / 10 + 1;
			int fn = (l - 1) / 10;
			struct ls_store_sample x = {
				.proc_id = 1,
				.tid = 4242,
				.stack_id = stack,
				.kind = 0,
				.count = 1 + (l * 7 + f) % 13,
				.weight_ns = 1001001LL * (1 + (l * 7 + f) % 13),
			};

			frames[0] = func;
			frames[1] = l;
			/* callers: the same function of each earlier file, at its call line */
			for (int k = 1; k < depth; k++) {
				int cf = f >= k ? f - k : 0;

				frames[2 * k] = (int64_t)cf * (lines / 10) + fn + 1;
				frames[2 * k + 1] = 2 + fn * 10;
			}
			ls_store__put_stack(s, stack, frames, depth, false);
			ls_store__put_sample(s, &x);
			stack++;
		}
	}
	/* a new store stays under a temporary name until it is published */
	if (ls_store__commit(s) || ls_store__publish(s))
		return 1;
	ls_store__free(s);
	free(text);
	printf("%s: %d files, %d lines, %lld stacks\n", argv[1], files, files * lines,
	       (long long)stack - 1);
	return 0;
}
