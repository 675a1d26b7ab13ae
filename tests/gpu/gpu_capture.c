// SPDX-License-Identifier: MIT
/*
 * gpu-capture: the GPU data path without the rest of the collector, for tests and the GPU check.
 * Loads bpf/gpu.bpf.c (with a test fork tracker), attaches to the injection library's USDT probes,
 * runs a command with CUDA_INJECTION64_PATH set, joins what arrives with userspace/gpu_agg.c and writes
 * JSON: per process and per launching thread (the cookie is the tid here; the collector uses the
 * Python stack instead), plus BPF and join counters.
 *
 *   gpu-capture --lib PATH [-o FILE] [--attach-on FILE] [--kernels] [--timeout S] -- CMD [ARG...]
 *
 * --attach-on FILE attaches the probes only once FILE exists, then creates FILE.attached: the
 * application decides when a profiler "arrives" (as with -p) and learns when it has.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <jansson.h>

#include "gpu_agg.h"
#include "gpu_test.skel.h"

struct thread_acc {
	__u32 pid, tid;
	__u64 launches, api_ns, api_by_class[LS_GPU_API_NCLASS];
	__u64 gpu_ns, kernels, copies, sets, allocs, frees;
	__u64 copy_bytes, set_bytes, alloc_bytes, mem_peak, mem_nvml;
	__u64 nccl_ns, nccl_kernels, graph_kernels, graph_ns, no_timing;
	json_t *names; /* name -> count */
};

struct kernel_row {
	__u32 pid, tid, corr, name_id, flags;
	__u64 gpu_ns;
};

struct launch_row {
	__u32 pid, corr;
};

static struct {
	struct ls_gpu_agg *agg;
	struct thread_acc *acc;
	size_t nacc, capacc;
	struct kernel_row *kernels;
	size_t nkern, capkern;
	int keep_kernels;
	struct launch_row *launches;
	size_t nlaunch, caplaunch;
	__u64 other_records;
} C;

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "gpu-capture: out of memory\n");
		exit(1);
	}
	return p;
}

static struct thread_acc *acc_of(__u32 pid, __u32 tid)
{
	size_t i;

	for (i = 0; i < C.nacc; i++)
		if (C.acc[i].pid == pid && C.acc[i].tid == tid)
			return &C.acc[i];
	C.acc = grow(C.acc, &C.capacc, C.nacc, sizeof(*C.acc));
	memset(&C.acc[C.nacc], 0, sizeof(*C.acc));
	C.acc[C.nacc].pid = pid;
	C.acc[C.nacc].tid = tid;
	C.acc[C.nacc].names = json_object();
	return &C.acc[C.nacc++];
}

/* Launches the library walked itself: the cookie is the launching tid here too. */
static __u64 walked_cookie(void *ctx, __u32 pid, __u32 tid, const struct ls_frame *f, __u32 n)
{
	(void)ctx;
	(void)pid;
	(void)f;
	(void)n;
	return tid;
}

static const struct ls_gpu_agg_opts agg_opts = {.sz = sizeof(agg_opts), .stack = walked_cookie};

static void on_attr(void *ctx, const struct ls_gpu_attr *a)
{
	/* the cookie is the launching tid; 0 collects work whose launch was never seen */
	struct thread_acc *t = acc_of(a->pid, (__u32)a->cookie);
	const char *name;

	if (a->flags & LS_GPU_ATTR_API) {
		t->launches++;
		t->api_ns += a->api_ns;
		if (a->api_class < LS_GPU_API_NCLASS)
			t->api_by_class[a->api_class] += a->api_ns;
		return;
	}
	t->gpu_ns += a->gpu_ns;
	if (a->mem_peak > t->mem_peak)
		t->mem_peak = a->mem_peak;
	if (a->mem_nvml > t->mem_nvml)
		t->mem_nvml = a->mem_nvml;
	if (a->flags & LS_GPU_ATTR_NO_TIMING)
		t->no_timing += a->count;
	switch (a->kind) {
	case LS_GPU_ACT_KERNEL:
		t->kernels += a->count;
		if (a->flags & LS_GPU_ATTR_NCCL) {
			t->nccl_ns += a->gpu_ns;
			t->nccl_kernels += a->count;
		}
		if (a->flags & LS_GPU_ATTR_GRAPH) {
			t->graph_kernels += a->count;
			t->graph_ns += a->gpu_ns;
		}
		name = ls_gpu_agg__name(C.agg, a->pid, a->name_id);
		if (name) {
			json_t *c = json_object_get(t->names, name);

			json_object_set_new(
				t->names, name,
				json_integer((c ? json_integer_value(c) : 0) + a->count));
		}
		if (C.keep_kernels) {
			C.kernels = grow(C.kernels, &C.capkern, C.nkern, sizeof(*C.kernels));
			C.kernels[C.nkern++] = (struct kernel_row){
				.pid = a->pid,
				.tid = (__u32)a->cookie,
				.corr = a->corr,
				.name_id = a->name_id,
				.flags = a->flags,
				.gpu_ns = a->gpu_ns,
			};
		}
		break;
	case LS_GPU_ACT_MEMCPY:
		t->copies += a->count;
		t->copy_bytes += a->bytes;
		break;
	case LS_GPU_ACT_MEMSET:
		t->sets += a->count;
		t->set_bytes += a->bytes;
		break;
	case LS_GPU_ACT_ALLOC:
		t->allocs += a->count;
		t->alloc_bytes += a->bytes;
		break;
	case LS_GPU_ACT_FREE:
		t->frees += a->count;
		break;
	}
}

