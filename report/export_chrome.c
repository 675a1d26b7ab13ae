// SPDX-License-Identifier: MIT
/*
 * Trace Event JSON (the Object Format that Perfetto and chrome://tracing read): per thread, the
 * Python frames as nested slices over time, made of the timeline's ticks (--timeline); off-CPU
 * intervals as a leaf slice of their class under the stack they blocked on; with --gpu, each
 * device stream's kernels, copies and sets as slices on a track of its own, named by the line
 * that launched them; process starts, execs and exits as instant events; RSS readings
 * (--memory) as a counter. Written as a stream:
 * a long timeline has millions of slices, too many for one jansson node each.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "export.h"
#include "json.h"
#include "profile.h"

/* A frame's identity on the timeline: (function, line), or a leaf that names a kind of wait. */
#define KEY_NATIVE   (-1)
#define KEY_WAIT(k)  (-2 - (int64_t)(k))
#define FRAME_KEY(f) ((int64_t)(f)->func << 32 | (uint32_t)(f)->line)

struct open_frame {
	int64_t key;
	int64_t start;
};

struct chrome {
	const struct ls_model *m;
	FILE *out;
	/* per function: "function (file" as a JSON string literal without its closing quote */
	char **func_names;
	int64_t gap_ns; /* ticks this close are one run: the sampling period */
	bool first;
	int err;
};

static const char *const wait_names[] = {
	[LS_CLASS_WAIT] = "[blocked]",
	[LS_CLASS_GIL_WAIT] = "[GIL wait]",
	[LS_CLASS_RUNQ] = "[CPU wait]",
};

/* text as a JSON string literal, escaped like every name (NULL on -ENOMEM) */
static char *quoted(const char *text, bool is_name)
{
	json_t *j = is_name ? ls_json__name(text ? text : "?") : ls_json__str(text ? text : "?");
	char *s = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	json_decref(j);
	return s;
}

