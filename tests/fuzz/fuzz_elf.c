// SPDX-License-Identifier: MIT
/* ELF reader (userspace/elffile.c): the input is the file, in a memfd as a mapped image would be.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elffile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ls_elf *elf;
	uint64_t v, n;
	uint8_t id[64], buf[64];
	struct stat st;
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (ls_elf__open_fd(fd, &elf))
		return 0;
	ls_elf__is_dyn(elf);
	ls_elf__first_load_vaddr(elf);
	v = ls_elf__exec_vaddr(elf);
	ls_elf__stat(elf, &st);
	if (!ls_elf__sym(elf, "_PyRuntime", &v, &n))
		ls_elf__read(elf, v, buf, sizeof(buf));
	ls_elf__sym(elf, "Py_Version", &v, &n);
	if (!ls_elf__section(elf, ".PyRuntime", &v, &n))
		ls_elf__read(elf, v, buf, sizeof(buf));
	ls_elf__read(elf, ls_elf__first_load_vaddr(elf), buf, sizeof(buf));
	ls_elf__needs(elf, "libpython");
	ls_elf__build_id(elf, id, sizeof(id));
	ls_elf__has_sdt(elf, "python");
	ls_elf__free(elf);
	return 0;
}