static int on_event(void *ctx, void *data, size_t len)
{
	const struct ls_sample *s = data;
	__u32 type;

	if (len < sizeof(__u32))
		return 0;
	type = *(const __u32 *)data;
	if (type == LS_REC_SAMPLE && len >= sizeof(*s) && s->kind == LS_SAMPLE_GPULAUNCH) {
		C.launches = grow(C.launches, &C.caplaunch, C.nlaunch, sizeof(*C.launches));
		C.launches[C.nlaunch++] =
			(struct launch_row){.pid = s->pid, .corr = LS_GPU_AUX_CORR(s->aux)};
		return ls_gpu_agg__launch(C.agg, s->pid, s->tid, s->ts, s->aux, s->weight_ns,
					  s->tid) < 0
			       ? -ENOMEM
			       : 0;
	}
	if (type == LS_REC_GPU) {
		ls_gpu_agg__record(C.agg, data, len);
		return 0;
	}
	C.other_records++;
	return 0;
}

static int cmp_launch(const void *a, const void *b)
{
	const struct launch_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static __u64 duplicate_corrs(void)
{
	__u64 dup = 0;
	size_t i;

	if (C.nlaunch)
		qsort(C.launches, C.nlaunch, sizeof(*C.launches), cmp_launch);
	for (i = 1; i < C.nlaunch; i++)
		if (!cmp_launch(&C.launches[i - 1], &C.launches[i]))
			dup++;
	return dup;
}

static json_t *hello_json(const struct ls_gpu_hello *h)
{
	if (!h)
		return json_null();
	return json_pack("{s:i,s:s,s:i,s:i,s:i,s:i,s:i,s:b,s:s}", "status", (int)h->status,
			 "message", h->message, "cupti_err", h->cupti_err, "cupti_version",
			 (int)h->cupti_version, "kinds", (int)h->kinds, "ncallbacks",
			 (int)h->ncallbacks, "epoch", (int)h->epoch, "nvml", h->nvml, "cupti_path",
			 h->cupti_path);
}

static json_t *status_json(const struct ls_gpu_status *s)
{
	if (!s)
		return json_null();
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:b,s:s}", "dropped",
			 (json_int_t)s->dropped, "declined", (json_int_t)s->declined, "records",
			 (json_int_t)s->records, "unknown", (json_int_t)s->unknown, "no_timing",
			 (json_int_t)s->no_timing, "bad_buffers", (json_int_t)s->bad_buffers,
			 "probe_skipped", (json_int_t)s->probe_skipped, "unsampled",
			 (json_int_t)s->unsampled, "last_err", s->last_err, "nvml", s->nvml,
			 "nvml_note", s->nvml_note);
}

#define JI(v) ((json_int_t)(v))

static json_t *thread_json(const struct thread_acc *t)
{
	static const char *const cls[LS_GPU_API_NCLASS] = {"none",   "launch", "graph", "memcpy",
							   "memset", "alloc",  "free",	"sync"};
	json_t *by = json_object();
	int i;

	for (i = 0; i < LS_GPU_API_NCLASS; i++)
		if (t->api_by_class[i])
			json_object_set_new(by, cls[i], json_integer(JI(t->api_by_class[i])));
	return json_pack("{s:i,s:I,s:I,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,"
			 "s:I,s:I,s:I,s:O}",
			 "tid", (int)t->tid, "launches", JI(t->launches), "api_ns", JI(t->api_ns),
			 "api_ns_by_class", by, "gpu_ns", JI(t->gpu_ns), "kernels", JI(t->kernels),
			 "copies", JI(t->copies), "sets", JI(t->sets), "allocs", JI(t->allocs),
			 "frees", JI(t->frees), "copy_bytes", JI(t->copy_bytes), "set_bytes",
			 JI(t->set_bytes), "alloc_bytes", JI(t->alloc_bytes), "mem_peak",
			 JI(t->mem_peak), "mem_nvml", JI(t->mem_nvml), "nccl_ns", JI(t->nccl_ns),
			 "nccl_kernels", JI(t->nccl_kernels), "graph_kernels", JI(t->graph_kernels),
			 "graph_ns", JI(t->graph_ns), "no_timing", JI(t->no_timing), "kernel_names",
			 t->names);
}

