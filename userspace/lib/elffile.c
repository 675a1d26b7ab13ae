// SPDX-License-Identifier: MIT
/* ELF access through libelf; the file stays mapped (ELF_C_READ_MMAP) while the object lives. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elffile.h"

struct ls_elf {
	int fd;
	Elf *e;
	GElf_Ehdr ehdr;
};

int ls_elf__open_fd(int fd, struct ls_elf **out)
{
	struct ls_elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return -ENOSYS;
	}
	elf = calloc(1, sizeof(*elf));
	if (!elf) {
		close(fd);
		return -ENOMEM;
	}
	elf->fd = fd;
	elf->e = elf_begin(elf->fd, ELF_C_READ_MMAP, NULL);
	if (!elf->e || elf_kind(elf->e) != ELF_K_ELF || !gelf_getehdr(elf->e, &elf->ehdr)) {
		ls_elf__free(elf);
		return -ENOEXEC;
	}
	*out = elf;
	return 0;
}

int ls_elf__open(const char *path, struct ls_elf **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : ls_elf__open_fd(fd, out);
}

void ls_elf__free(struct ls_elf *elf)
{
	if (!elf)
		return;
	if (elf->e)
		elf_end(elf->e);
	if (elf->fd >= 0)
		close(elf->fd);
	free(elf);
}

bool ls_elf__is_dyn(const struct ls_elf *elf)
{
	return elf->ehdr.e_type == ET_DYN;
}

uint64_t ls_elf__first_load_vaddr(const struct ls_elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf->e, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf->e, i, &ph) && ph.p_type == PT_LOAD)
			return ph.p_vaddr & ~(uint64_t)(ph.p_align ? ph.p_align - 1 : 0xfff);
	}
	return 0;
}

uint64_t ls_elf__exec_vaddr(const struct ls_elf *elf)
{
	uint64_t lo = UINT64_MAX;
	size_t n;

	if (elf_getphdrnum(elf->e, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf->e, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    ph.p_vaddr < lo)
			lo = ph.p_vaddr;
	}
	return lo == UINT64_MAX ? 0 : lo;
}

int ls_elf__exec_range(const struct ls_elf *elf, uint64_t *lo, uint64_t *hi)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t mask = (uint64_t)(page > 0 ? page : 4096) - 1;
	size_t n;

	*lo = UINT64_MAX;
	*hi = 0;
	if (elf_getphdrnum(elf->e, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf->e, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    ph.p_vaddr + ph.p_memsz < ph.p_vaddr ||
		    ph.p_vaddr + ph.p_memsz > UINT64_MAX - mask)
			continue;
		if ((ph.p_vaddr & ~mask) < *lo)
			*lo = ph.p_vaddr & ~mask;
		if (((ph.p_vaddr + ph.p_memsz + mask) & ~mask) > *hi)
			*hi = (ph.p_vaddr + ph.p_memsz + mask) & ~mask;
	}
	return *hi ? 0 : -ENOENT;
}

int ls_elf__stat(const struct ls_elf *elf, struct stat *st)
{
	return fstat(elf->fd, st) ? -errno : 0;
}

static int find_in(Elf_Scn *scn, GElf_Shdr *sh, Elf *e, const char *name, uint64_t *value,
		   uint64_t *size)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
		return -ENOENT;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *s;

		if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		s = elf_strptr(e, sh->sh_link, sym.st_name);
		if (s && !strcmp(s, name)) {
			*value = sym.st_value;
			if (size)
				*size = sym.st_size;
			return 0;
		}
	}
	return -ENOENT;
}

int ls_elf__sym(const struct ls_elf *elf, const char *name, uint64_t *value, uint64_t *size)
{
	/* .dynsym first: small, and present in stripped binaries */
	static const int types[] = {SHT_DYNSYM, SHT_SYMTAB};

	for (int t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf->e, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (unsigned)types[t])
				continue;
			if (!find_in(scn, &sh, elf->e, name, value, size))
				return 0;
		}
	}
	return -ENOENT;
}

