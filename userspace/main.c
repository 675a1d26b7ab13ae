// SPDX-License-Identifier: MIT
/* linescope-bpf: parse the command line, then record and render, or render. No logic of its own. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "cli.h"
#include "log.h"
#include "merge.h"
#include "outfile.h"
#include "push.h"
#include "render.h"
#include "session.h"

/* The report of a recording, then the one-line summary; rc is the recording's exit status. */
static int render_recorded(const struct ls_opts *o, const struct ls_session_result *r, int rc)
{
	if (ls_render__file(r->profile, o->output, LS_FMT_HTML, 0, r->uid, r->gid))
		return r->command_failed ? rc : LS_EXIT_REPORT;
	if (!o->quiet)
		fprintf(stderr,
			"linescope-bpf: %llu samples from %u process%s in %.1fs; profile %s, report "
			"%s\n",
			(unsigned long long)r->samples, r->processes, r->processes == 1 ? "" : "es",
			r->elapsed_s, r->profile, o->output);
	return rc;
}

int main(int argc, char **argv)
{
	struct ls_opts opts;
	int rc;

	ls_cli__parse(argc, argv, &opts);
	ls_log_set_level(opts.quiet ? LS_LOG_QUIET : opts.verbose);
	if (opts.push_only) {
		rc = ls_push__run(opts.profile, opts.push, opts.name, opts.tenant);
		rc = rc == -ECOMM ? LS_EXIT_PUSH : rc ? 1 : 0;
	} else if (opts.merge) {
		int uid, gid;

		ls_outfile__owner(&uid, &gid);
		rc = ls_merge__run(opts.inputs, opts.ninputs, opts.output, uid, gid) ? 1 : 0;
	} else if (opts.report) {
		int uid, gid;

		/* under sudo the report belongs to whoever ran it, as a recorded one does */
		ls_outfile__owner(&uid, &gid);
		struct ls_render_req req = {
			.profile = opts.profile,
			.base = opts.diff_base,
			.output = opts.output,
			.fmt = opts.format,
			.top = opts.top,
			.uid = uid,
			.gid = gid,
			.spark_paths = opts.spark_events,
			.nspark_paths = (size_t)opts.nspark_events,
		};

		rc = ls_render(&req) ? 1 : 0;
	} else {
		struct ls_session_result res;

		rc = ls_session__run(&opts, argc, argv, &res);
		if (res.recorded)
			rc = render_recorded(&opts, &res, rc);
		/* sampling is over: a slow server delays nothing but the exit */
		if (res.recorded && opts.push && !res.pushed &&
		    ls_push__run(res.profile, opts.push, opts.name, opts.tenant))
			res.push_failed++;
		if (res.push_failed && !rc)
			rc = LS_EXIT_PUSH;
	}
	ls_cli__release(&opts);
	return rc;
}
