// SPDX-License-Identifier: MIT
/* argp tables for both subcommands, and the flag-combination checks, in one place. */
#include <argp.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "outfile.h"
#include "push.h"

const char *argp_program_version = "linescope-bpf " LS_VERSION;

/*
 * argp wraps at 79 columns: paragraphs are single lines for it to fill, example lines are kept
 * shorter than that.
 */
static const char record_doc[] =
	"Line-level profiler for Python processes, system-wide, on eBPF.\n"
	"\n"
	"USAGE: linescope-bpf [OPTIONS] (-p PID,... | -c CGROUP | -- COMMAND ...)\n"
	"       linescope-bpf report PROFILE [-o FILE] [--format FORMAT]\n"
	"       linescope-bpf merge PROFILE... -o JOB.lsprof\n"
	"       linescope-bpf push PROFILE URL [--name APP] [--tenant ID]\n"
	"\n"
	"Samples every thread of the target processes and their descendants, attributes time to "
	"Python source lines, and writes a profile (--profile) and a self-contained HTML report (-o) "
	"when the targets are gone, after -d seconds, or on Ctrl-C/SIGTERM.\n"
	"\n"
	"EXAMPLES:\n"
	"  linescope-bpf -- python3 train.py   # launch a command and its children\n"
	"  linescope-bpf -p 4242 -d 30         # attach to a running process for 30 s\n"
	"  linescope-bpf -c system.slice/job   # every process of a cgroup v2 group\n"
	"  linescope-bpf -F 499 -o out.html -- python3 app.py\n"
	"  linescope-bpf report linescope.lsprof --format text\n";

static const char report_doc[] =
	"Re-render a stored profile, or export it for other tools (docs/exports.md).\n"
	"\n"
	"USAGE: linescope-bpf report PROFILE [-o FILE] [--format FORMAT] [--weight W]\n"
	"       linescope-bpf report NEW --diff BASE [-o FILE] [--format html|text|json]\n"
	"\n"
	"FORMATS:\n"
	"  html        the self-contained report (default)\n"
	"  text        hottest lines first\n"
	"  json        lines, functions, files and processes (docs/json-output.md)\n"
	"  pprof       gzipped profile.proto for go tool pprof, Parca, Pyroscope\n"
	"  collapsed   folded stacks for flamegraph.pl, inferno, speedscope\n"
	"  speedscope  speedscope's JSON, one profile per thread\n"
	"\n"
	"EXAMPLES:\n"
	"  linescope-bpf report linescope.lsprof -o report.html\n"
	"  linescope-bpf report linescope.lsprof --format text | head -40\n"
	"  linescope-bpf report linescope.lsprof --format json > lines.json\n"
	"  linescope-bpf report linescope.lsprof --format pprof -o cpu.pb.gz\n"
	"  linescope-bpf report linescope.lsprof --format collapsed > stacks.folded\n"
	"  linescope-bpf report linescope.lsprof --format collapsed --weight time\n"
	"  linescope-bpf report new.lsprof --diff old.lsprof --format text\n";

static const char merge_doc[] =
	"Merge the profiles of several hosts or ranks of one job into one (docs/distributed.md).\n"
	"\n"
	"USAGE: linescope-bpf merge PROFILE... -o JOB.lsprof\n"
	"\n"
	"Every process keeps its host and rank; times are put on the earliest profile's clock, "
	"across hosts through the wall clock each profile read at its start. The profiles must be "
	"of one mode (wall or cpu).\n"
	"\n"
	"EXAMPLES:\n"
	"  linescope-bpf merge node0.lsprof node1.lsprof -o job.lsprof\n"
	"  linescope-bpf report job.lsprof -o job.html\n";

static const char push_doc[] =
	"Send a stored profile as pprof to a Pyroscope-compatible server (docs/distributed.md).\n"
	"\n"
	"USAGE: linescope-bpf push PROFILE URL [--name APP] [--tenant ID]\n"
	"\n"
	"POSTs URL/ingest?name=APP{host=...}&from=&until=&format=pprof, as --push does at the end of "
	"a recording; five tries with back-off. Exit status 75 when it could not be delivered.\n";

enum {
	OPT_PROFILE = 0x100,
	OPT_MODE,
	OPT_MEMORY,
	OPT_TRACE,
	OPT_SAMPLE,
	OPT_GPU,
	OPT_TIMELINE,
	OPT_FORMAT,
	OPT_TOP,
	OPT_WEIGHT,
	OPT_DIFF,
	OPT_PUSH,
	OPT_NAME,
	OPT_ROTATE,
	OPT_KEEP,
	OPT_TENANT,
	OPT_SPARK,
	OPT_UNLOAD,
	OPT_SAMPLER,
};

