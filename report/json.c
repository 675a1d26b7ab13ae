// SPDX-License-Identifier: MIT
/* The report-data document embedded in the HTML report, assembled from its sections. */
#include "diff_flame.h"
#include "flame.h"
#include "json_diff.h"
#include "json_int.h"
#include "spark.h"

char *ls_json__report_text(const struct ls_model *m, size_t *len)
{
	return ls_json__report_text_diff(m, NULL, NULL, len);
}

char *ls_json__report_text_diff(const struct ls_model *m, const struct ls_diff *d,
				const char *base_path, size_t *len)
{
	json_t *procs = json_array(), *srcs = json_array(), *syms = json_array();
	struct ls_flame *f = NULL;
	struct ls_jbuf b;

	for (size_t i = 0; i < m->nprocs; i++)
		json_array_append_new(procs, lsj_process_object(m, &m->procs[i]));
	for (size_t i = 0; i < m->nfiles; i++) {
		json_array_append_new(srcs, lsj_source_object(&m->files[i]));
		json_array_append_new(syms, lsj_symbols_object(m, i));
	}
	ls_jbuf_init(&b);
	/* the call tree, when the model has its stacks (the HTML report loads them): also the new
	 * side of a diff's */
	if (m->stacks && m->sampled && ls_flame__new(m, LS_FLAME_MAX_NODES, &f))
		b.failed = true;
	ls_jbuf__str(&b, "{\"version\":1,\"run\":");
	ls_jbuf__json(&b, lsj_run_object(m));
	ls_jbuf__str(&b, ",\"processes\":");
	ls_jbuf__json(&b, procs);
	ls_jbuf__str(&b, ",\"sources\":");
	ls_jbuf__json(&b, srcs);
	ls_jbuf__str(&b, ",\"lines\":");
	lsj_lines_table(&b, m);
	ls_jbuf__str(&b, ",\"functions\":");
	lsj_functions_table(&b, m);
	ls_jbuf__str(&b, ",\"edges\":");
	lsj_edges_table(&b, m);
	ls_jbuf__str(&b, ",\"symbols\":");
	ls_jbuf__json(&b, syms);
	ls_jbuf__str(&b, ",\"children\":");
	ls_jbuf__json(&b, lsj_children_array(m));
	ls_jbuf__str(&b, ",\"memory\":");
	ls_jbuf__json(&b, m->memory ? lsj_memory_object(m) : NULL);
	ls_jbuf__str(&b, ",\"gpu\":");
	ls_jbuf__json(&b, m->gpu || m->gpu_requested ? lsj_gpu_object(m) : NULL);
	ls_jbuf__str(&b, ",\"diff\":");
	ls_jbuf__json(&b, d ? ls_json__diff_data(d, base_path) : NULL);
	ls_jbuf__str(&b, ",\"diff_flame\":");
	ls_diff_flame__json(&b, d, f);
	ls_jbuf__str(&b, ",\"flame\":");
	ls_flame__json(&b, m, f);
	ls_flame__free(f);
	ls_jbuf__str(&b, ",\"spark\":");
	ls_jbuf__json(&b, m->spark ? ls_spark__json(m->spark, m, true) : NULL);
	ls_jbuf__str(&b, "}");
	return ls_jbuf__detach(&b, len);
}
