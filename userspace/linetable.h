/* SPDX-License-Identifier: MIT */
/*
 * CPython 3.11+ location tables (co_linetable, Objects/locations.md): instruction position -> line.
 * Pure functions over the table bytes; exact against code.co_positions().
 */
#ifndef LS_LINETABLE_H
#define LS_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the table into lines[0..n) (one per 2-byte code unit; -1 where the entry has no
 * location). Returns the number of code units the table covers (which may exceed cap: only the
 * first cap are written), or -EINVAL for a malformed table.
 */
int ls_linetable__decode(const uint8_t *tab, size_t len, int firstlineno, int *lines, int cap);

/*
 * Line of code unit `unit`, as CPython's co_positions() gives it: -1 for an entry without a
 * location. *nearest (optional) receives the line to attribute time to: the running line for
 * such entries, co_firstlineno before the first instruction (unit < 0). Returns -ERANGE when the
 * unit lies past the table, -EINVAL for a malformed table.
 */
int ls_linetable__line(const uint8_t *tab, size_t len, int firstlineno, int unit, int *nearest);

#endif