static const struct argp_option record_opts[] = {
	{"pid", 'p', "PID[,PID...]", 0, "Profile these running processes (and their descendants)",
	 0},
	{"cgroup", 'c', "PATH", 0,
	 "Profile every process in this cgroup v2 group and below "
	 "(absolute, or relative to the cgroup v2 mount)",
	 0},
	{"duration", 'd', "SECONDS", 0, "Stop after this long", 0},
	{"frequency", 'F', "HZ", 0, "Samples per second per thread (default 999)", 0},
	{"output", 'o', "FILE.html", 0, "Report file (default linescope.html)", 0},
	{"profile", OPT_PROFILE, "FILE.lsprof", 0, "Profile file (default linescope.lsprof)", 0},
	{"mode", OPT_MODE, "cpu|wall", 0, "Time to attribute: on-CPU only, or wall (default)", 0},
	{"memory", OPT_MEMORY, NULL, 0, "Attribute resident memory growth to lines", 0},
	{"trace", OPT_TRACE, NULL, 0, "Exact line hits and per-hit time (python-usdt)", 0},
	{"push", OPT_PUSH, "URL", 0,
	 "At the end, also send the profile as pprof to this Pyroscope-compatible server "
	 "(POST URL/ingest; docs/distributed.md)",
	 0},
	{"name", OPT_NAME, "APP", 0, "--push: the application name (default linescope)", 0},
	{"tenant", OPT_TENANT, "ID", 0,
	 "--push: the tenant (X-Scope-OrgID) of a multi-tenant server", 0},
	{"rotate", OPT_ROTATE, "SECONDS", 0,
	 "A profile per interval: NAME-<UTC start>.lsprof beside --profile NAME (each pushed with "
	 "--push)",
	 0},
	{"keep", OPT_KEEP, "N", 0, "--rotate: keep the newest N interval profiles only", 0},
	{"sample", OPT_SAMPLE, NULL, 0, "With --trace: keep sampling too (mixed collection)", 0},
	{"gpu", OPT_GPU, NULL, 0, "Attribute CUDA kernels, copies and memory to lines", 0},
	{"sampler", OPT_SAMPLER, "timer|remote", 0,
	 "On-CPU samples: from a timer interrupt on every CPU (default), or read by our own "
	 "thread from the running targets (no interrupt on their CPUs, no Python/native/system "
	 "split; docs/overhead.md)",
	 0},
	{"timeline", OPT_TIMELINE, NULL, 0,
	 "Also record when each sample and wait happened (for report --format chrome-trace)", 0},
	{"spark-events", OPT_SPARK, "PATH", 0,
	 "Read Spark's event logs here while the job runs (a log, or spark.eventLog.dir); "
	 "repeatable (docs/spark.md)",
	 0},
	{"unload", OPT_UNLOAD, NULL, 0,
	 "Unload the BPF programs at the end instead of keeping them verified for the next run "
	 "(they hold about 70 MB of kernel memory meanwhile; docs/startup.md)",
	 0},
	{"quiet", 'q', NULL, 0, "No live status and no summary", 0},
	{"verbose", 'v', NULL, 0, "More diagnostics (-vv: also libbpf's)", 0},
	{},
};

static const struct argp_option report_opts[] = {
	{"output", 'o', "FILE", 0, "Write here instead of standard output", 0},
	{"format", OPT_FORMAT, "FORMAT", 0,
	 "Output format: html (default), text, json, pprof, collapsed, speedscope or chrome-trace",
	 0},
	{"top", OPT_TOP, "N", 0, "Text format: number of lines to show (default 40)", 0},
	{"weight", OPT_WEIGHT, "samples|time", 0,
	 "Collapsed format: weigh stacks by on-CPU samples (default) or by time in microseconds "
	 "(on-CPU and, in wall mode, off-CPU)",
	 0},
	{"diff", OPT_DIFF, "BASE", 0,
	 "Compare with the profile BASE: each line's, function's and file's change in Time", 0},
	{"spark-events", OPT_SPARK, "PATH", 0,
	 "Join these Spark event logs (a log, or a directory of them) with the profile; "
	 "repeatable",
	 0},
	{"verbose", 'v', NULL, 0, "More diagnostics", 0},
	{"quiet", 'q', NULL, 0, "Errors only", 0},
	{},
};

