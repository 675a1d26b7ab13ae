// SPDX-License-Identifier: MIT
/* linescope-bpf: parse the command line, then record or render. No logic of its own. */
#include <stdlib.h>
#include <unistd.h>
#include "cli.h"
#include "log.h"
#include "outfile.h"
#include "render.h"
#include "session.h"

int main(int argc, char **argv)
{
	struct ls_opts opts;
	int rc;

	ls_cli__parse(argc, argv, &opts);
	ls_log_set_level(opts.quiet ? LS_LOG_QUIET : opts.verbose);
	if (opts.report) {
		int uid, gid;

		/* under sudo the report belongs to whoever ran it, as a recorded one does */
		ls_outfile__owner(&uid, &gid);
		rc = ls_render__diff(opts.profile, opts.diff_base, opts.output, opts.format,
				     opts.top, uid, gid);
		rc = rc ? 1 : 0;
	} else {
		rc = ls_session__run(&opts, argc, argv);
	}
	ls_cli__release(&opts);
	return rc;
}
