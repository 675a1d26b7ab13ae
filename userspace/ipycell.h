/* SPDX-License-Identifier: MIT */
/*
 * IPython cell names. ipykernel compiles every cell under <tmp>/ipykernel_<pid>/<hash>.py, a file
 * that does not exist: <hash> is murmur2_x86 (seed 0xC70F6907, decimal) of the raw cell text as
 * the kernel received it (ipykernel/compiler.py get_file_name). Pure functions, thread-safe.
 */
#ifndef LS_IPYCELL_H
#define LS_IPYCELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LS_IPYCELL_SEED 0xC70F6907u

/* Whether path names an ipykernel cell; *kpid (the kernel's own pid) and *hash when it does. */
bool ls_ipycell__parse(const char *path, int *kpid, uint32_t *hash);

/*
 * Whether path is an IPython shell's cell name, <ipython-input-N-HASH> (IPython's CachingCompiler,
 * the terminal and kernels without ipykernel's compiler): *number is N, the cell's execution
 * count, and *sha48 the 12 hex digits of HASH, the first 48 bits of the SHA-1 of the transformed
 * text (the code IPython compiled).
 */
bool ls_ipycell__parse_input(const char *path, int *number, uint64_t *sha48);
/* The first 48 bits of the SHA-1 of len bytes; 0 when it cannot be computed. */
uint64_t ls_ipycell__sha48(const void *data, size_t len);
/* Like ls_ipycell__verify() for a <ipython-input-N-HASH> name's sha48; -ENOMEM too. */
int ls_ipycell__verify_sha48(const char *text, size_t len, uint64_t sha48);

/* murmur2_x86 of len bytes, as ipykernel computes it over the cell's UTF-8. */
uint32_t ls_ipycell__murmur2(const void *data, size_t len, uint32_t seed);

/*
 * Whether text is the cell that hashes to hash. IPython's history keeps the cell with its trailing
 * newlines stripped: the text with up to LS_IPYCELL_MAX_NL newlines added back also matches. The
 * number of newlines that had to be added, or -1 when it is not that cell.
 */
#define LS_IPYCELL_MAX_NL 4
int ls_ipycell__verify(const char *text, size_t len, uint32_t hash);
/* The hashes of text with 0..LS_IPYCELL_MAX_NL newlines added: 0, or -ENOMEM. */
int ls_ipycell__hashes(const char *text, size_t len, uint32_t out[LS_IPYCELL_MAX_NL + 1]);

/* text with nl newlines added (the cell as the kernel hashed it), NUL-terminated; NULL: -ENOMEM */
char *ls_ipycell__with_newlines(const char *text, size_t len, int nl, size_t *out);
/* Lines of text (1 + its newlines) */
int ls_ipycell__count_lines(const char *text, size_t len);

#endif
