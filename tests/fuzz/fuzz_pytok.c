// SPDX-License-Identifier: MIT
/* Python tokenizer (report/pytok.c): any bytes as a source file. */
#include <stdint.h>
#include <stdlib.h>
#include "pytok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ls_pytok *toks;
	size_t n;

	if (!ls_pytok__all((const char *)data, size, &toks, &n))
		free(toks);
	ls_pytok__utf16_len((const char *)data, size);
	return 0;
}
