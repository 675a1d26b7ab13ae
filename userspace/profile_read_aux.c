// SPDX-License-Identifier: MIT
/*
 * Reading a profile's collector-specific tables: memory (--memory), GPU (--gpu), exact line
 * counts (--trace), images, the BPF programs' cost, notebooks, Spark logs and the timelines.
 */
#include <string.h>
#include "profile_int.h"

static int rss_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_rss r = {
		.proc_id = sqlite3_column_int64(st, 0),
		.t_ns = sqlite3_column_int64(st, 1),
		.rss = sqlite3_column_int64(st, 2),
		.stack_id = sqlite3_column_int64(st, 3),
		.event = sqlite3_column_int(st, 4),
	};

	return LSP_CALL(ls_prow_rss, cb, &r);
}

int ls_profile__rss(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_rss *r),
		    void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p,
			"SELECT process_id, t_ns, rss, stack_id, event FROM rss"
			" ORDER BY process_id, t_ns",
			rss_row, &cb);
}

static int gpu_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_gpu r = {
		.proc_id = sqlite3_column_int64(st, 0),
		.stack_id = sqlite3_column_int64(st, 1),
		.gpu_ns = sqlite3_column_int64(st, 2),
		.api_ns = sqlite3_column_int64(st, 3),
		.mem_peak = sqlite3_column_int64(st, 4),
		.nccl_ns = sqlite3_column_int64(st, 5),
		.native_ns = sqlite3_column_int64(st, 6),
	};

	/* parts of the device time, never more than it */
	if (r.nccl_ns < 0 || r.nccl_ns > r.gpu_ns || r.native_ns < 0 || r.native_ns > r.gpu_ns)
		r.nccl_ns = r.native_ns = 0;
	return LSP_CALL(ls_prow_gpu, cb, &r);
}

int ls_profile__gpu(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_gpu *r),
		    void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(
		p,
		p->schema >= 9 ? "SELECT process_id, stack_id, gpu_ns, api_ns, mem_peak, nccl_ns,"
				 " COALESCE(native_ns, 0) FROM gpu ORDER BY process_id, stack_id"
			       : "SELECT process_id, stack_id, gpu_ns, api_ns, mem_peak, nccl_ns, 0"
				 " FROM gpu ORDER BY process_id, stack_id",
		gpu_row, &cb);
}

static int gpu_proc_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_gpu_proc r = {
		.proc_id = sqlite3_column_int64(st, 0),
		.hello = sqlite3_column_int(st, 1),
		.status = sqlite3_column_int(st, 2),
		.message = lsp_text(st, 3),
		.nvml_note = lsp_text(st, 4),
		.launches = sqlite3_column_int64(st, 5),
		.dropped = sqlite3_column_int64(st, 6),
		.lost = sqlite3_column_int64(st, 7),
	};

	return LSP_CALL(ls_prow_gpu_proc, cb, &r);
}

int ls_profile__gpu_procs(struct ls_profile *p,
			  int (*fn)(void *ctx, const struct ls_prow_gpu_proc *r), void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p,
			"SELECT process_id, hello, status, message, nvml_note, launches, dropped,"
			" lost FROM gpu_processes",
			gpu_proc_row, &cb);
}

static int gpu_dev_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_gpu_dev r = {
		.proc_id = sqlite3_column_int64(st, 0),
		.ordinal = sqlite3_column_int64(st, 1),
		.name = lsp_text(st, 2),
		.mem_total = sqlite3_column_int64(st, 3),
		.driver = lsp_text(st, 4),
		.cuda_driver = sqlite3_column_int64(st, 5),
		.cc = sqlite3_column_int64(st, 6),
		.uuid = lsp_text(st, 7),
	};

	return LSP_CALL(ls_prow_gpu_dev, cb, &r);
}

int ls_profile__gpu_devs(struct ls_profile *p,
			 int (*fn)(void *ctx, const struct ls_prow_gpu_dev *r), void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p,
			"SELECT process_id, ordinal, name, mem_total, driver, cuda_driver, cc, uuid"
			" FROM gpu_devices ORDER BY process_id, ordinal",
			gpu_dev_row, &cb);
}

