// SPDX-License-Identifier: MIT
/*
 * The report data's line, function and call-edge tables, by column (jbuf.h): the largest part of
 * a report, written without a JSON tree.
 */
#include "json_int.h"

void lsj_lines_table(struct ls_jbuf *b, const struct ls_model *m)
{
	const struct ls_mline *L = m->lines;
	size_t n = m->nlines;
	bool gpu = m->gpu || m->gpu_requested;

	FIRST_COL(b, "proc", n, i, ls_jbuf__int(b, L[i].proc));
	COL(b, "src", n, i, ls_jbuf__int(b, L[i].file));
	COL(b, "line", n, i, ls_jbuf__int(b, L[i].line));
	COL(b, "time_s", n, i, ls_jbuf__secs(b, L[i].own_ns));
	COL(b, "total_s", n, i, ls_jbuf__secs(b, L[i].total_ns));
	if (m->sampled) {
		COL(b, "samples", n, i, ls_jbuf__int(b, L[i].own_count));
		COL(b, "samples_total", n, i, ls_jbuf__int(b, L[i].total_count));
	} else {
		ls_jbuf__null_col(b, "samples"); /* tracing omits the sample column */
		ls_jbuf__null_col(b, "samples_total");
	}
	if (m->cpu_split) {
		COL(b, "python_s", n, i, ls_jbuf__secs(b, L[i].mode_ns[0]));
		COL(b, "native_s", n, i, ls_jbuf__secs(b, L[i].mode_ns[1]));
		COL(b, "kernel_s", n, i, ls_jbuf__secs(b, L[i].mode_ns[2]));
	} else { /* --sampler remote: not known, not 0 */
		ls_jbuf__null_col(b, "python_s");
		ls_jbuf__null_col(b, "native_s");
		ls_jbuf__null_col(b, "kernel_s");
	}
	if (m->wall) {
		COL(b, "cpu_s", n, i, ls_jbuf__secs(b, LS_LINE_CPU_NS(&L[i])));
		COL(b, "wait_s", n, i, ls_jbuf__secs(b, L[i].wait_ns));
		COL(b, "gil_wait_s", n, i, ls_jbuf__secs(b, L[i].gil_ns));
		COL(b, "runq_s", n, i, ls_jbuf__secs(b, L[i].runq_ns));
	} else {
		ls_jbuf__null_col(b, "cpu_s");
		ls_jbuf__null_col(b, "wait_s");
		ls_jbuf__null_col(b, "gil_wait_s");
		ls_jbuf__null_col(b, "runq_s");
	}
	if (gpu) {
		/* GPU time is device time: never added to Time */
		COL(b, "gpu_s", n, i, ls_jbuf__secs(b, L[i].gpu_ns));
		COL(b, "gpu_peak_mem", n, i,
		    L[i].gpu_peak >= 0 ? ls_jbuf__int(b, L[i].gpu_peak) : ls_jbuf__str(b, "null"));
		COL(b, "driver_s", n, i, ls_jbuf__secs(b, L[i].driver_ns));
		COL(b, "gpu_native_s", n, i, ls_jbuf__secs(b, L[i].gpu_native_ns));
		COL(b, "gpu_nccl_s", n, i, ls_jbuf__secs(b, L[i].gpu_nccl_ns));
	} else {
		ls_jbuf__null_col(b, "gpu_s");
		ls_jbuf__null_col(b, "gpu_peak_mem");
		ls_jbuf__null_col(b, "driver_s");
		ls_jbuf__null_col(b, "gpu_native_s");
		ls_jbuf__null_col(b, "gpu_nccl_s");
	}
	if (m->memory) {
		COL(b, "mem_change", n, i,
		    L[i].peak_mem >= 0 ? ls_jbuf__int(b, L[i].mem_change)
				       : ls_jbuf__str(b, "null"));
		COL(b, "peak_mem", n, i,
		    L[i].peak_mem >= 0 ? ls_jbuf__int(b, L[i].peak_mem) : ls_jbuf__str(b, "null"));
	} else {
		ls_jbuf__null_col(b, "mem_change");
		ls_jbuf__null_col(b, "peak_mem");
	}
	if (m->traced) {
		COL(b, "hits", n, i,
		    L[i].hits >= 0 ? ls_jbuf__int(b, L[i].hits) : ls_jbuf__str(b, "null"));
		/* Avg / hit: Time divided by hits, when both exist */
		COL(b, "avg_hit_s", n, i,
		    L[i].hits > 0 ? ls_jbuf__secs(b, L[i].own_ns / L[i].hits)
				  : ls_jbuf__str(b, "null"));
	} else {
		ls_jbuf__null_col(b, "hits");
		ls_jbuf__null_col(b, "avg_hit_s");
	}
	ls_jbuf__raw(b, "}", 1);
}

