// SPDX-License-Identifier: MIT
/*
 * python-usdt messages come from the traced process: every length and count is checked against
 * the record before use. Batches carry deltas since the thread's previous batch; they are added,
 * and a line whose counts would take a total past int64_t is refused (counted as bad).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "hashmap.h"
#include "linescope.h"
#include "tracerec.h"

struct row {
	struct ls_store_trace v;		 /* totals of the run */
	int64_t base_hits, base_own, base_total; /* --rotate: the totals when the interval began */
	int entry_line; /* native calls rows: the entry line these counts are from */
	bool dirty;
};

struct pstate {
	int64_t proc_id;
	char state[256];
	uint64_t next_seq;
	struct ls_hashmap codes; /* code id -> function id */
};

struct ls_tracerec {
	ls_tracerec_name_fn name;
	void *ctx;
	struct row *rows;
	size_t n, cap;
	struct ls_hashmap index; /* hash of (proc, tid, func, line) -> row */
	struct pstate **procs;
	size_t nprocs;
	struct ls_tracerec_stats st, st_base; /* st_base: st when the interval began */
};

int ls_tracerec__new(ls_tracerec_name_fn name, void *ctx, struct ls_tracerec **out)
{
	struct ls_tracerec *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->name = name;
	t->ctx = ctx;
	ls_hashmap_init(&t->index);
	*out = t;
	return 0;
}

void ls_tracerec__free(struct ls_tracerec *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nprocs; i++) {
		ls_hashmap_release(&t->procs[i]->codes);
		free(t->procs[i]);
	}
	free(t->procs);
	free(t->rows);
	ls_hashmap_release(&t->index);
	free(t);
}

