// SPDX-License-Identifier: MIT
/*
 * trace_loader: a small stand-alone loader for bpf/pyusdt.bpf.c, used by the trace tests and
 * bench/trace. It launches a command, makes it (and the processes it forks) a target, attaches the
 * python-usdt probes of the given extension builds and/or CPython's native probes, and when the
 * command exits prints what it received, merged per (pid, tid, code, line), as tab-separated rows:
 *
 *	state	PID	STATE	REASON	MECH	HEXVERSION	TOOL
 *	line	PID	TID	FILE	QUALNAME	LINE	HITS	OWN_NS	TOTAL_NS
 *	calls	PID	TID	FILE	QUALNAME	FIRSTLINE	CALLS	TOTAL_NS
 *	thread	PID	TID	BATCHES	ENDED
 *	native	PID	TID	FILE	FUNC	LINE	line|call	HITS	OWN_NS
 *	event	attach|detach	CLOCK_MONOTONIC_SECONDS
 *	stat	NAME	VALUE
 *
 * The decoding here is what userspace/ does for linescope-bpf --trace; messages come from the
 * traced process and are checked like any untrusted input.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "linescope.h"
#include "trace_test.skel.h"

#define MAX_SO 16

struct code_row {
	__u32 pid;
	__u32 id;
	__s32 firstlineno;
	__u32 flags;
	char *file;
	char *qualname;
};

struct line_row {
	__u32 pid;
	__u32 tid;
	__u32 code;
	__s32 line;
	__u64 hits;
	__u64 own_ns;
	__u64 total_ns;
};

struct thread_row {
	__u32 pid;
	__u32 tid;
	__u32 batches;
	__u32 ended;
};

static struct {
	struct code_row *codes;
	size_t ncodes, capcodes;
	struct line_row *lines;
	size_t nlines, caplines;
	struct thread_row *threads;
	size_t nthreads, capthreads;
	FILE *out;
	__u64 bad_msgs;
	__u64 seq_gaps;
	__u32 seq_pid[256];
	__u64 seq_next[256];
	int nseq;
} g;

static int fail(int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "trace_loader: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return err;
}

static void *grow(void *p, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 256;
	p = realloc(p, *cap * sz);
	if (!p) {
		fail(-ENOMEM, "out of memory");
		exit(1);
	}
	return p;
}

static struct thread_row *thread_row(__u32 pid, __u32 tid)
{
	for (size_t i = 0; i < g.nthreads; i++)
		if (g.threads[i].pid == pid && g.threads[i].tid == tid)
			return &g.threads[i];
	g.threads = grow(g.threads, &g.capthreads, g.nthreads, sizeof(*g.threads));
	g.threads[g.nthreads] = (struct thread_row){.pid = pid, .tid = tid};
	return &g.threads[g.nthreads++];
}

static void check_seq(__u32 pid, __u64 seq)
{
	int i;

	for (i = 0; i < g.nseq && g.seq_pid[i] != pid; i++)
		;
	if (i == g.nseq) {
		if (g.nseq == 256)
			return;
		g.nseq++;
		g.seq_pid[i] = pid;
		g.seq_next[i] = 0;
	}
	if (seq != g.seq_next[i])
		g.seq_gaps++;
	g.seq_next[i] = seq + 1;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (!d)
		exit(fail(1, "out of memory"));
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

static void on_msg(const struct ls_trace_rec *r)
{
	const void *m = r + 1;
	__u32 kind;

	if (r->size < sizeof(kind) || r->size > LS_TRACE_MAX_MSG)
		goto bad;
	memcpy(&kind, m, sizeof(kind));
	switch (kind) {
	case LS_TM_STATE: {
		const struct ls_trace_state *s = m;

		if (r->size < sizeof(*s))
			goto bad;
		fprintf(g.out, "state\t%u\t%u\t%u\t%u\t%#x\t%u\n", r->pid, s->state, s->reason,
			s->mech, s->hexversion, s->tool_id);
		return;
	}
	case LS_TM_CODE: {
		const struct ls_trace_code *c = m;
		const char *names = (const char *)(c + 1);

		if (r->size < sizeof(*c) ||
		    r->size != sizeof(*c) + (size_t)c->filename_len + c->qualname_len)
			goto bad;
		g.codes = grow(g.codes, &g.capcodes, g.ncodes, sizeof(*g.codes));
		g.codes[g.ncodes++] = (struct code_row){
			.pid = r->pid,
			.id = c->code,
			.firstlineno = c->firstlineno,
			.flags = c->flags,
			.file = dup_n(names, c->filename_len),
			.qualname = dup_n(names + c->filename_len, c->qualname_len),
		};
		return;
	}
	case LS_TM_BATCH: {
		const struct ls_trace_batch *b = m;
		const struct ls_trace_line *l = (const void *)(b + 1);
		struct thread_row *t;

		if (r->size < sizeof(*b) || r->size != sizeof(*b) + b->nlines * sizeof(*l))
			goto bad;
		check_seq(r->pid, b->seq);
		t = thread_row(r->pid, b->tid);
		t->batches++;
		if (b->flags & (LS_TBF_THREAD_END | LS_TBF_PROCESS_END))
			t->ended = 1;
		for (__u32 i = 0; i < b->nlines; i++) {
			g.lines = grow(g.lines, &g.caplines, g.nlines, sizeof(*g.lines));
			g.lines[g.nlines++] = (struct line_row){
				.pid = r->pid,
				.tid = b->tid,
				.code = l[i].code,
				.line = l[i].line,
				.hits = l[i].hits,
				.own_ns = l[i].own_ns,
				.total_ns = l[i].total_ns,
			};
		}
		return;
	}
	}
bad:
	g.bad_msgs++;
}

static int on_record(void *ctx, void *data, size_t len)
{
	const struct ls_trace_rec *r = data;

	if (len < sizeof(*r) || r->type != LS_REC_TRACE || len < sizeof(*r) + r->size) {
		g.bad_msgs++;
		return 0;
	}
	on_msg(r);
	return 0;
}

static int cmp_u64(__u64 a, __u64 b)
{
	return a < b ? -1 : a > b;
}

static int cmp_line(const void *a, const void *b)
{
	const struct line_row *x = a, *y = b;
	int c;

	if ((c = cmp_u64(x->pid, y->pid)) || (c = cmp_u64(x->tid, y->tid)) ||
	    (c = cmp_u64(x->code, y->code)))
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

static const struct code_row *code_row(__u32 pid, __u32 id)
{
	for (size_t i = 0; i < g.ncodes; i++)
		if (g.codes[i].pid == pid && g.codes[i].id == id)
			return &g.codes[i];
	return NULL;
}

static void print_lines(void)
{
	size_t i, j;

	if (g.nlines) /* qsort(NULL, 0) is undefined (UBSan says so) */
		qsort(g.lines, g.nlines, sizeof(*g.lines), cmp_line);
	for (i = 0; i < g.nlines; i = j) {
		struct line_row sum = g.lines[i];
		const struct code_row *c;

		for (j = i + 1; j < g.nlines && !cmp_line(&g.lines[i], &g.lines[j]); j++) {
			sum.hits += g.lines[j].hits;
			sum.own_ns += g.lines[j].own_ns;
			sum.total_ns += g.lines[j].total_ns;
		}
		c = code_row(sum.pid, sum.code);
		if (sum.line == LS_TRACE_CALLS)
			fprintf(g.out, "calls\t%u\t%u\t%s\t%s\t%d\t%llu\t%llu\n", sum.pid, sum.tid,
				c ? c->file : "?", c ? c->qualname : "?", c ? c->firstlineno : 0,
				(unsigned long long)sum.hits, (unsigned long long)sum.total_ns);
		else
			fprintf(g.out, "line\t%u\t%u\t%s\t%s\t%d\t%llu\t%llu\t%llu\n", sum.pid,
				sum.tid, c ? c->file : "?", c ? c->qualname : "?", sum.line,
				(unsigned long long)sum.hits, (unsigned long long)sum.own_ns,
				(unsigned long long)sum.total_ns);
	}
	for (i = 0; i < g.nthreads; i++)
		fprintf(g.out, "thread\t%u\t%u\t%u\t%u\n", g.threads[i].pid, g.threads[i].tid,
			g.threads[i].batches, g.threads[i].ended);
}

