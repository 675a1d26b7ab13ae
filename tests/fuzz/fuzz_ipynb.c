// SPDX-License-Identifier: MIT
/* .ipynb reader (userspace/ipynb.c): the input is a notebook file's bytes. */
#include <stdint.h>
#include <string.h>
#include "ipycell.h"
#include "ipynb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ls_ipynb nb;
	char why[256];

	if (ls_ipynb__parse((const char *)data, size, &nb, why, sizeof(why)))
		return 0;
	for (size_t i = 0; i < nb.n; i++)
		ls_ipycell__verify(nb.cells[i].text, nb.cells[i].len, (uint32_t)i);
	ls_ipynb_release(&nb);
	return 0;
}