static struct pstate *pstate_of(struct ls_tracerec *t, int64_t proc_id)
{
	struct pstate **v, *p;

	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i]->proc_id == proc_id)
			return t->procs[i];
	v = realloc(t->procs, (t->nprocs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	t->procs = v;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->proc_id = proc_id;
	ls_hashmap_init(&p->codes);
	t->procs[t->nprocs++] = p;
	return p;
}

struct row_probe {
	const struct ls_tracerec *t;
	int64_t proc, func;
	int tid, line;
};

static bool same_row(const void *ctx, uint64_t idx)
{
	const struct row_probe *q = ctx;
	const struct row *r = &q->t->rows[idx];

	return r->v.proc_id == q->proc && r->v.tid == q->tid && r->v.func_id == q->func &&
	       r->v.line == q->line;
}

static struct row *row_of(struct ls_tracerec *t, int64_t proc, int tid, int64_t func, int line)
{
	struct row_probe q = {t, proc, func, tid, line};
	uint64_t key = ls_hash64(proc * 0x9e3779b97f4a7c15ULL ^ ls_hash64(tid)) ^
		       ls_hash64((func << 24) ^ (uint32_t)line),
		 *slot = ls_hashmap__intern(&t->index, key, same_row, &q);
	struct row *r, *v;

	if (!slot)
		return NULL;
	if (*slot != LS_HASHMAP_EMPTY)
		return &t->rows[*slot];
	v = ls_array_grow(t->rows, &t->cap, t->n, sizeof(*v), 256);
	if (!v)
		return NULL;
	t->rows = v;
	r = &t->rows[t->n];
	memset(r, 0, sizeof(*r));
	r->v.proc_id = proc;
	r->v.tid = tid;
	r->v.func_id = func;
	r->v.line = line;
	*slot = t->n++;
	return r;
}

static const char *reason_text(uint32_t reason)
{
	switch (reason) {
	case LS_TR_BUSY:
		return "another tracer holds sys.settrace or every sys.monitoring tool id";
	case LS_TR_FREE_THREADED:
		return "free-threaded builds are not supported";
	case LS_TR_ERROR:
		return "the interpreter refused the tracing hooks";
	default:
		return "unknown reason";
	}
}

static void on_state(struct ls_tracerec *t, struct pstate *p, const struct ls_trace_state *s)
{
	if (s->state == LS_TRACE_ON)
		snprintf(p->state, sizeof(p->state), "on");
	else if (s->state == LS_TRACE_UNAVAILABLE)
		snprintf(p->state, sizeof(p->state), "exact line tracing unavailable: %s",
			 reason_text(s->reason));
	else if (s->state == LS_TRACE_OFF && strcmp(p->state, "on"))
		snprintf(p->state, sizeof(p->state), "off");
}

static void on_code(struct ls_tracerec *t, struct pstate *p, const struct ls_trace_code *c,
		    size_t len)
{
	char *fname, *qname;
	int64_t func;

	if (sizeof(*c) + (size_t)c->filename_len + c->qualname_len > len) {
		t->st.bad++;
		return;
	}
	fname = strndup((const char *)(c + 1), c->filename_len);
	qname = strndup((const char *)(c + 1) + c->filename_len, c->qualname_len);
	if (fname && qname) {
		func = t->name(t->ctx, p->proc_id, fname, qname, c->firstlineno);
		if (func > 0)
			ls_hashmap__set(&p->codes, c->code, func);
	}
	free(fname);
	free(qname);
}

static void on_batch(struct ls_tracerec *t, struct pstate *p, const struct ls_trace_batch *b,
		     size_t len)
{
	const struct ls_trace_line *ln = (const void *)(b + 1);

	if (b->nlines > (len - sizeof(*b)) / sizeof(*ln)) {
		t->st.bad++;
		return;
	}
	t->st.batches++;
	if (b->seq > p->next_seq)
		t->st.lost_batches += b->seq - p->next_seq;
	if (b->seq >= p->next_seq)
		p->next_seq = b->seq + 1;
	for (uint32_t i = 0; i < b->nlines; i++) {
		int64_t hits, own, total;
		uint64_t func;
		struct row *r;

		if (!ls_hashmap__get(&p->codes, ln[i].code, &func)) {
			t->st.bad++; /* a code id never named: its message was lost */
			continue;
		}
		/* counts from the process: none may take a total past int64_t (negative in the
		 * profile) */
		if (ln[i].hits > INT64_MAX || ln[i].own_ns > INT64_MAX ||
		    ln[i].total_ns > INT64_MAX) {
			t->st.bad++;
			continue;
		}
		r = row_of(t, p->proc_id, (int)b->tid, func, ln[i].line);
		if (!r)
			return;
		if (__builtin_add_overflow(r->v.hits, (int64_t)ln[i].hits, &hits) ||
		    __builtin_add_overflow(r->v.own_ns, (int64_t)ln[i].own_ns, &own) ||
		    __builtin_add_overflow(r->v.total_ns, (int64_t)ln[i].total_ns, &total)) {
			t->st.bad++;
			continue;
		}
		r->v.hits = hits;
		r->v.own_ns = own;
		r->v.total_ns = total;
		r->dirty = true;
	}
}

void ls_tracerec__record(struct ls_tracerec *t, int64_t proc_id, const void *data, size_t len)
{
	const struct ls_trace_rec *h = data;
	const void *msg = h + 1;
	const uint32_t *kind = msg;
	struct pstate *p;
	size_t mlen;

	if (len < sizeof(*h) + sizeof(*kind) || h->size > len - sizeof(*h) || proc_id <= 0) {
		t->st.bad++;
		return;
	}
	mlen = h->size;
	p = pstate_of(t, proc_id);
	if (!p)
		return;
	switch (*kind) {
	case LS_TM_STATE:
		if (mlen >= sizeof(struct ls_trace_state))
			on_state(t, p, msg);
		else
			t->st.bad++;
		break;
	case LS_TM_CODE:
		if (mlen >= sizeof(struct ls_trace_code))
			on_code(t, p, msg, mlen);
		else
			t->st.bad++;
		break;
	case LS_TM_BATCH:
		if (mlen >= sizeof(struct ls_trace_batch))
			on_batch(t, p, msg, mlen);
		else
			t->st.bad++;
		break;
	default:
		t->st.bad++;
	}
}

void ls_tracerec__native(struct ls_tracerec *t, int64_t proc_id, int tid, int64_t func_id, int line,
			 uint64_t hits, uint64_t own_ns, int entry_line)
{
	struct row *r = row_of(t, proc_id, tid, func_id, line);

	if (!r || (r->v.hits == (int64_t)hits && r->v.own_ns == (int64_t)own_ns))
		return;
	if (line == LS_TRACE_CALLS) {
		if (r->entry_line && entry_line > r->entry_line)
			return; /* a resumption point, not the start */
		r->entry_line = entry_line;
	}
	r->v.hits = hits;
	r->v.own_ns = own_ns;
	r->v.total_ns = own_ns; /* the native probes do not see callees */
	r->dirty = true;
}

void ls_tracerec__set_state(struct ls_tracerec *t, int64_t proc_id, const char *state)
{
	struct pstate *p = pstate_of(t, proc_id);

	if (p)
		snprintf(p->state, sizeof(p->state), "%s", state);
}

const char *ls_tracerec__state(const struct ls_tracerec *t, int64_t proc_id)
{
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i]->proc_id == proc_id && t->procs[i]->state[0])
			return t->procs[i]->state;
	return NULL;
}

void ls_tracerec__stats(const struct ls_tracerec *t, struct ls_tracerec_stats *st)
{
	st->batches = t->st.batches - t->st_base.batches;
	st->lost_batches = t->st.lost_batches - t->st_base.lost_batches;
	st->bad = t->st.bad - t->st_base.bad;
}

/*
 * Rows keep the run's totals (native rows are set from cumulative counters); a profile gets what
 * they gained since its interval began.
 */
void ls_tracerec__rotate(struct ls_tracerec *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct row *r = &t->rows[i];

		r->base_hits = r->v.hits;
		r->base_own = r->v.own_ns;
		r->base_total = r->v.total_ns;
		r->dirty = false;
	}
	t->st_base = t->st;
}

void ls_tracerec__unflush(struct ls_tracerec *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->rows[i].dirty = true;
}

int ls_tracerec__flush(struct ls_tracerec *t, struct ls_store *store)
{
	for (size_t i = 0; i < t->n; i++) {
		struct row *r = &t->rows[i];
		struct ls_store_trace v = r->v;
		int err;

		if (!r->dirty)
			continue;
		v.hits -= r->base_hits;
		v.own_ns -= r->base_own;
		v.total_ns -= r->base_total;
		/* a row of an earlier interval with nothing new (all are marked by an unflush) */
		if (!v.hits && !v.own_ns && !v.total_ns &&
		    (r->base_hits || r->base_own || r->base_total))
			err = 0;
		else
			err = ls_store__put_trace(store, &v);
		if (err)
			return err;
		r->dirty = false;
	}
	return 0;
}