static int trace_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_trace r = {
		.proc_id = sqlite3_column_int64(st, 0),
		.func_id = sqlite3_column_int64(st, 1),
		.line = sqlite3_column_int(st, 2),
		.hits = sqlite3_column_int64(st, 3),
		.own_ns = sqlite3_column_int64(st, 4),
		.total_ns = sqlite3_column_int64(st, 5),
	};

	return LSP_CALL(ls_prow_trace, cb, &r);
}

int ls_profile__trace(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_trace *r),
		      void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p,
			"SELECT process_id, function_id, line, sum(hits), sum(own_ns),"
			" sum(total_ns) FROM trace GROUP BY process_id, function_id, line",
			trace_row, &cb);
}

static int exec_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_exec r = {
		.proc_id = sqlite3_column_int64(st, 0),
		.how = lsp_text(st, 1),
		.start_ns = sqlite3_column_int64(st, 2),
		.end_ns = lsp_id(st, 3),
		.comm = lsp_text(st, 4),
		.argv = lsp_text(st, 5),
		.exe = lsp_text(st, 6),
		.python = lsp_text(st, 7),
		.python_build = lsp_text(st, 8),
		.note = lsp_text(st, 9),
		.samples = sqlite3_column_int64(st, 10),
		.cpu_ns = sqlite3_column_int64(st, 11),
		.wait_ns = sqlite3_column_int64(st, 12),
		.unresolved = sqlite3_column_int64(st, 13),
		.first_line_ns = lsp_id(st, 14),
	};

	return LSP_CALL(ls_prow_exec, cb, &r);
}

int ls_profile__execs(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_exec *r),
		      void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p,
			"SELECT process_id, how, start_ns, end_ns, comm, argv, exe, python,"
			" python_build, note, samples, cpu_ns, wait_ns, unresolved,"
			" first_line_ns FROM execs ORDER BY process_id, seq",
			exec_row, &cb);
}

/* a BPF program's name as the kernel keeps it: lower case, digits and '_', under 64 bytes */
static bool prog_name_ok(const char *name)
{
	bool ok = name && *name && strlen(name) < 64;

	for (const char *c = name; ok && *c; c++)
		ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_';
	return ok;
}

static int cost_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_bpf_cost r = {
		.prog = lsp_text(st, 0),
		.runs = sqlite3_column_int64(st, 1),
		.ns = sqlite3_column_int64(st, 2),
	};

	if (!prog_name_ok(r.prog) || r.runs < 0 || r.ns < 0) {
		cb->p->damaged++;
		return 0;
	}
	return LSP_CALL(ls_prow_bpf_cost, cb, &r);
}

int ls_profile__bpf_cost(struct ls_profile *p,
			 int (*fn)(void *ctx, const struct ls_prow_bpf_cost *r), void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p,
			"SELECT substr(r.key, 10), r.value, n.value FROM stats r"
			" JOIN stats n ON n.key = 'bpf_run_ns:' || substr(r.key, 10)"
			" WHERE r.key LIKE 'bpf_runs:%' ORDER BY n.value DESC",
			cost_row, &cb);
}

static int cell_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_cell r = {
		.notebook_id = sqlite3_column_int64(st, 0),
		.file_id = sqlite3_column_int64(st, 1),
		.number = sqlite3_column_int(st, 2),
		.how = lsp_text(st, 3),
		.notebook = lsp_text(st, 4),
		.key = lsp_text(st, 5),
	};

	return LSP_CALL(ls_prow_cell, cb, &r);
}

int ls_profile__cells(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_cell *r),
		      void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	if (p->schema < 4)
		return 0; /* recorded before notebooks were */
			  /* schema 9 added the notebook cell a text is of */
	return lsp_each(p,
			p->schema >= 9
				? "SELECT c.notebook_id, c.file_id, c.number, c.how,"
				  " coalesce(n.path, 'kernel ' || n.pid), c.cell_key FROM cells c"
				  " JOIN notebooks n ON n.id = c.notebook_id"
				  " ORDER BY c.notebook_id, c.seq"
				: "SELECT c.notebook_id, c.file_id, c.number, c.how,"
				  " coalesce(n.path, 'kernel ' || n.pid), NULL FROM cells c"
				  " JOIN notebooks n ON n.id = c.notebook_id"
				  " ORDER BY c.notebook_id, c.seq",
			cell_row, &cb);
}

