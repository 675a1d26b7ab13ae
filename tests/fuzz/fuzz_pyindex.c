// SPDX-License-Identifier: MIT
/*
 * Symbol index (report/pyindex.c and its parser): the input is split at the first "\0\0" into two
 * sources, app.py and lib/mod.py, indexed and resolved against each other.
 */
#include <stdint.h>
#include <string.h>
#include "pyindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ls_pyindex_link *links;
	const struct ls_pyindex_def *defs;
	const char *text = (const char *)data, *sep = memmem(data, size, "\0\0", 2);
	size_t n1 = sep ? (size_t)(sep - text) : size;
	struct ls_pyindex *idx;

	if (ls_pyindex__new(&idx))
		return 0;
	ls_pyindex__add_source(idx, 1, "/src/app.py", text, n1);
	if (sep)
		ls_pyindex__add_source(idx, 2, "/src/lib/mod.py", sep + 2, size - n1 - 2);
	ls_pyindex__resolve(idx);
	for (int s = 1; s <= 2; s++) {
		ls_pyindex__links(idx, s, &links);
		ls_pyindex__defs(idx, s, &defs);
	}
	ls_pyindex__free(idx);
	return 0;
}