/* ns as microseconds, exactly: Trace Event times are in microseconds (a profile's may be < 0) */
static void put_us(struct chrome *C, int64_t ns)
{
	uint64_t u = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	fprintf(C->out, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", u / 1000, (unsigned)(u % 1000));
}

/* Starts an event object: the separator, phase, process and thread. */
static void begin(struct chrome *C, const char *ph, int pid, int tid)
{
	fprintf(C->out, "%s\n{\"ph\":\"%s\",\"pid\":%d,\"tid\":%d", C->first ? "" : ",", ph, pid,
		tid);
	C->first = false;
}

static void put_meta_name(struct chrome *C, const char *what, int pid, int tid, const char *name)
{
	char *q = quoted(name, true);

	if (!q) {
		C->err = -ENOMEM;
		return;
	}
	begin(C, "M", pid, tid);
	fprintf(C->out, ",\"name\":\"%s\",\"args\":{\"name\":%s}}", what, q);
	free(q);
}

static void put_instant(struct chrome *C, int pid, int64_t t, const char *name, const char *arg,
			const char *val)
{
	begin(C, "i", pid, pid);
	fputs(",\"s\":\"p\",\"ts\":", C->out);
	put_us(C, t);
	fprintf(C->out, ",\"name\":\"%s\"", name);
	if (arg)
		fprintf(C->out, ",\"args\":{\"%s\":%s}", arg, val);
	fputc('}', C->out);
}

/* Starts an X event of thread (pid, tid): [start, start + dur]. */
static void begin_slice(struct chrome *C, int pid, int tid, int64_t start, int64_t dur)
{
	begin(C, "X", pid, tid);
	fputs(",\"ts\":", C->out);
	put_us(C, start);
	fputs(",\"dur\":", C->out);
	put_us(C, dur);
}

/* A Python frame's name as the folded stacks have it, "function (file:line)", JSON-quoted. */
static void put_frame_name(struct chrome *C, int func, int line)
{
	fprintf(C->out, "%s:%d)\"", C->func_names[func], line);
}

/* The "[native] COMM (pid P)" frame of process proc, JSON-quoted. */
static void put_native_name(struct chrome *C, int proc)
{
	char name[512], *q;

	ls_export__native_name(C->m, proc, name, sizeof(name));
	q = quoted(name, false);
	if (!q) {
		C->err = -ENOMEM;
		fputs("null", C->out);
		return;
	}
	fputs(q, C->out);
	free(q);
}

/* The slice of one frame, [start, end] of thread (proc, tid). */
static void put_slice(struct chrome *C, int proc, int tid, int64_t key, int64_t start, int64_t end)
{
	if (end <= start)
		return;
	begin_slice(C, C->m->procs[proc].pid, tid, start, end - start);
	if (key >= 0) {
		fputs(",\"cat\":\"python\",\"name\":", C->out);
		put_frame_name(C, (int)(key >> 32), (int)(uint32_t)key);
	} else if (key == KEY_NATIVE) {
		fputs(",\"cat\":\"native\",\"name\":", C->out);
		put_native_name(C, proc);
	} else {
		fprintf(C->out, ",\"cat\":\"off-cpu\",\"name\":\"%s\"", wait_names[-2 - key]);
	}
	fputc('}', C->out);
}

/*
 * The ticks of one thread, [*i, end of the thread), as nested slices: a frame's slice lasts as
 * long as consecutive ticks hold it at the same depth, across gaps shorter than a period (the
 * thread ran, or waited too briefly for the timeline, in between).
 */
static void put_thread(struct chrome *C, size_t *i, struct open_frame *open, int64_t *keys)
{
	const struct ls_mstacks *s = C->m->stacks;
	const struct ls_mthread *th = &s->threads[s->ticks[*i].thread];
	int thread = s->ticks[*i].thread, nopen = 0;
	int64_t last_end = 0;
	size_t k = *i;

	for (; k < s->nticks && s->ticks[k].thread == thread; k++) {
		const struct ls_mtick *t = &s->ticks[k];
		const struct ls_mstack *st = &s->stacks[t->stack];
		int64_t start = t->t_ns - t->dur_ns;
		int n = 0, same = 0;

		if (!st->depth)
			keys[n++] = KEY_NATIVE;
		for (int f = st->depth - 1; f >= 0; f--)
			keys[n++] = FRAME_KEY(&st->frames[f]);
		if (t->kind != LS_CLASS_CPU)
			keys[n++] = KEY_WAIT(t->kind);
		if (nopen && start > last_end + C->gap_ns)
			same = 0; /* a gap: everything open ends where the last tick did */
		else
			while (same < n && same < nopen && open[same].key == keys[same])
				same++;
		while (nopen > same) {
			nopen--;
			put_slice(C, th->proc, th->tid, open[nopen].key, open[nopen].start,
				  last_end);
		}
		if (start < last_end)
			start = last_end; /* ticks of two CPUs' timers may overlap */
		for (; nopen < n; nopen++)
			open[nopen] = (struct open_frame){.key = keys[nopen], .start = start};
		if (t->t_ns > last_end)
			last_end = t->t_ns;
	}
	while (nopen > 0) {
		nopen--;
		put_slice(C, th->proc, th->tid, open[nopen].key, open[nopen].start, last_end);
	}
	*i = k;
}

/* A GPU stream's track in its process: a tid no thread can have (pids stop at 2^22). */
#define GPU_TID(k) (0x40000000 + (k))

/*
 * The line that launched device work, "function (file:line)" JSON-quoted: the stack's innermost
 * project frame, as the report's Time charges it (the innermost frame when none is); the
 * "[native] ..." frame for a launch without a Python frame; "(launch not seen)".
 */
static void put_launcher(struct chrome *C, const struct ls_mgpu_span *g)
{
	const struct ls_mstack *st = &C->m->stacks->stacks[g->stack];
	const struct ls_mframe *f = st->depth ? &st->frames[0] : NULL;

	for (int i = 0; i < st->depth; i++)
		if (ls_mfile__project(&C->m->files[C->m->funcs[st->frames[i].func].file])) {
			f = &st->frames[i];
			break;
		}
	if (f)
		put_frame_name(C, f->func, f->line);
	else if (g->unseen)
		fputs("\"(launch not seen)\"", C->out);
	else
		put_native_name(C, g->proc);
}

/*
 * The device work of one process, by (device, stream) from *i. Work on one stream runs in
 * order; a span that starts before the previous one ended (a graph's work, summed) is moved
 * after it, so that the track's slices never overlap.
 */
static void put_gpu_streams(struct chrome *C, size_t *i)
{
	static const char *const kinds[] = {"?", "kernel", "memcpy", "memset"};
	const struct ls_mstacks *s = C->m->stacks;
	int proc = s->gpu_spans[*i].proc, pid = C->m->procs[proc].pid, track = -1;
	int64_t end = 0;
	size_t k = *i;

	for (; !C->err && k < s->ngpu_spans && s->gpu_spans[k].proc == proc; k++) {
		const struct ls_mgpu_span *g = &s->gpu_spans[k];
		int64_t start = g->t_ns;
		char *name;

		if (track < 0 || g->device != s->gpu_spans[k - 1].device ||
		    g->stream != s->gpu_spans[k - 1].stream) {
			char title[64];

			track++;
			end = 0;
			snprintf(title, sizeof(title), "GPU %d stream %d", g->device, g->stream);
			put_meta_name(C, "thread_name", pid, GPU_TID(track), title);
			begin(C, "M", pid, GPU_TID(track));
			fprintf(C->out,
				",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%d}}",
				1000000 + track);
		}
		if (start < end)
			start = end;
		name = quoted(g->name ?: kinds[g->kind], false);
		if (!name) {
			C->err = -ENOMEM;
			break;
		}
		begin_slice(C, pid, GPU_TID(track), start, g->dur_ns);
		fprintf(C->out,
			",\"cat\":\"gpu\",\"name\":%s,\"args\":{\"kind\":\"%s\",\"launched from\":",
			name, kinds[g->kind]);
		put_launcher(C, g);
		fprintf(C->out, ",\"bytes\":%" PRId64 ",\"records\":%" PRId64 "}}", g->bytes,
			g->count);
		free(name);
		end = start + g->dur_ns;
	}
	*i = k;
}

static void put_processes(struct chrome *C)
{
	const struct ls_model *m = C->m;
	const struct ls_mstacks *s = m->stacks;
	char val[32];

	for (size_t i = 0; !C->err && i < m->nprocs; i++) {
		const struct ls_mproc *p = &m->procs[i];
		char *title = NULL;

		char rank[32] = "";

		if (p->rank >= 0)
			snprintf(rank, sizeof(rank), ", rank %d", p->rank);
		if (asprintf(&title, "%s (pid %d%s)", p->argv && *p->argv ? p->argv : p->comm ?: "?",
			     p->pid, rank) < 0) {
			C->err = -ENOMEM;
			break;
		}
		put_meta_name(C, "process_name", p->pid, p->pid, title);
		free(title);
		if (p->start_ns >= 0)
			put_instant(C, p->pid, p->start_ns, "process start", NULL, NULL);
		for (size_t x = 1; x < p->nexecs; x++) {
			char *q = quoted(p->execs[x].argv ?: p->execs[x].exe, true);

			if (!q) {
				C->err = -ENOMEM;
				break;
			}
			if (p->execs[x].start_ns >= 0)
				put_instant(C, p->pid, p->execs[x].start_ns, "exec", "command", q);
			free(q);
		}
		if (p->end_ns >= 0) {
			snprintf(val, sizeof(val), "%d", p->exit_code);
			put_instant(C, p->pid, p->end_ns, "process exit", "status", val);
		}
	}
	for (size_t i = 0; !C->err && i < s->nthreads; i++) {
		const struct ls_mthread *t = &s->threads[i];

		put_meta_name(C, "thread_name", m->procs[t->proc].pid, t->tid, t->name ?: "?");
	}
	for (size_t i = 0; !C->err && i < m->nrss; i++) {
		const struct ls_mrss *r = &m->rss[i];
		int pid = m->procs[r->proc].pid;

		for (size_t k = 0; k < r->n; k++) {
			begin(C, "C", pid, pid);
			fputs(",\"name\":\"RSS\",\"ts\":", C->out);
			put_us(C, r->t_ns[k]);
			fprintf(C->out, ",\"args\":{\"MiB\":%.3f}}", r->rss[k] / 1048576.0);
		}
	}
}

static void put_other_data(struct chrome *C)
{
	const struct ls_mstacks *s = C->m->stacks;
	char *scope = quoted(ls_model__meta(C->m, "scope") ?: "", true);

	if (!scope) {
		C->err = -ENOMEM;
		return;
	}
	fprintf(C->out,
		"\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"exporter\":\"linescope-bpf %s\","
		"\"scope\":%s,\"timeline\":%s,\"ticks\":%zu,\"ticks_refused\":%" PRId64
		",\"gpu_spans\":%zu,\"gpu_spans_refused\":%" PRId64 ",\"note\":\"%s\"}}\n",
		LS_VERSION, scope, s->timeline ? "true" : "false", s->nticks, s->ticks_bad,
		s->ngpu_spans, s->gpu_spans_bad,
		s->timeline ? "times are microseconds from the start of the recording"
			    : "recorded without --timeline: processes and memory only");
	free(scope);
}

int ls_export__chrome(FILE *out, const struct ls_model *m)
{
	const struct ls_mstacks *s = m->stacks;
	const char *hz = ls_model__meta(m, "frequency_hz");
	struct chrome C = {.m = m, .out = out, .first = true};
	struct open_frame *open = NULL;
	int64_t *keys = NULL;
	int maxdepth = 0;

	C.gap_ns = 1000000000LL / (hz && atoi(hz) > 0 ? atoi(hz) : 999);
	C.func_names = calloc(m->nfuncs ?: 1, sizeof(char *));
	for (size_t i = 0; i < s->nstacks; i++)
		if (s->stacks[i].depth > maxdepth)
			maxdepth = s->stacks[i].depth;
	open = malloc((maxdepth + 2) * sizeof(*open));
	keys = malloc((maxdepth + 2) * sizeof(*keys));
	if (!C.func_names || !open || !keys)
		C.err = -ENOMEM;
	for (size_t i = 0; !C.err && i < m->nfuncs; i++) {
		char *text = NULL;

		if (asprintf(&text, "%s (%s", m->funcs[i].qualname,
			     m->files[m->funcs[i].file].path) < 0 ||
		    !(C.func_names[i] = quoted(text, true)))
			C.err = -ENOMEM;
		else
			C.func_names[i][strlen(C.func_names[i]) - 1] = '\0'; /* the closing quote */
		free(text);
	}
	if (!C.err) {
		fputs("{\"traceEvents\":[", out);
		put_processes(&C);
	}
	for (size_t i = 0; !C.err && i < s->nticks;)
		put_thread(&C, &i, open, keys);
	for (size_t i = 0; !C.err && i < s->ngpu_spans;)
		put_gpu_streams(&C, &i);
	if (!C.err)
		put_other_data(&C);
	if (!C.err && ferror(out))
		C.err = -EIO;
	for (size_t i = 0; C.func_names && i < m->nfuncs; i++)
		free(C.func_names[i]);
	free(C.func_names);
	free(open);
	free(keys);
	return C.err;
}
