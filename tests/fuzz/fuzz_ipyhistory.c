// SPDX-License-Identifier: MIT
/* IPython history reader (userspace/ipyhistory.c): the input is a history.sqlite image. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ipycell.h"
#include "ipyhistory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ls_ipyhist h;
	char why[256], *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size); /* the parser may rewrite the header */
	if (!ls_ipyhistory__parse(buf, size, &h, why, sizeof(why))) {
		for (size_t i = 0; i < h.n; i++)
			ls_ipycell__verify(h.cells[i].text, h.cells[i].len, (uint32_t)i);
		ls_ipyhist_release(&h);
	}
	free(buf);
	return 0;
}
