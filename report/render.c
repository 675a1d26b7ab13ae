// SPDX-License-Identifier: MIT
/* Model -> format -> file (outfile.c: a new file renamed into place, so readers never see half). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "diff.h"
#include "export.h"
#include "html.h"
#include "json.h"
#include "json_diff.h"
#include "log.h"
#include "model.h"
#include "outfile.h"
#include "render.h"
#include "text.h"
#include "text_diff.h"

/* m as fmt; with d (`report --diff`, html, text or json only) the comparison of m with base. */
static int write_format(FILE *out, const struct ls_model *m, const struct ls_diff *d,
			const char *profile, const char *base, enum ls_format fmt, int top)
{
	json_t *j;
	char *s;
	int err;

	if (d && fmt != LS_FMT_TEXT && fmt != LS_FMT_JSON && fmt != LS_FMT_HTML)
		return -EINVAL; /* the command line allows no other */
	switch (fmt) {
	case LS_FMT_TEXT:
		return d ? ls_text__write_diff(out, d, profile, base, top)
			 : ls_text__write(out, m, top);
	case LS_FMT_JSON:
		j = d ? ls_json__diff(d, profile, base) : ls_json__lines(m);
		err = j ? json_dumpf(j, out, JSON_INDENT(1) | JSON_REAL_PRECISION(9)) : -ENOMEM;
		json_decref(j);
		if (!err)
			fputc('\n', out);
		return err ? -EIO : 0;
	case LS_FMT_HTML: {
		size_t len;

		s = ls_json__report_text_diff(m, d, base, &len);
		if (!s)
			return -ENOMEM;
		err = ls_html__write(out, s, len, ls_model__meta(m, "scope"));
		free(s);
		return err;
	}
	case LS_FMT_PPROF:
		return ls_export__pprof(out, m);
	case LS_FMT_COLLAPSED:
		return ls_export__collapsed(out, m, LS_EXPORT_SAMPLES);
	case LS_FMT_COLLAPSED_TIME:
		return ls_export__collapsed(out, m, LS_EXPORT_TIME);
	case LS_FMT_SPEEDSCOPE:
		return ls_export__speedscope(out, m);
	case LS_FMT_CHROME:
		if (!m->stacks->timeline)
			ls_warn(0,
				"%s was recorded without --timeline: the trace holds its processes "
				"and memory only",
				profile);
		return ls_export__chrome(out, m);
	}
	return -EINVAL;
}

/*
 * The exporters and the HTML flame graph need the samples by stack; text and JSON do not. The
 * Chrome trace also needs the timeline.
 */
static unsigned model_flags(enum ls_format fmt)
{
	if (fmt == LS_FMT_CHROME)
		return LS_MODEL_STACKS | LS_MODEL_TIMELINE;
	return fmt == LS_FMT_HTML || fmt == LS_FMT_PPROF || fmt == LS_FMT_COLLAPSED ||
			       fmt == LS_FMT_COLLAPSED_TIME || fmt == LS_FMT_SPEEDSCOPE
		       ? LS_MODEL_STACKS
		       : 0;
}

int ls_render(const struct ls_render_req *r)
{
	const char *profile = r->profile, *base = r->base, *output = r->output;
	enum ls_format fmt = r->fmt;
	struct ls_model_opts mo = {model_flags(fmt), r->spark_paths, r->nspark_paths};
	struct ls_model *m, *bm = NULL;
	struct ls_diff *d = NULL;
	struct ls_outfile f;
	FILE *out;
	int err;

	if (!output)
		output = "-";
	if (ls_outfile__same(profile, output))
		return ls_err(-EINVAL, "refusing to write the report over its profile %s", profile);
	if (base && ls_outfile__same(base, output))
		return ls_err(-EINVAL, "refusing to write the report over the base profile %s",
			      base);
	err = ls_model__load_opts(profile, &mo, &m);
	if (err)
		return err;
	if (base) {
		/* the HTML's differential flame graph needs the base's stacks too */
		err = ls_model__load_flags(base, model_flags(fmt), &bm);
		if (!err && (err = ls_diff__build(m, bm, &d)))
			ls_err(err, "cannot compare %s with %s: %s", profile, base, strerror(-err));
		if (err)
			goto out_models;
	}
	err = ls_outfile__open(&f, output, LS_OUT_ANY, r->uid, r->gid);
	if (err)
		goto out_models;
	if (fmt == LS_FMT_PPROF && f.is_stdout && isatty(STDOUT_FILENO)) {
		ls_outfile__release(&f);
		err = ls_err(-EINVAL, "refusing to write gzipped pprof to a terminal; use -o FILE");
		goto out_models;
	}
	out = f.is_stdout ? stdout : fdopen(f.fd, "w");
	if (!out) {
		err = -errno;
	} else {
		if (!f.is_stdout)
			f.fd = -1; /* the stream owns it now */
		err = write_format(out, m, d, profile, base, fmt, r->top);
		if (f.is_stdout ? fflush(out) : fclose(out))
			err = err ?: -errno;
	}
	if (!err)
		err = ls_outfile__commit(&f) ? -EIO : 0;
	else if (err != -EPIPE)
		ls_err(err, "cannot write %s: %s", output, strerror(-err));
	ls_outfile__release(&f);
	if (err == -EPIPE)
		err = 0;
out_models:
	ls_diff__free(d);
	if (bm)
		ls_model__free(bm);
	ls_model__free(m);
	return err;
}

int ls_render__diff(const char *profile, const char *base, const char *output, enum ls_format fmt,
		    int top, int uid, int gid)
{
	struct ls_render_req r = {profile, base, output, fmt, top, uid, gid, NULL, 0};

	return ls_render(&r);
}

int ls_render__file(const char *profile, const char *output, enum ls_format fmt, int top, int uid,
		    int gid)
{
	return ls_render__diff(profile, NULL, output, fmt, top, uid, gid);
}