static const struct argp_option push_opts[] = {
	{"name", OPT_NAME, "APP", 0, "The application name (default linescope)", 0},
	{"tenant", OPT_TENANT, "ID", 0, "The tenant (X-Scope-OrgID) of a multi-tenant server", 0},
	{"verbose", 'v', NULL, 0, "More diagnostics", 0},
	{"quiet", 'q', NULL, 0, "Errors only", 0},
	{},
};

static const struct argp_option merge_opts[] = {
	{"output", 'o', "FILE", 0, "The merged profile (required)", 0},
	{"verbose", 'v', NULL, 0, "More diagnostics", 0},
	{"quiet", 'q', NULL, 0, "Errors only", 0},
	{},
};

/* One line on stderr and exit 64: argp_error() would add a second "Try --help" line. */
static void __attribute__((noreturn, format(printf, 2, 3)))
usage_error(struct argp_state *state, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "linescope-bpf: %s (see --help)\n", msg);
	exit(LS_EXIT_USAGE);
}

static long parse_long(struct argp_state *state, const char *arg, long min, long max,
		       const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		usage_error(state, "invalid %s '%s' (expected %ld..%ld)", what, arg, min, max);
	return v;
}

static void spark_arg(struct argp_state *state, struct ls_opts *o, const char *arg)
{
	const char **v;

	if (!*arg)
		usage_error(state, "--spark-events needs a path");
	if (o->nspark_events >= 64)
		usage_error(state, "too many --spark-events paths (at most 64)");
	v = realloc(o->spark_events, (o->nspark_events + 1) * sizeof(*v));
	if (!v)
		usage_error(state, "out of memory");
	o->spark_events = v;
	v[o->nspark_events++] = arg;
}

/* Sampling faster than this costs more than it tells (and loses samples to the ring buffer). */
#define LS_MAX_FREQUENCY 10000

/* kernel.perf_event_max_sample_rate, which perf_event_open() enforces; -1 when unreadable */
static long max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void parse_pids(struct argp_state *state, struct ls_opts *o, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	if (!copy)
		argp_failure(state, 1, ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		pid_t *v = realloc(o->pids, (o->npids + 1) * sizeof(*v));

		if (!v)
			argp_failure(state, 1, ENOMEM, "out of memory");
		o->pids = v;
		o->pids[o->npids++] = parse_long(state, tok, 1, INT_MAX, "pid");
	}
	free(copy);
	if (!o->npids)
		usage_error(state, "-p needs at least one pid");
}

/* A tenant goes into a request header as it is: only what Pyroscope allows (not echoed) */
static const char *tenant_arg(struct argp_state *state, const char *arg)
{
	if (ls_push__check_tenant(arg))
		usage_error(state, "invalid --tenant: 1 to 150 of A-Z a-z 0-9 ! - _ . * ' ( ), "
				   "not . or ..");
	return arg;
}

