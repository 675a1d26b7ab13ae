// SPDX-License-Identifier: MIT
/* `report --format json`: the run, processes, lines, functions and files as rows. */
#include <stdlib.h>
#include "json_int.h"
#include "spark.h"

/* a line's on-CPU time by mode (mode_ns) */
static const char *const split_keys[3] = {"python_time_s", "native_time_s", "kernel_time_s"};

/* Per process and file: own time and samples of its lines (a file's share of Time). */
static json_t *files_array(const struct ls_model *m)
{
	json_t *a = json_array();
	int64_t *ns, *cnt;
	size_t n = m->nprocs * m->nfiles;

	ns = calloc(n ? n : 1, sizeof(*ns));
	cnt = calloc(n ? n : 1, sizeof(*cnt));
	if (!ns || !cnt) {
		free(ns);
		free(cnt);
		return a;
	}
	for (size_t i = 0; i < m->nlines; i++) {
		const struct ls_mline *l = &m->lines[i];
		size_t k = (size_t)l->proc * m->nfiles + l->file;

		ns[k] += l->own_ns;
		cnt[k] += l->own_count;
	}
	for (size_t p = 0; p < m->nprocs; p++) {
		for (size_t f = 0; f < m->nfiles; f++) {
			size_t k = p * m->nfiles + f;
			json_t *o;

			if (!cnt[k])
				continue;
			o = json_object();
			json_object_set_new(o, "pid", json_integer(m->procs[p].pid));
			json_object_set_new(o, "host", ls_json__name(ls_model__host(m, (int)p)));
			json_object_set_new(o, "path", ls_json__name(m->files[f].path));
			json_object_set_new(o, "kind", json_string(m->files[f].kind));
			json_object_set_new(o, "lines",
					    m->files[f].text ? json_integer(m->files[f].nlines)
							     : json_null());
			json_object_set_new(o, "samples", json_integer(cnt[k]));
			json_object_set_new(o, "time_s", ls_json__secs(ns[k]));
			json_object_set_new(o, "stale", ls_json__str(m->files[f].stale));
			json_object_set_new(
				o, "unavailable",
				m->files[f].text ? json_null()
						 : ls_json__str(m->files[f].unavailable
									? m->files[f].unavailable
									: "source not captured"));
			json_array_append_new(a, o);
		}
	}
	free(ns);
	free(cnt);
	return a;
}

/* A line as --format json names it: path and line, and for a notebook its cell and cell line. */
static void set_place(json_t *o, const struct ls_model *m, int src, int line)
{
	const struct ls_mfile *f = &m->files[src];
	const struct ls_mcell *c = f->ncells ? ls_mfile__cell_at(f, line) : NULL;

	json_object_set_new(o, "path", ls_json__name(f->path));
	json_object_set_new(o, "line", json_integer(line));
	json_object_set_new(o, "cell", c ? json_integer(c - f->cells + 1) : json_null());
	json_object_set_new(o, "cell_line", c ? json_integer(line - c->first + 1) : json_null());
}

/* The child invocations (the HTML data's children) with pids and paths instead of indices. */
static json_t *children_list(const struct ls_model *m)
{
	json_t *in = lsj_children_array(m), *out = json_array(), *c;
	size_t i;

	json_array_foreach(in, i, c)
	{
		int proc = (int)json_integer_value(json_object_get(c, "proc")),
		    parent = (int)json_integer_value(json_object_get(c, "parent_proc"));
		json_t *src = json_object_get(c, "source"), *o = json_object();

		json_object_set_new(o, "parent_pid", json_integer(m->procs[parent].pid));
		set_place(o, m, (int)json_integer_value(json_object_get(c, "src")),
			  (int)json_integer_value(json_object_get(c, "line")));
		json_object_set(o, "kind", json_object_get(c, "kind"));
		json_object_set_new(o, "pid",
				    json_is_null(json_object_get(c, "pid"))
					    ? json_null()
					    : json_integer(m->procs[proc].pid));
		json_object_set_new(o, "notebook",
				    json_is_integer(src)
					    ? ls_json__name(m->files[json_integer_value(src)].path)
					    : json_null());
		json_object_set(o, "cmd", json_object_get(c, "cmd"));
		json_object_set(o, "status", json_object_get(c, "status"));
		json_object_set(o, "exit", json_object_get(c, "exit"));
		json_object_set(o, "wait_s", json_object_get(c, "wait_s"));
		json_object_set(o, "duration_s", json_object_get(c, "duration_s"));
		json_object_set(o, "via", json_object_get(c, "via"));
		json_array_append_new(out, o);
	}
	json_decref(in);
	return out;
}