void lsj_functions_table(struct ls_jbuf *b, const struct ls_model *m)
{
	const struct ls_mfstat *F = m->fstats;
	const struct ls_mfunc *fn = m->funcs;
	size_t n = m->nfstats;

	FIRST_COL(b, "proc", n, i, ls_jbuf__int(b, F[i].proc));
	COL(b, "src", n, i, ls_jbuf__int(b, fn[F[i].func].file));
	COL(b, "name", n, i, ls_jbuf__json(b, ls_json__str(fn[F[i].func].qualname)));
	COL(b, "def_line", n, i, ls_jbuf__int(b, fn[F[i].func].def_line));
	COL(b, "end_line", n, i,
	    fn[F[i].func].end_line ? ls_jbuf__int(b, fn[F[i].func].end_line)
				   : ls_jbuf__str(b, "null"));
	COL(b, "lines", n, i,
	    fn[F[i].func].end_line
		    ? ls_jbuf__int(b, fn[F[i].func].end_line - fn[F[i].func].def_line + 1)
		    : ls_jbuf__str(b, "null"));
	COL(b, "time_s", n, i, ls_jbuf__secs(b, F[i].own_ns));
	COL(b, "total_s", n, i, ls_jbuf__secs(b, F[i].total_ns));
	if (m->sampled)
		COL(b, "samples", n, i, ls_jbuf__int(b, F[i].own_count));
	else
		ls_jbuf__null_col(b, "samples");
	if (m->wall) {
		COL(b, "cpu_s", n, i, ls_jbuf__secs(b, F[i].cpu_ns));
		COL(b, "wait_s", n, i, ls_jbuf__secs(b, F[i].wait_ns + F[i].gil_ns + F[i].runq_ns));
	} else {
		ls_jbuf__null_col(b, "cpu_s");
		ls_jbuf__null_col(b, "wait_s");
	}
	if (m->traced)
		COL(b, "calls", n, i,
		    F[i].calls >= 0 ? ls_jbuf__int(b, F[i].calls) : ls_jbuf__str(b, "null"));
	else
		ls_jbuf__null_col(b, "calls");
	ls_jbuf__raw(b, "}", 1);
}

void lsj_edges_table(struct ls_jbuf *b, const struct ls_model *m)
{
	const struct ls_medge *E = m->edges;
	size_t n = m->nedges;

	FIRST_COL(b, "proc", n, i, ls_jbuf__int(b, E[i].proc));
	COL(b, "src", n, i, ls_jbuf__int(b, E[i].file));
	COL(b, "line", n, i, ls_jbuf__int(b, E[i].line));
	COL(b, "callee_src", n, i, ls_jbuf__int(b, m->funcs[E[i].callee].file));
	COL(b, "callee_line", n, i, ls_jbuf__int(b, m->funcs[E[i].callee].def_line));
	COL(b, "samples", n, i, ls_jbuf__int(b, E[i].count));
	ls_jbuf__raw(b, "}", 1);
}