static error_t record_parse(int key, char *arg, struct argp_state *state)
{
	struct ls_opts *o = state->input;
	char *end;

	switch (key) {
	case 'p':
		parse_pids(state, o, arg);
		break;
	case 'c':
		o->cgroup = arg;
		break;
	case 'd':
		errno = 0;
		o->duration = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->duration > 0) || o->duration > 1e7)
			usage_error(state, "invalid duration '%s' (seconds, 0 < d <= 1e7)", arg);
		break;
	case 'F': {
		long cap = max_sample_rate(), max = LS_MAX_FREQUENCY, hz;

		if (cap > 0 && cap < max)
			max = cap;
		errno = 0;
		hz = strtol(arg, &end, 10);
		o->frequency = hz;
		if (errno || end == arg || *end || hz < 1 || hz > max)
			usage_error(state,
				    "invalid frequency '%s' (1..%ld Hz: at most %d, and "
				    "kernel.perf_event_max_sample_rate is %ld)",
				    arg, max, LS_MAX_FREQUENCY, cap);
		break;
	}
	case 'o':
		o->output = arg;
		break;
	case OPT_PROFILE:
		o->profile = arg;
		break;
	case OPT_MODE:
		if (!strcmp(arg, "wall"))
			o->mode = LS_TIME_WALL;
		else if (!strcmp(arg, "cpu"))
			o->mode = LS_TIME_CPU;
		else
			usage_error(state, "invalid mode '%s' (cpu or wall)", arg);
		break;
	case OPT_MEMORY:
		o->memory = true;
		break;
	case OPT_TRACE:
		o->trace = true;
		break;
	case OPT_SAMPLE:
		o->sample = true;
		break;
	case OPT_GPU:
		o->gpu = true;
		break;
	case OPT_SAMPLER:
		if (!strcmp(arg, "remote"))
			o->remote_sampler = true;
		else if (strcmp(arg, "timer"))
			usage_error(state, "invalid sampler '%s' (timer or remote)", arg);
		break;
	case OPT_TIMELINE:
		o->timeline = true;
		break;
	case OPT_UNLOAD:
		o->unload = true;
		break;
	case OPT_SPARK:
		spark_arg(state, o, arg);
		break;
	case OPT_PUSH:
		if (ls_push__check_url(arg))
			usage_error(state,
				    "invalid --push URL '%s' (http:// or https:// and a host)",
				    arg);
		o->push = arg;
		break;
	case OPT_NAME:
		o->name = arg;
		break;
	case OPT_TENANT:
		o->tenant = tenant_arg(state, arg);
		break;
	case OPT_ROTATE:
		o->rotate = parse_long(state, arg, 1, 10000000, "--rotate interval");
		break;
	case OPT_KEEP:
		o->keep = parse_long(state, arg, 1, 1000000, "--keep count");
		break;
	case 'q':
		o->quiet = true;
		break;
	case 'v':
		o->verbose++;
		break;
	case ARGP_KEY_ARG:
		usage_error(state, "unexpected argument '%s'; put the command to profile after --",
			    arg);
		break;
	case ARGP_KEY_END: {
		int kinds = (o->npids > 0) + (o->cgroup != NULL) + (o->command != NULL);

		if (kinds == 0)
			usage_error(state,
				    "nothing to profile: give -p PID, -c CGROUP or -- COMMAND");
		if (kinds > 1)
			usage_error(state, "-p, -c and -- COMMAND are exclusive; choose one");
		if (o->sample && !o->trace)
			usage_error(state, "--sample only makes sense with --trace");
		if (o->keep && !o->rotate)
			usage_error(state, "--keep only makes sense with --rotate");
		if (o->nspark_events && o->rotate)
			usage_error(state, "--spark-events does not go with --rotate yet: record "
					   "without --spark-events and join the logs with "
					   "`report --spark-events` on the merged profile");
		if ((o->tenant || o->name) && !o->push)
			usage_error(state, "--%s only makes sense with --push",
				    o->tenant ? "tenant" : "name");
		break;
	}
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct ls_opts *o = state->input;

	switch (key) {
	case 'o':
		o->output = arg;
		break;
	case OPT_FORMAT:
		if (!strcmp(arg, "html"))
			o->format = LS_FMT_HTML;
		else if (!strcmp(arg, "text"))
			o->format = LS_FMT_TEXT;
		else if (!strcmp(arg, "json"))
			o->format = LS_FMT_JSON;
		else if (!strcmp(arg, "pprof"))
			o->format = LS_FMT_PPROF;
		else if (!strcmp(arg, "collapsed"))
			o->format = LS_FMT_COLLAPSED;
		else if (!strcmp(arg, "speedscope"))
			o->format = LS_FMT_SPEEDSCOPE;
		else if (!strcmp(arg, "chrome-trace"))
			o->format = LS_FMT_CHROME;
		else
			usage_error(state,
				    "invalid format '%s' (html, text, json, pprof, collapsed, "
				    "speedscope or chrome-trace)",
				    arg);
		break;
	case OPT_WEIGHT:
		if (!strcmp(arg, "samples"))
			o->weight = LS_WEIGHT_SAMPLES;
		else if (!strcmp(arg, "time"))
			o->weight = LS_WEIGHT_TIME;
		else
			usage_error(state, "invalid weight '%s' (samples or time)", arg);
		break;
	case OPT_TOP:
		o->top = parse_long(state, arg, 1, 1000000, "line count");
		break;
	case OPT_DIFF:
		o->diff_base = arg;
		break;
	case OPT_SPARK:
		spark_arg(state, o, arg);
		break;
	case 'v':
		o->verbose++;
		break;
	case 'q':
		o->quiet = true;
		break;
	case ARGP_KEY_ARG:
		if (o->profile)
			usage_error(state, "unexpected argument '%s'", arg);
		o->profile = arg;
		break;
	case ARGP_KEY_END:
		if (!o->profile)
			usage_error(state, "missing PROFILE (a .lsprof file)");
		/* the other formats each have one weight: pprof carries them all side by side */
		if (o->weight != LS_WEIGHT_DEFAULT && o->format != LS_FMT_COLLAPSED)
			usage_error(state, "--weight applies to --format collapsed only");
		if (o->weight == LS_WEIGHT_TIME)
			o->format = LS_FMT_COLLAPSED_TIME;
		if (o->diff_base && o->format != LS_FMT_HTML && o->format != LS_FMT_TEXT &&
		    o->format != LS_FMT_JSON)
			usage_error(state, "--diff writes html, text or json only");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t merge_parse(int key, char *arg, struct argp_state *state)
{
	struct ls_opts *o = state->input;

	switch (key) {
	case 'o':
		o->output = arg;
		break;
	case 'v':
		o->verbose++;
		break;
	case 'q':
		o->quiet = true;
		break;
	case ARGP_KEY_ARG: {
		const char **v = realloc(o->inputs, (o->ninputs + 1) * sizeof(*v));

		if (!v)
			usage_error(state, "out of memory");
		o->inputs = v;
		o->inputs[o->ninputs++] = arg;
		break;
	}
	case ARGP_KEY_END:
		if (!o->ninputs)
			usage_error(state, "missing PROFILE (the .lsprof files to merge)");
		if (!o->output)
			usage_error(state, "missing -o FILE (the merged profile)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t push_parse(int key, char *arg, struct argp_state *state)
{
	struct ls_opts *o = state->input;

	switch (key) {
	case OPT_NAME:
		o->name = arg;
		break;
	case OPT_TENANT:
		o->tenant = tenant_arg(state, arg);
		break;
	case 'v':
		o->verbose++;
		break;
	case 'q':
		o->quiet = true;
		break;
	case ARGP_KEY_ARG:
		if (!o->profile) {
			o->profile = arg;
		} else if (!o->push) {
			if (ls_push__check_url(arg))
				usage_error(state,
					    "invalid URL '%s' (http:// or https:// and a host)",
					    arg);
			o->push = arg;
		} else {
			usage_error(state, "unexpected argument '%s'", arg);
		}
		break;
	case ARGP_KEY_END:
		if (!o->push)
			usage_error(state, "missing %s", o->profile ? "URL" : "PROFILE and URL");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Parses `linescope-bpf NAME ...` with a's options, when argv[1] is NAME. */
static bool subcommand(int argc, char **argv, const char *name, const struct argp *a,
		       struct ls_opts *o)
{
	if (argc < 2 || strcmp(argv[1], name))
		return false;
	argv[1] = argv[0];
	argp_parse(a, argc - 1, argv + 1, 0, NULL, o);
	return true;
}

void ls_cli__parse(int argc, char **argv, struct ls_opts *o)
{
	static const struct argp record_argp = {
		.options = record_opts,
		.parser = record_parse,
		.doc = record_doc,
	};
	static const struct argp report_argp = {
		.options = report_opts,
		.parser = report_parse,
		.args_doc = "PROFILE",
		.doc = report_doc,
	};
	static const struct argp merge_argp = {
		.options = merge_opts,
		.parser = merge_parse,
		.args_doc = "PROFILE...",
		.doc = merge_doc,
	};
	static const struct argp push_argp = {
		.options = push_opts,
		.parser = push_parse,
		.args_doc = "PROFILE URL",
		.doc = push_doc,
	};
	int n = argc;

	memset(o, 0, sizeof(*o));
	o->frequency = 999;
	o->mode = LS_TIME_WALL;
	o->top = 40;
	argp_err_exit_status = LS_EXIT_USAGE;

	if ((o->merge = subcommand(argc, argv, "merge", &merge_argp, o)) ||
	    (o->push_only = subcommand(argc, argv, "push", &push_argp, o)) ||
	    (o->report = subcommand(argc, argv, "report", &report_argp, o)))
		return;
	/* everything after the first "--" is the command, untouched by option parsing */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			n = i;
			if (i + 1 < argc)
				o->command = &argv[i + 1];
			break;
		}
	}
	if (n < argc && !o->command) {
		fprintf(stderr, "linescope-bpf: missing command after --\n");
		exit(LS_EXIT_USAGE);
	}
	argp_parse(&record_argp, n, argv, 0, NULL, o);
	if (!o->profile)
		o->profile = "linescope.lsprof";
	if (!o->output)
		o->output = "linescope.html";
	if (ls_outfile__same(o->output, o->profile)) {
		fprintf(stderr, "linescope-bpf: -o and --profile are one file: %s\n", o->profile);
		exit(LS_EXIT_USAGE);
	}
}

void ls_cli__release(struct ls_opts *o)
{
	free(o->pids);
	o->pids = NULL;
	free(o->inputs);
	o->inputs = NULL;
	free(o->spark_events);
	o->spark_events = NULL;
}