json_t *ls_json__lines(const struct ls_model *m)
{
	json_t *o = json_object(), *lines = json_array(), *procs = json_array(),
	       *funcs = json_array();

	json_object_set_new(o, "run", ls_json__run(m));
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ls_mproc *p = &m->procs[i];
		json_t *po = lsj_process_object(m, p);

		json_object_del(po, "parent");
		json_object_set_new(po, "parent_pid",
				    p->parent >= 0 ? json_integer(m->procs[p->parent].pid)
						   : json_null());
		json_array_append_new(procs, po);
	}
	json_object_set_new(o, "processes", procs);
	for (size_t i = 0; i < m->nlines; i++) {
		const struct ls_mline *l = &m->lines[i];
		const struct ls_mfile *f = &m->files[l->file];
		json_t *r = json_object();

		json_object_set_new(r, "pid", json_integer(m->procs[l->proc].pid));
		json_object_set_new(r, "host", ls_json__name(ls_model__host(m, l->proc)));
		json_object_set_new(r, "path", ls_json__name(f->path));
		json_object_set_new(r, "line", json_integer(l->line));
		if (f->ncells) {
			const struct ls_mcell *c = ls_mfile__cell_at(f, l->line);

			json_object_set_new(r, "cell",
					    c ? json_integer(c - f->cells + 1) : json_null());
			json_object_set_new(r, "cell_line",
					    c ? json_integer(l->line - c->first + 1) : json_null());
		}
		json_object_set_new(r, "function",
				    l->func >= 0 ? ls_json__str(m->funcs[l->func].qualname)
						 : json_null());
		json_object_set_new(r, "kind", json_string(f->kind));
		json_object_set_new(r, "samples",
				    m->sampled ? json_integer(l->self_count) : json_null());
		json_object_set_new(r, "self_time_s", ls_json__secs(l->self_ns));
		json_object_set_new(r, "total_time_s", ls_json__secs(l->total_ns));
		json_object_set_new(r, "time_s", ls_json__secs(l->own_ns));
		json_object_set_new(r, "own_samples", json_integer(l->own_count));
		for (int k = 0; k < 3; k++) /* --sampler remote alone: not known */
			json_object_set_new(r, split_keys[k],
					    m->cpu_split ? ls_json__secs(l->mode_ns[k])
							 : json_null());
		json_object_set_new(r, "cpu_time_s",
				    m->wall ? ls_json__secs(LS_LINE_CPU_NS(l)) : json_null());
		json_object_set_new(r, "wait_time_s",
				    m->wall ? ls_json__secs(l->wait_ns) : json_null());
		json_object_set_new(r, "gil_wait_time_s",
				    m->wall ? ls_json__secs(l->gil_ns) : json_null());
		json_object_set_new(r, "runq_time_s",
				    m->wall ? ls_json__secs(l->runq_ns) : json_null());
		json_object_set_new(r, "hits", l->hits >= 0 ? json_integer(l->hits) : json_null());
		json_object_set_new(r, "avg_hit_s",
				    l->hits > 0 ? ls_json__secs(l->own_ns / l->hits) : json_null());
		json_object_set_new(r, "traced_time_s",
				    l->hits >= 0 ? ls_json__secs(l->trace_own_ns) : json_null());
		json_object_set_new(r, "mem_change_bytes",
				    m->memory && l->peak_mem >= 0 ? json_integer(l->mem_change)
								  : json_null());
		json_object_set_new(r, "peak_mem_bytes",
				    m->memory && l->peak_mem >= 0 ? json_integer(l->peak_mem)
								  : json_null());
		json_object_set_new(r, "gpu_time_s",
				    m->gpu || m->gpu_requested ? ls_json__secs(l->gpu_ns)
							       : json_null());
		json_object_set_new(r, "gpu_native_time_s",
				    m->gpu || m->gpu_requested ? ls_json__secs(l->gpu_native_ns)
							       : json_null());
		json_object_set_new(r, "gpu_nccl_time_s",
				    m->gpu || m->gpu_requested ? ls_json__secs(l->gpu_nccl_ns)
							       : json_null());
		json_object_set_new(r, "gpu_peak_mem_bytes",
				    l->gpu_peak >= 0 ? json_integer(l->gpu_peak) : json_null());
		json_object_set_new(r, "driver_time_s",
				    m->gpu || m->gpu_requested ? ls_json__secs(l->driver_ns)
							       : json_null());
		json_object_set_new(r, "source", ls_json__line_text(f, l->line));
		json_array_append_new(lines, r);
	}
	json_object_set_new(o, "lines", lines);
	for (size_t i = 0; i < m->nfstats; i++) {
		const struct ls_mfstat *fs = &m->fstats[i];
		const struct ls_mfunc *f = &m->funcs[fs->func];

		json_t *fo = json_object();

		json_object_set_new(fo, "pid", json_integer(m->procs[fs->proc].pid));
		json_object_set_new(fo, "host", ls_json__name(ls_model__host(m, fs->proc)));
		json_object_set_new(fo, "path", ls_json__name(m->files[f->file].path));
		json_object_set_new(fo, "function", ls_json__str(f->qualname));
		json_object_set_new(fo, "first_line", json_integer(f->def_line));
		json_object_set_new(fo, "lines",
				    f->end_line ? json_integer(f->end_line - f->def_line + 1)
						: json_null());
		json_object_set_new(fo, "samples",
				    m->sampled ? json_integer(fs->own_count) : json_null());
		json_object_set_new(fo, "time_s", ls_json__secs(fs->own_ns));
		json_object_set_new(fo, "total_time_s", ls_json__secs(fs->total_ns));
		json_object_set_new(fo, "cpu_time_s",
				    m->wall ? ls_json__secs(fs->cpu_ns) : json_null());
		json_object_set_new(fo, "wait_time_s",
				    m->wall ? ls_json__secs(fs->wait_ns + fs->gil_ns + fs->runq_ns)
					    : json_null());
		json_object_set_new(fo, "calls",
				    fs->calls >= 0 ? json_integer(fs->calls) : json_null());
		json_array_append_new(funcs, fo);
	}
	json_object_set_new(o, "functions", funcs);
	json_object_set_new(o, "files", files_array(m));
	json_object_set_new(o, "children", children_list(m));
	json_object_set_new(o, "gpu",
			    m->gpu || m->gpu_requested
				    ? json_pack("{s:o}", "timeline", lsj_gpu_timeline(m, false))
				    : json_null());
	json_object_set_new(o, "spark",
			    m->spark ? ls_spark__json(m->spark, m, false) : json_null());
	return o;
}