int ls_elf__section(const struct ls_elf *elf, const char *name, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf->e, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf->e, scn))) {
		GElf_Shdr sh;
		const char *s;

		if (!gelf_getshdr(scn, &sh))
			continue;
		s = elf_strptr(elf->e, shstrndx, sh.sh_name);
		if (s && !strcmp(s, name)) {
			*addr = sh.sh_addr;
			if (size)
				*size = sh.sh_size;
			return 0;
		}
	}
	return -ENOENT;
}

/* the file offset of [vaddr, vaddr + len) in one PT_LOAD segment's file part */
static int file_offset(const struct ls_elf *elf, uint64_t vaddr, size_t len, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf->e, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf->e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr + len > ph.p_vaddr + ph.p_filesz)
			continue;
		*off = ph.p_offset + (vaddr - ph.p_vaddr);
		return 0;
	}
	return -EFAULT;
}

int ls_elf__file_offset(const struct ls_elf *elf, uint64_t vaddr, uint64_t *off)
{
	return file_offset(elf, vaddr, 1, off);
}

int ls_elf__read(const struct ls_elf *elf, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t off;
	ssize_t r;
	int err = file_offset(elf, vaddr, len, &off);

	if (err)
		return err;
	r = pread(elf->fd, buf, len, off);
	if (r < 0)
		return -errno;
	return r == (ssize_t)len ? 0 : -EFAULT;
}

const char *ls_elf__dyn_str(const struct ls_elf *elf, int64_t tag, const char *prefix)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf->e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag != tag)
				continue;
			s = elf_strptr(elf->e, sh.sh_link, dyn.d_un.d_val);
			if (s && !strncmp(s, prefix, strlen(prefix)))
				return s;
		}
	}
	return NULL;
}

bool ls_elf__needs(const struct ls_elf *elf, const char *prefix)
{
	return ls_elf__dyn_str(elf, DT_NEEDED, prefix) != NULL;
}

/*
 * Calls fn for each note of the SHT_NOTE sections (name and desc point into the mapped file)
 * until it returns true; returns whether one did.
 */
static bool
each_note(const struct ls_elf *elf,
	  bool (*fn)(void *ctx, const GElf_Nhdr *nh, const char *name, const char *desc), void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf->e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0)
			if (fn(ctx, &nh, (const char *)data->d_buf + name_off,
			       (const char *)data->d_buf + desc_off))
				return true;
	}
	return false;
}

static bool is_sdt_of(void *ctx, const GElf_Nhdr *nh, const char *name, const char *desc)
{
	const char *provider = ctx;
	size_t plen = strlen(provider);

	/* stapsdt note: pc, base, semaphore (3 addresses), then "provider\0name\0args" */
	if (nh->n_type != 3 || nh->n_namesz != 8 || memcmp(name, "stapsdt", 8))
		return false;
	return nh->n_descsz > 24 + plen && !memcmp(desc + 24, provider, plen + 1);
}

bool ls_elf__has_sdt(const struct ls_elf *elf, const char *provider)
{
	return each_note(elf, is_sdt_of, (void *)provider);
}

struct build_id {
	uint8_t *buf;
	size_t cap, len;
	const char *desc; /* where it was found */
};

static bool is_build_id(void *ctx, const GElf_Nhdr *nh, const char *name, const char *desc)
{
	struct build_id *b = ctx;

	if (nh->n_type != NT_GNU_BUILD_ID || nh->n_namesz != 4 || memcmp(name, "GNU", 4) ||
	    !nh->n_descsz || nh->n_descsz > b->cap)
		return false;
	memcpy(b->buf, desc, nh->n_descsz);
	b->len = nh->n_descsz;
	b->desc = desc;
	return true;
}

size_t ls_elf__build_id(const struct ls_elf *elf, uint8_t *buf, size_t len)
{
	uint64_t off;

	return ls_elf__build_id_at(elf, buf, len, &off);
}

size_t ls_elf__build_id_at(const struct ls_elf *elf, uint8_t *buf, size_t len, uint64_t *off)
{
	struct build_id b = {.buf = buf, .cap = len};
	size_t size = 0;
	const char *raw = elf_rawfile(elf->e, &size);

	*off = 0;
	each_note(elf, is_build_id, &b);
	/* the note's data points into the mapped file unless libelf had to convert it */
	if (b.len && raw && b.desc >= raw && b.desc + b.len <= raw + size)
		*off = (uint64_t)(b.desc - raw);
	return b.len;
}
