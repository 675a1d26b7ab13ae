// SPDX-License-Identifier: MIT
/* Model -> format -> file, written to a temporary name and renamed so readers never see half. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "html.h"
#include "json.h"
#include "log.h"
#include "model.h"
#include "render.h"
#include "text.h"

static int write_format(FILE *out, const struct ls_model *m, enum ls_format fmt, int top)
{
	json_t *j;
	char *s;
	int err;

	switch (fmt) {
	case LS_FMT_TEXT:
		return ls_text__write(out, m, top);
	case LS_FMT_JSON:
		j = ls_json__lines(m);
		err = j ? json_dumpf(j, out, JSON_INDENT(1) | JSON_REAL_PRECISION(9)) : -ENOMEM;
		json_decref(j);
		if (!err)
			fputc('\n', out);
		return err ? -EIO : 0;
	case LS_FMT_HTML: {
		size_t len;

		s = ls_json__report_text(m, &len);
		if (!s)
			return -ENOMEM;
		err = ls_html__write(out, s, len, ls_model__meta(m, "scope"));
		free(s);
		return err;
	}
	}
	return -EINVAL;
}

int ls_render__file(const char *profile, const char *output, enum ls_format fmt, int top, int uid,
		    int gid)
{
	struct ls_model *m;
	char tmp[4096];
	FILE *out;
	int err;

	err = ls_model__load(profile, &m);
	if (err)
		return err;
	if (!output || !strcmp(output, "-")) {
		err = write_format(stdout, m, fmt, top);
		if (!err && fflush(stdout))
			err = -errno;
		ls_model__free(m);
		if (err && err != -EPIPE)
			return ls_err(err, "cannot write the report: %s", strerror(-err));
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", output, getpid());
	out = fopen(tmp, "we");
	if (!out) {
		err = -errno;
		ls_model__free(m);
		return ls_err(err, "cannot write %s: %s", output, strerror(-err));
	}
	err = write_format(out, m, fmt, top);
	ls_model__free(m);
	if (fclose(out) && !err)
		err = -errno;
	if (!err && uid >= 0 && chown(tmp, uid, gid))
		ls_warn(0, "cannot give %s to uid %d: %s", output, uid, strerror(errno));
	if (!err && rename(tmp, output))
		err = -errno;
	if (err) {
		unlink(tmp);
		return ls_err(err, "cannot write %s: %s", output, strerror(-err));
	}
	return 0;
}
