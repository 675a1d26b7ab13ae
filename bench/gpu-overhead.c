// SPDX-License-Identifier: MIT
/*
 * bench/gpu-overhead: what the injection library costs per kernel launch, on the fake CUDA driver
 * (tests/gpu/fake), each mode measured in a fresh process of the same run:
 *   none     no CUDA_INJECTION64_PATH: the baseline;
 *   idle     the library loaded, no tracer attached (semaphores zero): what every job pays;
 *   traced   the library loaded and bpf/gpu.bpf.c attached to its probes (root), records drained
 *            from the ring buffer into userspace/gpu_agg.c by a second thread, activity flushed in the
 *            timed region: what a profiled job pays per launch;
 *   sampled  traced with LINESCOPE_GPU_SAMPLE=16 (one launch in 16 probed, on average);
 *   armed    the library loaded with its probe semaphores set by hand and no uprobe installed:
 *            everything the library does for a tracer (timestamps, batching, names) without the
 *            kernel's part: the library's own cost;
 *   probe    no library, but one USDT probe per launch fired from this program, with the same BPF
 *            handler and ring-buffer consumer: the kernel's share (uprobe trap, BPF, ring buffer),
 *            which the library cannot lower except by probing fewer launches.
 * and from a Python loop in an embedded CPython (bench/gpu_overhead_py.c), where the launching
 * thread has a frame chain for the library to read:
 *   py-none, py-none-new  no library: the baselines of the two loops below;
 *   py-probed  traced, every launch from one line, LINESCOPE_GPU_SAME_LOCATION=0: every launch
 *              probed (the cost before launches were batched);
 *   py-same    traced, every launch from one line: batched under the first (target <= 300 ns);
 *   py-new     traced, each launch from another line than the last: each batched with the
 *              frames the library walked (target <= 1 us);
 *   py-none-deep, py-deep  the same 32 frames deeper.
 * A launch is cudaLaunchKernel on the fake driver: runtime ENTER, driver ENTER, driver EXIT,
 * runtime EXIT callbacks and one kernel record, as CUDA does. The fake's own record building stands
 * in for CUPTI's. The launch-stack hook is the stub (no Python stack walk).
 *
 *   gpu-overhead --lib PATH [--launches N] [--rounds R]
 * Prints the verdict on the 2 us target; exits non-zero only when a mode could not be measured.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fakecuda.h"
#include "gpu_agg.h"
#include "gpu_overhead_py.h"
#include "gpu_test.skel.h"

#define TARGET_NS      2000.0
#define TARGET_SAME_NS 300.0  /* added per launch when a line launches many kernels */
#define TARGET_NEW_NS  1000.0 /* added per launch when every launch comes from a new line */
#define WARMUP	       2000

enum {
	M_NONE,
	M_IDLE,
	M_ARMED,
	M_TRACED,
	M_SAMPLED,
	M_PROBE,
	M_PY_NONE,
	M_PY_NONE_NEW,
	M_PY_PROBED,
	M_PY_SAME,
	M_PY_NEW,
	M_PY_NONE_DEEP,
	M_PY_DEEP,
	M_COUNT
};
static const char *const modes[M_COUNT] = {
	"none",	       "idle",	    "armed",   "traced", "sampled",	 "probe",  "py-none",
	"py-none-new", "py-probed", "py-same", "py-new", "py-none-deep", "py-deep"};

static _Atomic int stop;
static _Atomic __u64 consumed;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static void on_attr(void *ctx, const struct ls_gpu_attr *a)
{
	(void)ctx;
	(void)a;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct ls_gpu_agg *agg = ctx;
	const struct ls_sample *s = data;

	if (s->type == LS_REC_SAMPLE)
		ls_gpu_agg__launch(agg, s->pid, s->tid, s->ts, s->aux, s->weight_ns, s->tid);
	else if (s->type == LS_REC_GPU)
		ls_gpu_agg__record(agg, data, len);
	atomic_fetch_add(&consumed, 1);
	return 0;
}

