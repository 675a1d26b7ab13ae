// SPDX-License-Identifier: MIT
/* Text report. Columns follow perf's: share of the total, then counts, then where. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "gpu_idle.h"
#include "spark.h"
#include "text.h"

static const struct ls_model *sort_model;

void ls_text__put_clean(FILE *out, const char *s, int width)
{
	char buf[4 * 4096 + 1];
	int n = 0;

	ls_escape__name(s ? s : "", true, buf, sizeof(buf));
	for (const char *p = buf; *p && (width < 0 || n < width); p++, n++)
		fputc(*p, out);
	for (; width > 0 && n < width; n++)
		fputc(' ', out);
}

static int by_own_desc(const void *a, const void *b)
{
	const struct ls_mline *x = &sort_model->lines[*(const size_t *)a];
	const struct ls_mline *y = &sort_model->lines[*(const size_t *)b];

	if (x->own_ns != y->own_ns)
		return x->own_ns < y->own_ns ? 1 : -1;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->line < y->line ? -1 : x->line > y->line;
}

void ls_text__put_source(FILE *out, const struct ls_mfile *f, int line, int width)
{
	size_t len;
	const char *p = ls_mfile__line(f, line, &len), *end;

	if (!p)
		return;
	end = p + len;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (int i = 0; p + i < end && i < width; i++)
		fputc((unsigned char)p[i] < 0x20 ? ' ' : p[i], out);
}

/* A line as the report names it: "app.py:12 [pid]", a notebook's "nb.ipynb Cell 2:3 [pid]". */
static void line_loc(const struct ls_model *m, int proc, int file, int line, char *loc, size_t n)
{
	const struct ls_mfile *f = &m->files[file];
	const struct ls_mcell *c = ls_mfile__cell_at(f, line);
	char name[256];

	ls_escape__name(f->name, true, name, sizeof(name));
	if (c && c->nrevs)
		snprintf(loc, n, "%.100s %.60s r%d/%d:%d [%d]", name, c->label, c->rev, c->nrevs,
			 line - c->first + 1, m->procs[proc].pid);
	else if (c)
		snprintf(loc, n, "%.100s %.60s:%d [%d]", name, c->label, line - c->first + 1,
			 m->procs[proc].pid);
	else
		snprintf(loc, n, "%.200s:%d [%d]", name, line, m->procs[proc].pid);
}

#define GPU_IDLE_TOP 5

/* --timeline --gpu: each device's busy share, and the lines most of its idle time went to. */
static void put_gpu_timeline(FILE *out, const struct ls_model *m)
{
	for (size_t i = 0; i < m->ngpu_util; i++) {
		const struct ls_gpu_util *u = &m->gpu_util[i];
		int64_t act = u->t1_ns - u->t0_ns, idle = act - u->busy_ns;

		fprintf(out,
			"#\n# GPU %d: busy %.1f%% of %.3f s (its first work to its last), idle %.3f s"
			" in %lld gaps (longest %.3f s)\n#   kernels %.3f s (NCCL %.3f s), copies %.3f s,"
			" sets %.3f s\n",
			u->ordinal, act ? 100.0 * u->busy_ns / act : 0.0, act / 1e9, idle / 1e9,
			(long long)u->gaps, u->longest_gap_ns / 1e9, u->kernel_ns / 1e9,
			u->nccl_ns / 1e9, u->copy_ns / 1e9, u->set_ns / 1e9);
		if (u->nlines)
			fprintf(out, "#   idle while its launching threads were at:\n");
		for (size_t k = 0; k < u->nlines && k < GPU_IDLE_TOP; k++) {
			const struct ls_gpu_idle_line *l = &u->lines[k];
			char loc[320];

			line_loc(m, l->proc, l->file, l->line, loc, sizeof(loc));
			fprintf(out, "#   %6.1f%% %8.3f s  ",
				idle ? 100.0 * l->idle_ns / idle : 0.0, l->idle_ns / 1e9);
			ls_text__put_clean(out, loc, 40);
			fprintf(out, "  on CPU %.3f s, blocked %.3f s\n", l->cpu_ns / 1e9,
				l->blocked_ns / 1e9);
		}
	}
}

