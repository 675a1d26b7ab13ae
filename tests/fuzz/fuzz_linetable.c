// SPDX-License-Identifier: MIT
/* co_linetable decoder (userspace/linetable.c): 4 bytes of co_firstlineno, then the table. */
#include <stdint.h>
#include <string.h>
#include "linetable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int32_t first;
	int lines[256], nearest, n;

	if (size < 4)
		return 0;
	memcpy(&first, data, 4);
	data += 4;
	size -= 4;
	n = ls_linetable__decode(data, size, first, lines, 256);
	for (int unit = -1; unit <= (n > 0 ? n : 0) && unit < 300; unit++)
		ls_linetable__line(data, size, first, unit, &nearest);
	return 0;
}