static void *consumer(void *arg)
{
	struct ring_buffer *rb = arg;

	while (!atomic_load(&stop))
		ring_buffer__poll(rb, 10);
	while (ring_buffer__consume(rb) > 0)
		;
	return NULL;
}

/* The "probe" mode's stand-in for the library: its api probe, fired from this program. */
__attribute__((noinline)) static void probe_launch(__u32 corr)
{
	__s32 cbid = 211;
	__u32 cls = LS_GPU_API_LAUNCH;
	__u64 dur = 100;
	const char *name = "bench_kernel";

	DTRACE_PROBE5(linescope_gpu, api, corr, cbid, cls, dur, name);
}

struct find_lib {
	const char *path;
	ElfW(Addr) bias;
	int found;
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_lib *f = arg;

	(void)size;
	if (info->dlpi_name && !strcmp(info->dlpi_name, f->path)) {
		f->bias = info->dlpi_addr;
		f->found = 1;
		return 1;
	}
	return 0;
}

/*
 * Sets every USDT semaphore of the loaded library at path to 1, as the kernel does when a uprobe
 * with a reference counter is attached, without installing the uprobes. Returns how many.
 */
static int arm_semaphores(const char *path)
{
	struct find_lib f = {.path = path};
	Elf_Scn *scn = NULL;
	int fd, n = 0;
	Elf *elf;

	dl_iterate_phdr(find_lib, &f);
	if (!f.found || elf_version(EV_CURRENT) == EV_NONE)
		return -ENOENT;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		size_t off = 0, noff, doff;
		Elf_Data *data;
		GElf_Shdr sh;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			__u64 sema;

			if (nh.n_type != 3 || nh.n_descsz < 24 ||
			    strcmp((char *)data->d_buf + noff, "stapsdt"))
				continue;
			/* desc: pc, .stapsdt.base, semaphore (link-time addresses) */
			memcpy(&sema, (char *)data->d_buf + doff + 16, sizeof(sema));
			if (sema) {
				*(volatile unsigned short *)(f.bias + sema) = 1;
				n++;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return n;
}

static int self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* One mode, in this (fresh) process: prints "ns_per_launch records" on stdout. */
static int child(int mode, const char *lib, long launches, int rounds)
{
	int traced = mode == M_TRACED || mode == M_SAMPLED ||
		     (mode >= M_PY_PROBED && mode != M_PY_NONE_DEEP),
	    inject = mode != M_NONE && mode != M_PROBE && mode != M_PY_NONE &&
		     mode != M_PY_NONE_NEW && mode != M_PY_NONE_DEEP,
	    py = mode >= M_PY_NONE;
	struct bpf_link *l1 = NULL, *l2 = NULL;
	struct gpu_test *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct ls_gpu_agg *agg = NULL;
	struct ls_proc proc = {};
	__u32 pid = (__u32)getpid();
	char self[4096];
	double best = 0;
	pthread_t thr;
	long i;
	int r;

	if (inject)
		setenv("CUDA_INJECTION64_PATH", lib, 1);
	else
		unsetenv("CUDA_INJECTION64_PATH");
	if (mode == M_SAMPLED)
		setenv("LINESCOPE_GPU_SAMPLE", "16", 1);
	if (mode == M_PY_PROBED)
		setenv("LINESCOPE_GPU_SAME_LOCATION", "0", 1);
	if (self_path(self, sizeof(self)))
		return 1;
	if (traced || mode == M_PROBE) {
		if (ls_gpu_agg__new(NULL, on_attr, NULL, &agg))
			return 1;
		skel = gpu_test__open_and_load();
		if (!skel) {
			fprintf(stderr, "gpu-overhead: cannot load BPF (run as root): %s\n",
				strerror(errno));
			return 1;
		}
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.procs), &pid, &proc, BPF_ANY))
			return 1;
		/* the library is not mapped yet: the kernel sets its semaphores when it is */
		l1 = bpf_program__attach_usdt(skel->progs.handle_gpu_api, (int)pid,
					      traced ? lib : self, "linescope_gpu", "api", NULL);
		if (traced)
			l2 = bpf_program__attach_usdt(skel->progs.handle_gpu_record, (int)pid, lib,
						      "linescope_gpu", "record", NULL);
		rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, agg, NULL);
		if (!l1 || (traced && !l2) || !rb || pthread_create(&thr, NULL, consumer, rb)) {
			fprintf(stderr, "gpu-overhead: cannot attach the probes\n");
			return 1;
		}
	}
	if (inject && fakecuda_init() != 1) {
		fprintf(stderr, "gpu-overhead: the injection library did not initialise\n");
		return 1;
	}
	if (mode == M_ARMED && arm_semaphores(lib) != 2) {
		fprintf(stderr, "gpu-overhead: cannot find the two probe semaphores of %s\n", lib);
		return 1;
	}
	if (py) {
		const char *shape = mode == M_PY_NEW || mode == M_PY_NONE_NEW	  ? "new"
				    : mode == M_PY_DEEP || mode == M_PY_NONE_DEEP ? "deep"
										  : "same";

		if (gpu_overhead_py(shape, launches, WARMUP, rounds, &best))
			return 1;
		rounds = 0;
	}
	for (i = 0; !py && i < WARMUP; i++)
		fakecuda_launch("warmup_kernel", 1000, 0, FAKECUDA_RT);
	if (!py)
		fakecuda_flush();
	for (r = 0; r < rounds; r++) {
		__u64 t0 = now_ns();
		double ns;

		for (i = 0; i < launches; i++) {
			fakecuda_launch("bench_kernel", 1000, 0, FAKECUDA_RT);
			if (mode == M_PROBE)
				probe_launch((__u32)i);
		}
		fakecuda_flush();
		ns = (double)(now_ns() - t0) / (double)launches;
		if (!r || ns < best)
			best = ns;
	}
	if (skel) {
		usleep(200000);
		atomic_store(&stop, 1);
		pthread_join(thr, NULL);
	}
	printf("%.1f %llu\n", best, (unsigned long long)atomic_load(&consumed));
	ring_buffer__free(rb);
	bpf_link__destroy(l1);
	bpf_link__destroy(l2);
	gpu_test__destroy(skel);
	ls_gpu_agg__free(agg);
	return 0;
}

