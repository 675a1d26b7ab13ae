// SPDX-License-Identifier: MIT
/*
 * Spark event reader (report/spark*.c): the input is an event log's text, one event per line;
 * read, folded into actions with their plan steps, matched against an empty profile and written
 * as the report's JSON.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "spark.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ls_model m = {0};
	struct ls_spark *s = ls_spark__new();
	const char *p = (const char *)data, *end = p + size;
	int app;
	json_t *j;

	if (!s)
		return 0;
	app = ls_spark__begin_app(s, "fuzz", "plain");
	while (app >= 0 && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (ls_spark__event(s, app, p, n))
			break;
		p += n + 1;
	}
	if (app >= 0 && !ls_spark__finish(s)) {
		ls_spark__match(s, &m);
		j = ls_spark__json(s, &m, true);
		free(json_dumps(j, 0));
		json_decref(j);
		j = ls_spark__json(s, &m, false);
		json_decref(j);
	}
	ls_spark__free(s);
	return 0;
}
