/* SPDX-License-Identifier: MIT */
/* Rendering a stored profile to a file or standard output, in one of the report formats. */
#ifndef LS_RENDER_H
#define LS_RENDER_H

/*
 * Report formats. The folded stacks come in two weights, --weight samples (LS_FMT_COLLAPSED) and
 * --weight time (LS_FMT_COLLAPSED_TIME): a format is all that the renderer is given.
 */
enum ls_format {
	LS_FMT_HTML,
	LS_FMT_TEXT,
	LS_FMT_JSON,
	LS_FMT_PPROF,
	LS_FMT_COLLAPSED,
	LS_FMT_COLLAPSED_TIME,
	LS_FMT_SPEEDSCOPE,
	LS_FMT_CHROME, /* Trace Event JSON (chrome-trace) */
};

/*
 * Renders the profile at `profile` as fmt into `output` (NULL or "-": standard output).
 * top: lines shown by the text format (0: default). A written file is chowned to uid/gid
 * unless they are -1. One-line errors are logged. Returns 0 or a negative errno.
 */
int ls_render__file(const char *profile, const char *output, enum ls_format fmt, int top, int uid,
		    int gid);

/*
 * The same for `report PROFILE --diff BASE` (html, text or json): the profile compared with base
 * (diff.h). base NULL: ls_render__file().
 */
int ls_render__diff(const char *profile, const char *base, const char *output, enum ls_format fmt,
		    int top, int uid, int gid);

/* Everything a rendering takes; spark_paths: `report --spark-events` logs joined with it. */
struct ls_render_req {
	const char *profile, *base, *output;
	enum ls_format fmt;
	int top, uid, gid;
	const char *const *spark_paths;
	size_t nspark_paths;
};

int ls_render(const struct ls_render_req *r);

#endif