static json_t *procs_json(void)
{
	json_t *procs = json_array();
	struct ls_gpu_proc_info pi;
	__u32 i, j;
	size_t k;

	for (i = 0; i < ls_gpu_agg__proc_count(C.agg); i++) {
		json_t *devs = json_array(), *threads = json_array(), *p;

		ls_gpu_agg__proc_info(C.agg, i, &pi);
		for (j = 0; j < pi.ndevices; j++) {
			const struct ls_gpu_device *d = &pi.devices[j];

			json_array_append_new(
				devs,
				json_pack("{s:i,s:i,s:i,s:i,s:I,s:s,s:s,s:i,s:s}", "ordinal",
					  (int)d->ordinal, "nvml_index", (int)d->nvml_index,
					  "flags", (int)d->flags, "cc", (int)d->cc, "mem_total",
					  JI(d->mem_total), "name", d->name, "driver", d->driver,
					  "cuda_driver", (int)d->cuda_driver, "uuid", d->uuid));
		}
		for (k = 0; k < C.nacc; k++)
			if (C.acc[k].pid == pi.pid)
				json_array_append_new(threads, thread_json(&C.acc[k]));
		p = json_pack("{s:i,s:i,s:o,s:o,s:b,s:o,s:I,s:I,s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:I,"
			      "s:o}",
			      "pid", (int)pi.pid, "lib_pid", (int)pi.lib_pid, "hello",
			      hello_json(pi.hello), "status", status_json(pi.status), "exited",
			      pi.exited, "devices", devs, "peak_alloc", JI(pi.peak_alloc),
			      "peak_nvml", JI(pi.peak_nvml), "nvml_samples", (int)pi.nvml_samples,
			      "nvml_not_listed", (int)pi.nvml_not_listed, "launches",
			      JI(pi.launches), "activities", JI(pi.activities), "orphans",
			      JI(pi.orphans), "lost_records", JI(pi.lost_records), "gpu_ns",
			      JI(pi.gpu_ns), "api_ns", JI(pi.api_ns), "threads", threads);
		json_array_append_new(procs, p);
	}
	return procs;
}

static json_t *kernels_json(void)
{
	json_t *rows = json_array();
	const char *name;
	size_t i;

	for (i = 0; i < C.nkern; i++) {
		const struct kernel_row *k = &C.kernels[i];

		name = ls_gpu_agg__name(C.agg, k->pid, k->name_id);
		json_array_append_new(rows, json_pack("[i,i,i,I,s,i]", (int)k->pid, (int)k->tid,
						      (int)k->corr, JI(k->gpu_ns), name ? name : "",
						      (int)k->flags));
	}
	return rows;
}

