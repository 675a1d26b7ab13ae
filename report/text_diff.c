// SPDX-License-Identifier: MIT
/* Text report of a diff: the lines whose Time grew most, then those that shrank most, then the
 * functions and files, each with the change, the change relative to the base and the change in
 * share of each profile's total. */
#include <errno.h>
#include "escape.h"
#include "text.h"
#include "text_diff.h"

static void put_run(FILE *out, const char *what, const char *path, const struct ls_model *m,
		    int64_t ns)
{
	fprintf(out, "# %s: ", what);
	ls_text__put_clean(out, path, -1);
	fprintf(out, " (");
	ls_text__put_clean(out, ls_model__meta(m, "started_at") ?: "?", -1);
	fprintf(out, ", %.3f s elapsed, %s time): Time %.3f s\n", m->elapsed_s,
		ls_model__meta(m, "mode") ?: "cpu", ns / 1e9);
}

static void put_head(FILE *out, const char *title, const char *where)
{
	fprintf(out, "#\n# %s\n# %10s %8s %8s %9s %9s %-6s  %-32s %s\n", title, "Delta(s)",
		"Delta%", "Share", "Time(s)", "Base(s)", "Match", where,
		where[0] == 'L' ? "Function  Source" : "");
}

/* +12.3%; "new" when the base had no such row, "-" when it had no time there */
static void put_pct(FILE *out, const struct ls_drow *r)
{
	if (r->base_ns)
		fprintf(out, " %+7.1f%%", 100.0 * (r->ns - r->base_ns) / r->base_ns);
	else
		fprintf(out, " %8s", r->match == LS_DIFF_NEW ? "new" : "-");
}

static void put_row(FILE *out, const struct ls_diff *d, const struct ls_drow *r, int kind)
{
	const struct ls_model *m = r->file >= 0 ? d->m : d->base;
	int file = r->file >= 0 ? r->file : r->base_file;
	char loc[256], name[256];

	fprintf(out, "  %+10.3f", (r->ns - r->base_ns) / 1e9);
	put_pct(out, r);
	fprintf(out, " %+7.2fpp %9.3f %9.3f %-6s  ", 100 * ls_diff__share_delta(d, r), r->ns / 1e9,
		r->base_ns / 1e9, ls_diff__match_name(r->match));
	ls_escape__name(file >= 0 ? m->files[file].name : r->path, true, name, sizeof(name));
	if (kind == 'F')
		snprintf(loc, sizeof(loc), "%.200s", name);
	else if (r->match == LS_DIFF_MOVED)
		snprintf(loc, sizeof(loc), "%.200s:%d (base %d)", name, r->line, r->base_line);
	else
		snprintf(loc, sizeof(loc), "%.200s:%d", name, r->line);
	if (kind == 'f') {
		ls_text__put_clean(out, r->function ?: "?", 32);
		fputc(' ', out);
		ls_text__put_clean(out, loc, -1);
	} else {
		ls_text__put_clean(out, loc, 32);
	}
	if (kind == 'l') {
		fputc(' ', out);
		ls_text__put_clean(out, r->function ?: "?", 24);
		fputc(' ', out);
		if (file >= 0)
			ls_text__put_source(out, &m->files[file], r->line, 60);
	}
	fputc('\n', out);
}

/* The first `top` rows that grew (sign > 0) from the front, or that shrank from the back. */
static void put_rows(FILE *out, const struct ls_diff *d, const struct ls_drow *rows, size_t n,
		     int top, int sign, int kind)
{
	int shown = 0;

	for (size_t k = 0; k < n && shown < top; k++) {
		const struct ls_drow *r = sign > 0 ? &rows[k] : &rows[n - 1 - k];
		int64_t delta = r->ns - r->base_ns;

		if (sign > 0 ? delta <= 0 : delta >= 0)
			break;
		put_row(out, d, r, kind);
		shown++;
	}
	if (!shown)
		fprintf(out, "#   none\n");
}

int ls_text__write_diff(FILE *out, const struct ls_diff *d, const char *path, const char *base_path,
			int top)
{
	const size_t *n = d->matched;
	const char *notes[LS_DIFF_MAX_NOTES];

	top = top ? top : 20;
	fprintf(out, "# %s diff\n", ls_model__meta(d->m, "tool") ?: "linescope-bpf");
	put_run(out, "New", path, d->m, d->ns);
	put_run(out, "Base", base_path, d->base, d->base_ns);
	fprintf(out, "# Change: %+.3f s", (d->ns - d->base_ns) / 1e9);
	if (d->base_ns)
		fprintf(out, " (%+.1f%%)", 100.0 * (d->ns - d->base_ns) / d->base_ns);
	fprintf(out,
		"\n# Lines: %zu same, %zu moved with their function, %zu edited, %zu only "
		"in new, %zu only in base\n",
		n[LS_DIFF_SAME], n[LS_DIFF_MOVED], n[LS_DIFF_EDITED], n[LS_DIFF_NEW],
		n[LS_DIFF_GONE]);
	for (size_t i = 0; i < ls_diff__notes(d, notes, LS_DIFF_MAX_NOTES); i++)
		fprintf(out, "# Note: %s\n", notes[i]);
	fprintf(out, "# Delta%%: change against the base's Time; Share: change in share of each "
		     "profile's total Time (normalised, in percentage points)\n");
	put_head(out, "Lines that got slower", "Location");
	put_rows(out, d, d->lines, d->nlines, top, 1, 'l');
	put_head(out, "Lines that got faster", "Location");
	put_rows(out, d, d->lines, d->nlines, top, -1, 'l');
	put_head(out, "Functions that got slower", "Function");
	put_rows(out, d, d->funcs, d->nfuncs, top, 1, 'f');
	put_head(out, "Functions that got faster", "Function");
	put_rows(out, d, d->funcs, d->nfuncs, top, -1, 'f');
	put_head(out, "Files by change", "File");
	put_rows(out, d, d->files, d->nfiles, top, 1, 'F');
	put_rows(out, d, d->files, d->nfiles, top, -1, 'F');
	return ferror(out) ? -EIO : 0;
}
