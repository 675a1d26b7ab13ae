/* SPDX-License-Identifier: MIT */
/* Arrays that double as they fill. */
#ifndef LS_ARRAY_H
#define LS_ARRAY_H

#include <stdlib.h>

/*
 * Room for element n of items (capacity *cap, starting at `first`): returns items itself, or
 * the moved array (the caller stores it; *cap is updated), or NULL when memory runs out (items
 * and *cap unchanged, still owned by the caller).
 */
static inline void *ls_array_grow(void *items, size_t *cap, size_t n, size_t elem, size_t first)
{
	size_t c;
	void *v;

	if (n < *cap)
		return items;
	c = *cap ? *cap * 2 : first;
	v = realloc(items, c * elem);
	if (v)
		*cap = c;
	return v;
}

#endif
