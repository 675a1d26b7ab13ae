// SPDX-License-Identifier: MIT
/* A diff as JSON: rows with both sides' Time and the change, for scripts and for the report. */
#include "json.h"
#include "json_diff.h"

/* The change relative to the base, in percent; null when the base had no time there. */
static json_t *delta_pct(const struct ls_drow *r)
{
	return r->base_ns ? json_real(100.0 * (r->ns - r->base_ns) / r->base_ns) : json_null();
}

static json_t *index_or_null(int i)
{
	return i >= 0 ? json_integer(i) : json_null();
}

static json_t *matching(const struct ls_diff *d)
{
	json_t *o = json_object();

	for (int k = LS_DIFF_SAME; k <= LS_DIFF_GONE; k++)
		json_object_set_new(o, ls_diff__match_name(k), json_integer(d->matched[k]));
	return o;
}

static json_t *notes_array(const struct ls_diff *d)
{
	const char *notes[LS_DIFF_MAX_NOTES];
	size_t n = ls_diff__notes(d, notes, LS_DIFF_MAX_NOTES);
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(notes[i]));
	return a;
}

static const char *const NORMALISATION =
	"share_delta is each row's Time over its profile's total Time, new minus base";

/* What the two profiles are, and what was compared. */
static json_t *summary(const struct ls_diff *d, const char *path, const char *base_path)
{
	json_t *o = json_object();

	json_object_set_new(o, "profile", ls_json__name(path));
	json_object_set_new(o, "base_profile", ls_json__name(base_path));
	json_object_set_new(o, "time_s", ls_json__secs(d->ns));
	json_object_set_new(o, "base_time_s", ls_json__secs(d->base_ns));
	json_object_set_new(o, "delta_time_s", ls_json__secs(d->ns - d->base_ns));
	json_object_set_new(o, "delta_pct",
			    d->base_ns ? json_real(100.0 * (d->ns - d->base_ns) / d->base_ns)
				       : json_null());
	json_object_set_new(o, "normalisation", json_string(NORMALISATION));
	json_object_set_new(o, "matching", matching(d));
	json_object_set_new(o, "notes", notes_array(d));
	return o;
}

/* The columns every row has: both Times, the change, how it was matched. */
static void row_common(json_t *o, const struct ls_diff *d, const struct ls_drow *r)
{
	json_object_set_new(o, "match", json_string(ls_diff__match_name(r->match)));
	json_object_set_new(o, "time_s", ls_json__secs(r->ns));
	json_object_set_new(o, "base_time_s", ls_json__secs(r->base_ns));
	json_object_set_new(o, "delta_time_s", ls_json__secs(r->ns - r->base_ns));
	json_object_set_new(o, "delta_pct", delta_pct(r));
	json_object_set_new(o, "share_delta", json_real(ls_diff__share_delta(d, r)));
	json_object_set_new(o, "samples", json_integer(r->count));
	json_object_set_new(o, "base_samples", json_integer(r->base_count));
}

/* A row's file on whichever side has it. */
static const struct ls_mfile *row_file(const struct ls_diff *d, const struct ls_drow *r, bool base)
{
	if (base)
		return r->base_file >= 0 ? &d->base->files[r->base_file] : NULL;
	return r->file >= 0 ? &d->m->files[r->file] : NULL;
}

static json_t *line_object(const struct ls_diff *d, const struct ls_drow *r)
{
	const struct ls_mfile *f = row_file(d, r, false), *bf = row_file(d, r, true);
	json_t *o = json_object();

	json_object_set_new(o, "path", ls_json__name(r->path));
	json_object_set_new(o, "line",
			    r->match == LS_DIFF_GONE ? json_null() : json_integer(r->line));
	json_object_set_new(o, "base_line", bf ? json_integer(r->base_line) : json_null());
	json_object_set_new(o, "function", ls_json__str(r->function));
	json_object_set_new(o, "kind", json_string((f ? f : bf)->kind));
	row_common(o, d, r);
	json_object_set_new(o, "source", f ? ls_json__line_text(f, r->line) : json_null());
	json_object_set_new(o, "base_source",
			    bf ? ls_json__line_text(bf, r->base_line) : json_null());
	return o;
}

static json_t *func_object(const struct ls_diff *d, const struct ls_drow *r)
{
	json_t *o = json_object();
	bool here = r->func >= 0, there = r->base_func >= 0;

	json_object_set_new(o, "path", ls_json__name(r->path));
	json_object_set_new(o, "function", ls_json__str(r->function));
	json_object_set_new(o, "first_line", here ? json_integer(r->line) : json_null());
	json_object_set_new(o, "base_first_line", there ? json_integer(r->base_line) : json_null());
	row_common(o, d, r);
	return o;
}

static json_t *file_object(const struct ls_diff *d, const struct ls_drow *r)
{
	const struct ls_mfile *f = row_file(d, r, false) ?: row_file(d, r, true);
	json_t *o = json_object();

	json_object_set_new(o, "path", ls_json__name(r->path));
	json_object_set_new(o, "kind", json_string(f->kind));
	row_common(o, d, r);
	return o;
}

static json_t *rows_array(const struct ls_diff *d, const struct ls_drow *rows, size_t n,
			  json_t *(*fn)(const struct ls_diff *, const struct ls_drow *))
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, fn(d, &rows[i]));
	return a;
}

json_t *ls_json__diff(const struct ls_diff *d, const char *path, const char *base_path)
{
	json_t *o = json_object();

	json_object_set_new(o, "run", ls_json__run(d->m));
	json_object_set_new(o, "base_run", ls_json__run(d->base));
	json_object_set_new(o, "diff", summary(d, path, base_path));
	json_object_set_new(o, "lines", rows_array(d, d->lines, d->nlines, line_object));
	json_object_set_new(o, "functions", rows_array(d, d->funcs, d->nfuncs, func_object));
	json_object_set_new(o, "files", rows_array(d, d->files, d->nfiles, file_object));
	return o;
}

/*
 * The report's form: rows of the new profile point at its sources (src, as the report's lines
 * do); rows only in the base carry their text, since the report has no source for them.
 */
static json_t *data_rows(const struct ls_diff *d, const struct ls_drow *rows, size_t n,
			 json_t *(*fn)(const struct ls_diff *, const struct ls_drow *))
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		const struct ls_drow *r = &rows[i];
		json_t *o = fn(d, r);

		json_object_set_new(o, "src", index_or_null(r->file));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *ls_json__diff_data(const struct ls_diff *d, const char *base_path)
{
	json_t *o = summary(d, NULL, base_path), *base = json_object();

	json_object_del(o, "profile");
	json_object_set_new(base, "started_at",
			    ls_json__str(ls_model__meta(d->base, "started_at")));
	json_object_set_new(base, "elapsed_s", json_real(d->base->elapsed_s));
	json_object_set_new(base, "mode", ls_json__str(ls_model__meta(d->base, "mode")));
	json_object_set_new(base, "scope", ls_json__name(ls_model__meta(d->base, "scope")));
	json_object_set_new(o, "base", base);
	json_object_set_new(o, "lines", data_rows(d, d->lines, d->nlines, line_object));
	json_object_set_new(o, "functions", data_rows(d, d->funcs, d->nfuncs, func_object));
	json_object_set_new(o, "files", data_rows(d, d->files, d->nfiles, file_object));
	return o;
}