static int nbrun_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_nbrun r = {
		.id = sqlite3_column_int64(st, 0),
		.proc_id = sqlite3_column_int64(st, 1),
		.parent_id = sqlite3_column_int64(st, 2),
		.parent_file_id = sqlite3_column_int64(st, 3),
		.parent_line = sqlite3_column_int(st, 4),
	};

	return LSP_CALL(ls_prow_nbrun, cb, &r);
}

int ls_profile__nbruns(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_nbrun *r),
		       void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	if (p->schema < 4)
		return 0;
	return lsp_each(
		p,
		"SELECT id, process_id, parent_id, parent_file_id, parent_line FROM notebooks"
		" WHERE parent_id IS NOT NULL ORDER BY id",
		nbrun_row, &cb);
}

static int any_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	*(bool *)cb->ctx = true;
	return 1;
}

bool ls_profile__has_spark(struct ls_profile *p)
{
	bool any = false;
	struct lsp_cb cb = {p, NULL, &any};

	return p->schema >= 7 &&
	       lsp_each(p, "SELECT 1 FROM spark_logs LIMIT 1", any_row, &cb) >= 0 && any;
}

static int spark_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_spark r = {
		.log_id = sqlite3_column_int64(st, 0),
		.path = lsp_text(st, 1),
		.codec = lsp_text(st, 2),
		.note = lsp_text(st, 3),
		.event = lsp_text(st, 4),
	};

	if (r.event)
		r.len = (size_t)sqlite3_column_bytes(st, 4);
	return LSP_CALL(ls_prow_spark, cb, &r);
}

int ls_profile__spark(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_spark *r),
		      void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	if (p->schema < 7)
		return 0;
	return lsp_each(p,
			"SELECT l.id, l.path, l.codec, l.note, e.event FROM spark_logs l"
			" LEFT JOIN spark_events e ON e.log_id = l.id ORDER BY l.id, e.seq",
			spark_row, &cb);
}

static int tick_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_tick r = {
		.proc_id = sqlite3_column_int64(st, 0),
		.tid = sqlite3_column_int64(st, 1),
		.t_ns = sqlite3_column_int64(st, 2),
		.dur_ns = sqlite3_column_int64(st, 3),
		.stack_id = sqlite3_column_int64(st, 4),
		.kind = sqlite3_column_int64(st, 5),
	};

	return LSP_CALL(ls_prow_tick, cb, &r);
}

int ls_profile__ticks(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_tick *r),
		      void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	if (p->schema < 5)
		return 0;
	return lsp_each(p,
			"SELECT process_id, tid, t_ns, dur_ns, stack_id, kind FROM timeline"
			" ORDER BY process_id, tid, t_ns",
			tick_row, &cb);
}

static int gpu_span_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_gpu_span r = {
		.proc_id = sqlite3_column_int64(st, 0),
		.device = sqlite3_column_int64(st, 1),
		.stream = sqlite3_column_int64(st, 2),
		.t_ns = sqlite3_column_int64(st, 3),
		.dur_ns = sqlite3_column_int64(st, 4),
		.kind = sqlite3_column_int64(st, 5),
		.name = lsp_text(st, 6),
		.stack_id = sqlite3_column_int64(st, 7),
		.count = sqlite3_column_int64(st, 8),
		.bytes = sqlite3_column_int64(st, 9),
		.tid = sqlite3_column_type(st, 10) == SQLITE_NULL ? -1
								  : sqlite3_column_int64(st, 10),
	};

	if (r.tid <= 0 || r.tid > INT32_MAX)
		r.tid = -1;
	return LSP_CALL(ls_prow_gpu_span, cb, &r);
}

int ls_profile__gpu_spans(struct ls_profile *p,
			  int (*fn)(void *ctx, const struct ls_prow_gpu_span *r), void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	if (p->schema < 5)
		return 0;
	return lsp_each(p,
			p->schema >= 10
				? "SELECT process_id, device, stream, t_ns, dur_ns, kind, name,"
				  " stack_id, count, bytes, tid FROM gpu_timeline"
				  " ORDER BY process_id, device, stream, t_ns"
				: "SELECT process_id, device, stream, t_ns, dur_ns, kind, name,"
				  " stack_id, count, bytes, NULL FROM gpu_timeline"
				  " ORDER BY process_id, device, stream, t_ns",
			gpu_span_row, &cb);
}
