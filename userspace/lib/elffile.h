/* SPDX-License-Identifier: MIT */
/*
 * Read-only view of an ELF file (libelf): symbols from .dynsym and .symtab, sections, program
 * headers, reads at virtual addresses, SDT notes. Not thread-safe; one owner.
 */
#ifndef LS_ELFFILE_H
#define LS_ELFFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ls_elf;

/* Opens path; -ENOENT/-EACCES from open, -ENOEXEC when it is not a usable ELF file. */
int ls_elf__open(const char *path, struct ls_elf **out);
/* The same from an open descriptor, which the object then owns (closed on failure too). */
int ls_elf__open_fd(int fd, struct ls_elf **out);
void ls_elf__free(struct ls_elf *elf);

/* ET_DYN (PIE executable or shared object) rather than ET_EXEC. */
bool ls_elf__is_dyn(const struct ls_elf *elf);

/* Virtual address of the first PT_LOAD segment, page aligned: subtract it when computing a bias. */
uint64_t ls_elf__first_load_vaddr(const struct ls_elf *elf);

/*
 * Lowest p_vaddr of the executable PT_LOAD segments (unaligned): the kernel's mm->start_code of a
 * process running this executable is that plus the load bias. 0 when there is none.
 */
uint64_t ls_elf__exec_vaddr(const struct ls_elf *elf);

/*
 * The page-aligned span of the executable PT_LOAD segments, as the process's mappings of the
 * file show it at load bias 0: 0, or -ENOENT when there is none.
 */
int ls_elf__exec_range(const struct ls_elf *elf, uint64_t *lo, uint64_t *hi);

/* The opened file's device (userspace encoding), inode and mtime; 0 or -errno. */
struct stat;
int ls_elf__stat(const struct ls_elf *elf, struct stat *st);

/* Symbol value and size, from .dynsym or .symtab; -ENOENT when absent. */
int ls_elf__sym(const struct ls_elf *elf, const char *name, uint64_t *value, uint64_t *size);

/* Section address and size by name; -ENOENT when absent. */
int ls_elf__section(const struct ls_elf *elf, const char *name, uint64_t *addr, uint64_t *size);

/* Copies len bytes at virtual address vaddr from the file's loadable data; -EFAULT when absent. */
int ls_elf__read(const struct ls_elf *elf, uint64_t vaddr, void *buf, size_t len);
/* The file offset of vaddr (in a PT_LOAD segment's file part): 0, or -EFAULT. */
int ls_elf__file_offset(const struct ls_elf *elf, uint64_t vaddr, uint64_t *off);

/* Whether DT_NEEDED names a library whose name starts with prefix. */
bool ls_elf__needs(const struct ls_elf *elf, const char *prefix);
/*
 * The first string of a dynamic entry of tag (DT_NEEDED, DT_RPATH, DT_RUNPATH) that starts with
 * prefix ("" any), in the file's string table (valid while elf is open); NULL when none.
 */
const char *ls_elf__dyn_str(const struct ls_elf *elf, int64_t tag, const char *prefix);

/* The GNU build id (NT_GNU_BUILD_ID) copied into buf; its length, 0 when absent or too long. */
size_t ls_elf__build_id(const struct ls_elf *elf, uint8_t *buf, size_t len);
/* ls_elf__build_id(), and where its bytes lie in the file (*off 0 when that is not known). */
size_t ls_elf__build_id_at(const struct ls_elf *elf, uint8_t *buf, size_t len, uint64_t *off);

/* Whether the file carries SystemTap SDT probes (.note.stapsdt) of the given provider. */
bool ls_elf__has_sdt(const struct ls_elf *elf, const char *provider);

#endif