static void native_name(struct trace_test_bpf *skel, __u32 pid, __u64 hash, char *buf, size_t n)
{
	struct ls_native_str_key k = {.pid = pid, .hash = hash};
	char s[LS_NATIVE_STR];

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.native_strs), &k, s)) {
		snprintf(buf, n, "?");
		return;
	}
	s[sizeof(s) - 1] = 0;
	snprintf(buf, n, "%s", s);
}

static void print_native(struct trace_test_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.native_lines);
	struct ls_native_key k, next, *prev = NULL;
	struct ls_native_val v;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		char file[LS_NATIVE_STR], func[LS_NATIVE_STR];

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue;
		native_name(skel, k.pid, k.file, file, sizeof(file));
		native_name(skel, k.pid, k.func, func, sizeof(func));
		fprintf(g.out, "native\t%u\t%u\t%s\t%s\t%d\t%s\t%llu\t%llu\n", k.pid, k.tid, file,
			func, k.line, k.kind == LS_NK_CALL ? "call" : "line",
			(unsigned long long)v.hits, (unsigned long long)v.own_ns);
	}
}

static void print_stats(struct trace_test_bpf *skel)
{
	const struct ls_trace_stats *s = &skel->bss->trace_stats;

	fprintf(g.out, "stat\tmsgs\t%llu\n", (unsigned long long)s->msgs);
	fprintf(g.out, "stat\tnot_target\t%llu\n", (unsigned long long)s->not_target);
	fprintf(g.out, "stat\tbad_size\t%llu\n", (unsigned long long)s->bad_size);
	fprintf(g.out, "stat\tread_fail\t%llu\n", (unsigned long long)s->read_fail);
	fprintf(g.out, "stat\tringbuf_drops\t%llu\n", (unsigned long long)s->ringbuf_drops);
	fprintf(g.out, "stat\tnative_events\t%llu\n", (unsigned long long)s->native_events);
	fprintf(g.out, "stat\tnative_full\t%llu\n", (unsigned long long)s->native_full);
	fprintf(g.out, "stat\tnative_str_fail\t%llu\n", (unsigned long long)s->native_str_fail);
	fprintf(g.out, "stat\tforks\t%llu\n", (unsigned long long)skel->bss->trace_forks);
	fprintf(g.out, "stat\tbad_msgs\t%llu\n", (unsigned long long)g.bad_msgs);
	fprintf(g.out, "stat\tseq_gaps\t%llu\n", (unsigned long long)g.seq_gaps);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !getenv("TRACE_LOADER_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static double g_attached_at = -1, g_detached_at = -1;

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

struct links {
	struct bpf_link *l[3 * MAX_SO + 3];
	int n;
};

static int attach_usdt(struct links *ls, struct bpf_program *prog, pid_t pid, const char *path,
		       const char *provider, const char *name)
{
	struct bpf_link *l = bpf_program__attach_usdt(prog, pid, path, provider, name, NULL);

	if (!l)
		return fail(-errno, "cannot attach %s:%s in %s: %s", provider, name, path,
			    strerror(errno));
	ls->l[ls->n++] = l;
	return 0;
}

static int attach_all(struct trace_test_bpf *skel, struct links *ls, char **sos, int nso,
		      const char *native, pid_t pid)
{
	/*
	 * Before the first probe: attaching it raises the USDT semaphore, and the target may turn
	 * tracing on before the others are attached (a busy machine: a ms or more)
	 */
	g_attached_at = mono_s();
	for (int i = 0; i < nso; i++) {
		/* pid -1: every process that maps this build, including children; BPF filters */
		if (attach_usdt(ls, skel->progs.handle_pyusdt_state, -1, sos[i], "linescope",
				"state") ||
		    attach_usdt(ls, skel->progs.handle_pyusdt_code, -1, sos[i], "linescope",
				"code") ||
		    attach_usdt(ls, skel->progs.handle_pyusdt_batch, -1, sos[i], "linescope",
				"batch"))
			return -1;
	}
	/* the native probes slow every process of that binary down: only the command itself */
	if (native && (attach_usdt(ls, skel->progs.handle_py_line, pid, native, "python", "line") ||
		       attach_usdt(ls, skel->progs.handle_py_entry, pid, native, "python",
				   "function__entry") ||
		       attach_usdt(ls, skel->progs.handle_py_return, pid, native, "python",
				   "function__return")))
		return -1;
	return 0;
}

static void detach_all(struct links *ls)
{
	bool had = ls->n > 0;

	for (int i = 0; i < ls->n; i++)
		bpf_link__destroy(ls->l[i]);
	ls->n = 0;
	/* detached once every link is gone: unregistering a uprobe takes a while */
	if (had && g_detached_at < 0)
		g_detached_at = mono_s();
}

static void usage(void)
{
	fprintf(stderr,
		"usage: trace_loader [-o FILE] [--usdt EXT.so]... [--native PYTHON]\n"
		"                    [--attach-after MS] [--detach-after MS] -- CMD [ARGS...]\n");
	exit(64);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"usdt", required_argument, NULL, 'u'},
		{"native", required_argument, NULL, 'n'},
		{"attach-after", required_argument, NULL, 'a'},
		{"detach-after", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0},
	};
	char *sos[MAX_SO], *native = NULL;
	long attach_after = 0, detach_after = -1;
	struct trace_test_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct links links = {.n = 0};
	struct ls_proc proc = {.flags = LS_PF_PENDING};
	int nso = 0, c, go[2], status = 0, err = 1;
	bool attached = false;
	__u64 t0;
	pid_t pid;

	g.out = stdout;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'u':
			if (nso == MAX_SO)
				usage();
			sos[nso++] = optarg;
			break;
		case 'n':
			native = optarg;
			break;
		case 'a':
			attach_after = atol(optarg);
			break;
		case 'd':
			detach_after = atol(optarg);
			break;
		case 'o':
			g.out = fopen(optarg, "w");
			if (!g.out)
				return fail(1, "cannot write %s: %s", optarg, strerror(errno));
			break;
		default:
			usage();
		}
	}
	if (optind >= argc || (!nso && !native))
		usage();
	if (geteuid() != 0)
		return fail(1, "needs root (BPF, uprobes)");
	libbpf_set_print(libbpf_print);

	skel = trace_test_bpf__open_and_load();
	if (!skel)
		return fail(1, "cannot load BPF programs: %s", strerror(errno));
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_record, NULL, NULL);
	if (!rb) {
		fail(1, "cannot open the ring buffer");
		goto out;
	}
	if (trace_test_bpf__attach(skel)) { /* only the fork tracker auto-attaches */
		fail(1, "cannot attach the fork tracker: %s", strerror(errno));
		goto out;
	}
	if (pipe(go)) {
		fail(1, "pipe: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(126);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "trace_loader: cannot run %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.procs), &(__u32){pid}, &proc, BPF_ANY)) {
		fail(1, "cannot add pid %d to procs", pid);
		kill(pid, SIGKILL);
		goto out;
	}
	if (attach_after == 0) {
		if (attach_all(skel, &links, sos, nso, native, pid)) {
			kill(pid, SIGKILL);
			goto out;
		}
		attached = true;
	}
	t0 = now_ms();
	if (write(go[1], "g", 1) != 1) {
		fail(1, "cannot start the command");
		goto out;
	}
	close(go[1]);
	for (;;) {
		__u64 el = now_ms() - t0;
		pid_t w = waitpid(pid, &status, WNOHANG);

		ring_buffer__poll(rb, 20);
		if (w == pid)
			break;
		if (!attached && attach_after > 0 && el >= (__u64)attach_after) {
			if (attach_all(skel, &links, sos, nso, native, pid)) {
				kill(pid, SIGKILL);
				goto out;
			}
			attached = true;
		}
		if (attached && detach_after >= 0 && el >= (__u64)detach_after) {
			detach_all(&links);
			detach_after = -1;
		}
	}
	while (ring_buffer__poll(rb, 50) > 0)
		;
	print_lines();
	if (g_attached_at >= 0)
		fprintf(g.out, "event\tattach\t%.6f\n", g_attached_at);
	if (g_detached_at >= 0)
		fprintf(g.out, "event\tdetach\t%.6f\n", g_detached_at);
	if (native)
		print_native(skel);
	print_stats(skel);
	err = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (err)
		fail(err, "command exited with status %d", err);
out:
	detach_all(&links);
	ring_buffer__free(rb);
	trace_test_bpf__destroy(skel);
	if (g.out != stdout)
		fclose(g.out);
	return err;
}