static int attach(struct gpu_test *skel, const char *lib, struct bpf_link **links)
{
	links[0] = bpf_program__attach_usdt(skel->progs.handle_gpu_api, -1, lib, "linescope_gpu",
					    "api", NULL);
	links[1] = bpf_program__attach_usdt(skel->progs.handle_gpu_record, -1, lib, "linescope_gpu",
					    "record", NULL);
	if (!links[0] || !links[1]) {
		fprintf(stderr, "gpu-capture: cannot attach to the USDT probes of %s: %s\n", lib,
			strerror(errno));
		return -1;
	}
	return 0;
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

static void usage(void)
{
	fprintf(stderr, "usage: gpu-capture --lib PATH [-o FILE] [--attach-on FILE] [--kernels] "
			"[--timeout S] -- CMD [ARG...]\n");
	exit(64);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"lib", required_argument, NULL, 'l'},
		{"output", required_argument, NULL, 'o'},
		{"attach-on", required_argument, NULL, 'a'},
		{"kernels", no_argument, NULL, 'k'},
		{"timeout", required_argument, NULL, 't'},
		{},
	};
	const char *lib = NULL, *outpath = NULL, *attach_on = NULL;
	struct bpf_link *links[2] = {};
	struct gpu_test *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct ls_proc proc = {};
	__u64 timeout_s = 300, t0, exited_at = 0;
	int c, go[2], status = -1, attached, rc = 1;
	json_t *out;
	pid_t child;
	__u32 cpid;

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			lib = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'a':
			attach_on = optarg;
			break;
		case 'k':
			C.keep_kernels = 1;
			break;
		case 't':
			timeout_s = strtoull(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (!lib || optind >= argc)
		usage();
	if (access(lib, R_OK)) {
		fprintf(stderr, "gpu-capture: %s: %s\n", lib, strerror(errno));
		return 1;
	}
	if (ls_gpu_agg__new(&agg_opts, on_attr, NULL, &C.agg))
		return 1;
	skel = gpu_test__open_and_load();
	if (!skel) {
		fprintf(stderr, "gpu-capture: cannot load the BPF programs (root needed): %s\n",
			strerror(errno));
		return 1;
	}
	if (gpu_test__attach(skel)) { /* the fork tracker */
		fprintf(stderr, "gpu-capture: cannot attach the fork tracker\n");
		goto out;
	}
	if (!attach_on && attach(skel, lib, links))
		goto out;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, NULL, NULL);
	if (!rb || pipe(go))
		goto out;

	child = fork();
	if (child == 0) {
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		setenv("CUDA_INJECTION64_PATH", lib, 1);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "gpu-capture: cannot run %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	cpid = (__u32)child;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.procs), &cpid, &proc, BPF_ANY) ||
	    write(go[1], "g", 1) != 1) {
		kill(child, SIGKILL);
		goto out;
	}
	close(go[1]);
	t0 = now_ms();
	attached = !attach_on;
	for (;;) {
		ring_buffer__poll(rb, 50);
		if (!attached && access(attach_on, F_OK) == 0) {
			char done[4096];
			FILE *f;

			if (attach(skel, lib, links)) {
				kill(child, SIGKILL);
				goto out;
			}
			attached = 1;
			snprintf(done, sizeof(done), "%s.attached", attach_on);
			f = fopen(done, "w");
			if (f)
				fclose(f);
		}
		if (!exited_at && waitpid(child, &status, WNOHANG) == child)
			exited_at = now_ms();
		/* records flushed at exit may still be on their way: drain a little longer */
		if (exited_at && now_ms() - exited_at > 300)
			break;
		if (!exited_at && now_ms() - t0 > timeout_s * 1000) {
			fprintf(stderr, "gpu-capture: %s ran over %llu s; killed\n", argv[optind],
				(unsigned long long)timeout_s);
			kill(child, SIGKILL);
		}
	}
	while (ring_buffer__consume(rb) > 0)
		;
	ls_gpu_agg__finish(C.agg);

	{
		struct ls_gpu_agg_stats st;
		struct ls_gpu_bpf_stats *b = &skel->bss->gpu_stats;

		ls_gpu_agg__stats(C.agg, &st);
		out = json_pack(
			"{s:i,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I},s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,"
			"s:I,s:I,s:I,s:I},s:I,s:I,s:o}",
			"exit_status",
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), "bpf",
			"api_calls", JI(b->api_calls), "records", JI(b->records), "bad_len",
			JI(b->bad_len), "read_fail", JI(b->read_fail), "rb_drops", JI(b->rb_drops),
			"not_target", JI(b->not_target), "bad_sub", JI(b->bad_sub), "launch_fail",
			JI(b->launch_fail), "agg", "records", JI(st.records), "bad_records",
			JI(st.bad_records), "launches", JI(st.launches), "activities",
			JI(st.activities), "attributed", JI(st.attributed), "orphans",
			JI(st.orphans), "evicted", JI(st.evicted), "lost_records",
			JI(st.lost_records), "same_loc", JI(st.same_loc), "walked", JI(st.walked),
			"same_loc_lost", JI(st.same_loc_lost), "duplicate_launch_corrs",
			JI(duplicate_corrs()), "other_records", JI(C.other_records), "procs",
			procs_json());
	}
	if (C.keep_kernels)
		json_object_set_new(out, "kernels", kernels_json());
	if (outpath ? json_dump_file(out, outpath, JSON_INDENT(1))
		    : json_dumpf(out, stdout, JSON_INDENT(1))) {
		fprintf(stderr, "gpu-capture: cannot write %s\n", outpath ? outpath : "stdout");
		goto out;
	}
	json_decref(out);
	rc = 0;
out:
	ring_buffer__free(rb);
	bpf_link__destroy(links[0]);
	bpf_link__destroy(links[1]);
	gpu_test__destroy(skel);
	ls_gpu_agg__free(C.agg);
	return rc;
}