static int run_mode(const char *self, int mode, const char *lib, long launches, int rounds,
		    double *ns, unsigned long long *records)
{
	char cmd[10240];
	FILE *p;
	int ok;

	if (snprintf(cmd, sizeof(cmd), "'%s' --child %s --lib '%s' --launches %ld --rounds %d",
		     self, modes[mode], lib, launches, rounds) >= (int)sizeof(cmd))
		return -ENAMETOOLONG;
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	ok = fscanf(p, "%lf %llu", ns, records) == 2;
	if (pclose(p) != 0 || !ok)
		return -EIO;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: gpu-overhead --lib PATH [--launches N] [--rounds R]\n");
	exit(64);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"lib", required_argument, NULL, 'l'},
		{"launches", required_argument, NULL, 'n'},
		{"rounds", required_argument, NULL, 'r'},
		{"child", required_argument, NULL, 'c'},
		{},
	};
	const char *lib = NULL, *mode = NULL;
	unsigned long long records[M_COUNT] = {};
	double ns[M_COUNT] = {}, extra, floor;
	long launches = 100000;
	int c, rounds = 3, i;
	char self[4096];

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			lib = optarg;
			break;
		case 'n':
			launches = strtol(optarg, NULL, 10);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'c':
			mode = optarg;
			break;
		default:
			usage();
		}
	}
	if (!lib || launches <= 0 || rounds <= 0)
		usage();
	if (mode) {
		for (i = 0; i < M_COUNT; i++)
			if (!strcmp(mode, modes[i]))
				return child(i, lib, launches, rounds);
		usage();
	}
	if (self_path(self, sizeof(self)))
		return 1;
	for (i = 0; i < M_COUNT; i++) {
		if (run_mode(self, i, lib, launches, rounds, &ns[i], &records[i])) {
			fprintf(stderr, "gpu-overhead: mode %s failed\n", modes[i]);
			return 1;
		}
	}
	printf("gpu-overhead: %ld cudaLaunchKernel calls on the fake driver, best of %d rounds\n",
	       launches, rounds);
	printf("  %-8s %9.1f ns/launch  baseline (no injection library)\n", modes[M_NONE],
	       ns[M_NONE]);
	for (i = M_IDLE; i < M_PY_NONE; i++)
		printf("  %-8s %9.1f ns/launch  ratio %6.2fx  %+9.1f ns per launch\n", modes[i],
		       ns[i], ns[i] / ns[M_NONE], ns[i] - ns[M_NONE]);
	printf("from a Python loop (embedded CPython, a builtin that launches once):\n");
	printf("  %-11s %9.1f ns/launch  baseline, one line\n", modes[M_PY_NONE], ns[M_PY_NONE]);
	printf("  %-11s %9.1f ns/launch  baseline, two lines in turn\n", modes[M_PY_NONE_NEW],
	       ns[M_PY_NONE_NEW]);
	printf("  %-11s %9.1f ns/launch  baseline, two lines in turn 32 frames deeper\n",
	       modes[M_PY_NONE_DEEP], ns[M_PY_NONE_DEEP]);
	for (i = M_PY_PROBED; i < M_COUNT; i++) {
		double base = i == M_PY_NEW ? ns[M_PY_NONE_NEW] : ns[M_PY_NONE];

		if (i == M_PY_NONE_DEEP)
			continue;
		if (i == M_PY_DEEP)
			base = ns[M_PY_NONE_DEEP];
		printf("  %-11s %9.1f ns/launch  ratio %6.2fx  %+9.1f ns per launch\n", modes[i],
		       ns[i], ns[i] / base, ns[i] - base);
	}
	extra = ns[M_TRACED] - ns[M_NONE];
	floor = ns[M_PROBE] - ns[M_NONE];
	printf("  library's own work for a tracer (armed - none): %.1f ns per launch\n",
	       ns[M_ARMED] - ns[M_NONE]);
	printf("  kernel's share per probed launch (probe - none): %.1f ns (uprobe trap, BPF, ring "
	       "buffer)\n",
	       floor);
	printf("  ring-buffer records per launch while traced: %.2f\n",
	       (double)records[M_TRACED] / (double)(launches * rounds + WARMUP));
	printf("  target: traced overhead < %.0f ns per launch: %s (%.1f ns); library's own "
	       "work: %s; sampled 1/16: %s\n",
	       TARGET_NS, extra < TARGET_NS ? "met" : "MISSED", extra,
	       ns[M_ARMED] - ns[M_NONE] < TARGET_NS ? "met" : "MISSED",
	       ns[M_SAMPLED] - ns[M_NONE] < TARGET_NS ? "met" : "MISSED");
	extra = ns[M_PY_SAME] - ns[M_PY_NONE];
	printf("  target: one line launching many kernels <= %.0f ns per launch: %s (%.1f ns; every "
	       "launch probed: %.1f ns)\n",
	       TARGET_SAME_NS, extra <= TARGET_SAME_NS ? "met" : "MISSED", extra,
	       ns[M_PY_PROBED] - ns[M_PY_NONE]);
	extra = ns[M_PY_NEW] - ns[M_PY_NONE_NEW];
	printf("  target: every launch from a new line <= %.0f ns per launch: %s (%.1f ns; 32 frames "
	       "deeper: %.1f ns)\n",
	       TARGET_NEW_NS, extra <= TARGET_NEW_NS ? "met" : "MISSED", extra,
	       ns[M_PY_DEEP] - ns[M_PY_NONE_DEEP]);
	return 0;
}