static void put_secs(FILE *out, int64_t start_ms, int64_t end_ms)
{
	if (start_ms > 0 && end_ms >= start_ms)
		fprintf(out, "%8.3f", (end_ms - start_ms) / 1e3);
	else
		fprintf(out, "%8s", "-");
}

/* Spark actions in the order they ran: wall and executor time side by side, never added. */
static void put_spark(FILE *out, const struct ls_model *m)
{
	const struct ls_spark *s = m->spark;

	if (!s || !s->napps)
		return;
	fprintf(out,
		"#\n# Spark: %zu applications, %zu actions (wall s, executor s, status, line)\n",
		s->napps, s->nactions);
	for (size_t i = 0; i < s->nactions; i++) {
		const struct ls_spark_action *x = &s->actions[i];

		fputs("#   ", out);
		ls_text__put_clean(out, x->name, 20);
		fputc(' ', out);
		put_secs(out, x->start_ms, x->end_ms);
		if (x->has_cost)
			fprintf(out, " %9.3f", x->cost.run_ms / 1e3);
		else
			fprintf(out, " %9s", "-");
		fprintf(out, "  %-9s ", ls_spark_status__name(x->status));
		if (x->file >= 0) {
			ls_text__put_clean(out, m->files[x->file].name, -1);
			fprintf(out, ":%d%s", x->line,
				x->match && !strcmp(x->match, "time") ? " (matched by time)" : "");
		} else {
			fputs("no driver line", out);
		}
		fputc('\n', out);
	}
	for (size_t i = 0; i < s->nnotes; i++) {
		fputs("#   note: ", out);
		ls_text__put_clean(out, s->notes[i], -1);
		fputc('\n', out);
	}
}

