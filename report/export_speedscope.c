// SPDX-License-Identifier: MIT
/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json): one "sampled"
 * profile per thread, in nanoseconds, whose samples are stacks of indices into shared.frames,
 * root first. Built with jansson, so every name is escaped as JSON.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "export.h"
#include "hashmap.h"
#include "json.h"

struct frames {
	const struct ls_model *m;
	json_t *list;	       /* shared.frames */
	struct ls_hashmap idx; /* (function, line) -> index in list */
	int64_t *native;       /* per process: index of its "[native]" frame, or -1 */
	int err;
};

static void set(struct frames *F, json_t *o, const char *key, json_t *v)
{
	if (json_object_set_new(o, key, v))
		F->err = -ENOMEM;
}

static void append(struct frames *F, json_t *a, json_t *v)
{
	if (json_array_append_new(a, v))
		F->err = -ENOMEM;
}

static int64_t nomem(struct frames *F)
{
	F->err = -ENOMEM;
	return -1;
}

/* Index of the frame (func, line) in shared.frames, added on first use; -1 on -ENOMEM. */
static int64_t frame_at(struct frames *F, int func, int line)
{
	const struct ls_mfunc *fn = &F->m->funcs[func];
	uint64_t *slot =
		ls_hashmap__slot(&F->idx, (uint64_t)func << 32 | (uint32_t)line, UINT64_MAX);
	json_t *f;

	if (!slot)
		return nomem(F);
	if (*slot != UINT64_MAX)
		return *slot;
	*slot = json_array_size(F->list);
	f = json_object();
	if (!f)
		return nomem(F);
	set(F, f, "name", ls_json__str(fn->qualname));
	set(F, f, "file", ls_json__name(F->m->files[fn->file].path));
	set(F, f, "line", json_integer(line));
	append(F, F->list, f);
	return F->err ? -1 : (int64_t)*slot;
}

static int64_t native_at(struct frames *F, int proc)
{
	char name[512];
	json_t *f;

	if (F->native[proc] >= 0)
		return F->native[proc];
	ls_export__native_name(F->m, proc, name, sizeof(name));
	f = json_object();
	if (!f)
		return nomem(F);
	F->native[proc] = json_array_size(F->list);
	set(F, f, "name", ls_json__str(name));
	append(F, F->list, f);
	return F->err ? -1 : F->native[proc];
}

/* The stack of a row, root first. */
static json_t *stack_of(struct frames *F, const struct ls_export_row *r)
{
	const struct ls_mstacks *s = F->m->stacks;
	const struct ls_mstack *st = &s->stacks[r->stack];
	json_t *a = json_array();

	if (!a)
		return NULL;
	if (!st->depth)
		append(F, a, json_integer(native_at(F, s->threads[r->thread].proc)));
	for (int i = st->depth - 1; i >= 0; i--)
		append(F, a, json_integer(frame_at(F, st->frames[i].func, st->frames[i].line)));
	return a;
}

static json_t *profile_of(struct frames *F, const struct ls_mthread *t)
{
	const struct ls_mproc *p = &F->m->procs[t->proc];
	char *comm = ls_export__name(p->comm ? p->comm : "?", true),
	     *name = ls_export__name(t->name ? t->name : "?", true), *title = NULL;
	json_t *o = json_object();

	if (comm && name &&
	    asprintf(&title, "%s (pid %d): %s (tid %d)", comm, p->pid, name, t->tid) < 0)
		title = NULL;
	if (!o || !title) {
		F->err = -ENOMEM;
	} else {
		set(F, o, "type", json_string("sampled"));
		set(F, o, "name", ls_json__str(title));
		set(F, o, "unit", json_string("nanoseconds"));
		set(F, o, "startValue", json_integer(0));
		set(F, o, "samples", json_array());
		set(F, o, "weights", json_array());
	}
	free(comm);
	free(name);
	free(title);
	return o;
}

int ls_export__speedscope(FILE *out, const struct ls_model *m)
{
	const struct ls_mstacks *s = m->stacks;
	struct frames F = {.m = m, .list = json_array()};
	json_t *doc = json_object(), *profiles = json_array(), *shared = json_object();
	json_t *cur = NULL, *samples = NULL, *weights = NULL;
	int64_t total = 0, best = -1;
	struct ls_export_row r;
	int cur_thread = -1;

	ls_hashmap_init(&F.idx);
	F.native = malloc((m->nprocs ? m->nprocs : 1) * sizeof(*F.native));
	if (!doc || !profiles || !shared || !F.list || !F.native) {
		F.err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < m->nprocs; i++)
		F.native[i] = -1;
	set(&F, doc, "$schema", json_string("https://www.speedscope.app/file-format-schema.json"));
	set(&F, doc, "exporter", json_string("linescope-bpf " LS_VERSION));
	set(&F, doc, "name", ls_json__name(ls_model__meta(m, "scope") ?: "linescope-bpf profile"));
	for (size_t i = 0; !F.err && ls_export__next(s, &i, &r);) {
		int64_t w = ls_export__row_ns(&r);

		if (!w)
			continue; /* speedscope weighs by time: a sample of no time shows nothing */
		if (r.thread != cur_thread) {
			if (cur) {
				set(&F, cur, "endValue", json_integer(total));
				/* the busiest thread is the one shown first */
				if (total > best) {
					best = total;
					set(&F, doc, "activeProfileIndex",
					    json_integer(json_array_size(profiles) - 1));
				}
			}
			cur = profile_of(&F, &s->threads[r.thread]);
			append(&F, profiles, cur);
			samples = json_object_get(cur, "samples");
			weights = json_object_get(cur, "weights");
			cur_thread = r.thread;
			total = 0;
			if (F.err)
				break;
		}
		append(&F, samples, stack_of(&F, &r));
		append(&F, weights, json_integer(w));
		total += w;
	}
	if (cur && !F.err) {
		set(&F, cur, "endValue", json_integer(total));
		if (total > best)
			set(&F, doc, "activeProfileIndex",
			    json_integer(json_array_size(profiles) - 1));
	}
	set(&F, shared, "frames", json_incref(F.list));
	set(&F, doc, "shared", json_incref(shared));
	set(&F, doc, "profiles", json_incref(profiles));
	if (!F.err && (json_dumpf(doc, out, JSON_COMPACT) || fputc('\n', out) == EOF))
		F.err = -EIO;
cleanup:
	json_decref(doc);
	json_decref(profiles);
	json_decref(shared);
	json_decref(F.list);
	ls_hashmap_release(&F.idx);
	free(F.native);
	return F.err;
}
