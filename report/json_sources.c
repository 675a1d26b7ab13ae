// SPDX-License-Identifier: MIT
/* The source files of a profile: their text, notebook cells and symbol links. */
#include <string.h>
#include "json_int.h"
#include "pyindex.h"

/* A notebook's cells (docs/report-data.md, "Notebook cells") */
static json_t *cells_array(const struct ls_mfile *f)
{
	json_t *a = json_array();

	for (size_t i = 0; i < f->ncells; i++) {
		const struct ls_mcell *c = &f->cells[i];

		json_array_append_new(
			a,
			json_pack("{s:s, s:i, s:i, s:o, s:o, s:o, s:o}", "label", c->label, "first",
				  c->first, "nlines", c->nlines, "revision",
				  c->revision[0] ? json_string(c->revision) : json_null(), "number",
				  c->number > 0 ? json_integer(c->number) : json_null(), "found",
				  c->how ? json_string(c->how) : json_null(), "unavailable",
				  ls_json__str(c->unavailable)));
	}
	return a;
}

json_t *lsj_source_object(const struct ls_mfile *f)
{
	/* a cell folded into its notebook: its text is there, and only once in the page */
	bool folded = !strcmp(f->kind, "cell");
	json_t *o = json_object();

	json_object_set_new(o, "path", ls_json__name(f->path));
	json_object_set_new(o, "name", ls_json__name(f->name));
	json_object_set_new(o, "kind", json_string(f->kind));
	json_object_set_new(o, "text",
			    f->text && !folded ? ls_json__strn(f->text, f->len) : json_null());
	json_object_set_new(
		o, "unavailable",
		folded	  ? json_string("folded into its notebook")
		: f->text ? json_null()
			  : ls_json__str(f->unavailable ? f->unavailable : "source not captured"));
	json_object_set_new(o, "stale", ls_json__str(f->stale));
	json_object_set_new(o, "nlines", json_integer(f->nlines));
	json_object_set_new(o, "cells", f->ncells ? cells_array(f) : json_null());
	return o;
}

/* Links [line, col16, end_col16, target src, target line] and definitions [line, name]. */
json_t *lsj_symbols_object(const struct ls_model *m, int src)
{
	const struct ls_pyindex_link *links;
	const struct ls_pyindex_def *defs;
	json_t *l = json_array(), *d = json_array();
	int n;

	n = m->index ? ls_pyindex__links(m->index, src, &links) : 0;
	for (int i = 0; i < n; i++)
		json_array_append_new(l, json_pack("[i, i, i, i, i]", links[i].line, links[i].col16,
						   links[i].end_col16, links[i].target_src,
						   links[i].target_line));
	n = m->index ? ls_pyindex__defs(m->index, src, &defs) : 0;
	for (int i = 0; i < n; i++)
		json_array_append_new(
			d, json_pack("[i, o]", defs[i].def_line, ls_json__str(defs[i].qualname)));
	return json_pack("{s:o, s:o}", "links", l, "defs", d);
}