int ls_text__write(FILE *out, const struct ls_model *m, int top)
{
	const char *status = ls_model__status(m), *detail = ls_model__meta(m, "status_detail");
	int64_t total_ns = 0, lost = ls_model__lost(m);
	size_t *order;
	int shown = 0;

	for (size_t i = 0; i < m->nlines; i++)
		total_ns += m->lines[i].own_ns;
	for (size_t i = 0; i < m->nprocs; i++)
		if (!m->procs[i].python || m->procs[i].native_samples)
			total_ns += m->procs[i].native_samples * (int64_t)m->period_ns;

	fprintf(out, "# %s\n", ls_model__meta(m, "tool") ?: "linescope-bpf");
	fprintf(out, "# Status: %s%s%s%s\n", status ? status : "Failed (recording interrupted)",
		detail ? " (" : "", detail ? detail : "", detail ? ")" : "");
	fprintf(out, "# Collection: %s (%s, %s Hz, %s time)\n",
		ls_model__meta(m, "method") ?: "Sampling",
		ls_model__meta(m, "collector") ?: "bpf-sampling",
		ls_model__meta(m, "frequency_hz") ?: "?", ls_model__meta(m, "mode") ?: "cpu");
	fprintf(out, "# Scope: %s ", ls_model__meta(m, "scope_kind") ?: "");
	ls_text__put_clean(out, ls_model__meta(m, "scope"), -1);
	fputc('\n', out);
	fprintf(out, "# Elapsed: %.3f s, %lld samples, %zu processes, %lld threads, %lld lost",
		m->elapsed_s, (long long)ls_model__kept(m), m->nprocs, (long long)m->threads,
		(long long)lost);
	if (lost)
		fprintf(out, " (%lld ring buffer, %lld unresolved)", (long long)m->lost_ringbuf,
			(long long)m->lost_unresolved);
	if (m->taken >= 0)
		fprintf(out, " of %lld taken", (long long)m->taken);
	fputc('\n', out);
	if (m->ncost_progs) {
		int64_t runs, ns = ls_model__bpf_ns(m, &runs);

		fprintf(out, "# Cost: BPF %.3f s in %lld program runs (%.0f ns each)", ns / 1e9,
			(long long)runs, runs ? (double)ns / runs : 0.0);
		if (m->collector_cpu_ns >= 0)
			fprintf(out, ", collector %.3f s CPU (%.1f%% of one core)",
				m->collector_cpu_ns / 1e9,
				m->elapsed_s > 0 ? m->collector_cpu_ns / 1e9 / m->elapsed_s * 100
						 : 0.0);
		if (m->collector_setup_cpu_ns >= 0)
			fprintf(out, ", %.3f s setting up", m->collector_setup_cpu_ns / 1e9);
		fputc('\n', out);
	}
	if (m->lost_trace_batches)
		fprintf(out, "# Tracing: %lld batches of line events lost (hits undercounted)\n",
			(long long)m->lost_trace_batches);
	if (m->damaged_rows)
		fprintf(out, "# Damaged: %lld profile rows out of range were skipped\n",
			(long long)m->damaged_rows);
	for (size_t i = 0; i < m->nfiles; i++) {
		if (!m->files[i].stale)
			continue;
		fputs("# Stale source: ", out);
		ls_text__put_clean(out, m->files[i].path, -1);
		/* it names the function as its code object does: user text too */
		fputs(": ", out);
		ls_text__put_clean(out, m->files[i].stale, -1);
		fputc('\n', out);
	}
	fprintf(out, "#\n# Processes:\n");
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ls_mproc *p = &m->procs[i];

		fprintf(out, "#   %7d  ", p->pid);
		if (p->host) { /* a merged profile: where, and which rank */
			ls_text__put_clean(out, p->host, 24);
			fputs(p->rank >= 0 ? " " : "  ", out);
		}
		if (p->rank >= 0)
			fprintf(out, "[rank %d]  ", p->rank);
		ls_text__put_clean(out, p->argv ? p->argv : p->comm ? p->comm : "?", 40);
		fprintf(out, "  %8lld samples  %s%s", (long long)p->samples,
			p->python ? "Python " : "", p->python ? p->python : "");
		if (p->python && p->note)
			fputs("; ", out);
		ls_text__put_clean(out, p->note, -1);
		fputc('\n', out);
		/* a process that exec'd: each image with its own samples */
		for (size_t k = 0; p->nexecs > 1 && k < p->nexecs; k++) {
			const struct ls_mexec *x = &p->execs[k];

			fprintf(out, "#     %-5s  ", k ? "exec" : x->how);
			ls_text__put_clean(out, x->argv ? x->argv : x->comm ? x->comm : "?", 38);
			fprintf(out, "  %8lld samples  %s%s\n", (long long)x->samples,
				x->python ? "Python " : "", x->python ? x->python : "");
		}
	}
	put_spark(out, m);
	put_gpu_timeline(out, m);
	fprintf(out, "#\n# %8s %9s %9s %9s  %-32s %-24s %s\n", "Time", "Samples", "Self(s)",
		"Total(s)", "Location", "Function", "Source");
	if (!m->nlines) {
		fprintf(out, "#\n# no Python lines were sampled\n");
		return ferror(out) ? -EIO : 0;
	}
	order = malloc(m->nlines * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < m->nlines; i++)
		order[i] = i;
	sort_model = m;
	qsort(order, m->nlines, sizeof(*order), by_own_desc);
	for (size_t k = 0; k < m->nlines && shown < (top ? top : 40); k++) {
		const struct ls_mline *l = &m->lines[order[k]];
		const struct ls_mfile *f = &m->files[l->file];
		char loc[320];

		if (!l->own_ns)
			break;
		line_loc(m, l->proc, l->file, l->line, loc, sizeof(loc));
		fprintf(out, "  %7.2f%% %9lld %9.3f %9.3f  ",
			total_ns ? 100.0 * l->own_ns / total_ns : 0.0, (long long)l->own_count,
			l->own_ns / 1e9, l->total_ns / 1e9);
		ls_text__put_clean(out, loc, 32);
		fputc(' ', out);
		ls_text__put_clean(out, l->func >= 0 ? m->funcs[l->func].qualname : "?", 24);
		fputc(' ', out);
		ls_text__put_source(out, f, l->line, 80);
		fputc('\n', out);
		shown++;
	}
	free(order);
	return ferror(out) ? -EIO : 0;
}
