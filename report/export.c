// SPDX-License-Identifier: MIT
/* What the exporters share: rows by (thread, stack) and the names of frames. */
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "export.h"

bool ls_export__next(const struct ls_mstacks *s, size_t *i, struct ls_export_row *row)
{
	size_t k = *i;

	if (k >= s->nsamples)
		return false;
	memset(row, 0, sizeof(*row));
	row->thread = s->samples[k].thread;
	row->stack = s->samples[k].stack;
	/* the kinds of a (thread, stack) are adjacent: samples come by stack id, then kind */
	for (; k < s->nsamples && s->samples[k].thread == row->thread &&
	       s->samples[k].stack == row->stack;
	     k++) {
		const struct ls_msample *x = &s->samples[k];

		row->count += x->count;
		row->ns[x->kind] += x->weight_ns;
	}
	*i = k;
	return true;
}

int64_t ls_export__row_ns(const struct ls_export_row *row)
{
	return row->ns[0] + row->ns[1] + row->ns[2] + row->ns[3];
}

void ls_export__native_name(const struct ls_model *m, int proc, char *buf, size_t len)
{
	const struct ls_mproc *p = &m->procs[proc];
	char comm[4 * 64 + 1];

	ls_escape__name(p->comm ? p->comm : "?", true, comm, sizeof(comm));
	snprintf(buf, len, "[native] %s (pid %d)", comm, p->pid);
}

char *ls_export__name(const char *name, bool controls)
{
	/* every byte becomes at most four ("\xHH") */
	size_t len = 4 * strlen(name) + 1;
	char *s = malloc(len);

	if (s)
		ls_escape__name(name, controls, s, len);
	return s;
}
