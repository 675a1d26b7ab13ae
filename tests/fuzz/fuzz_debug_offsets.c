// SPDX-License-Identifier: MIT
/*
 * _Py_DebugOffsets reader (userspace/pyversions.c): 4 bytes of Py_Version, 4 of the _PyRuntime
 * symbol size, then the first bytes of _PyRuntime as a target's memory would hold them.
 */
#include <stdint.h>
#include <string.h>
#include "pyversions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ls_pylayout layout;
	struct ls_pyver info;
	uint32_t version, rsize;
	char buf[32];

	if (size < 8)
		return 0;
	memcpy(&version, data, 4);
	memcpy(&rsize, data + 4, 4);
	/* the versions this build knows, so that the blob, not the version check, is exercised */
	if (version >> 24 != 3 || ((version >> 16) & 0xff) < 11 || ((version >> 16) & 0xff) > 15)
		version = 0x030b0000 + ((version % 5) << 16) + (version & 0xffff);
	ls_pyversions__resolve(version, data + 8, size - 8, rsize, &layout, &info);
	ls_pyversions__format(version, buf, sizeof(buf));
	return 0;
}
