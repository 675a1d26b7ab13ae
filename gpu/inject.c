// SPDX-License-Identifier: MIT
/*
 * liblinescope_cupti.so: the CUDA injection library. The CUDA driver loads it from
 * CUDA_INJECTION64_PATH during cuInit() and calls InitializeInjection(). It subscribes to CUPTI's
 * API callbacks and activity records and hands both to BPF through two USDT probes (see
 * gpu/gpu_records.h). While no tracer holds the probes' semaphores it only returns from callbacks.
 *
 * This file holds the library's state, its settings, setup and the entry point; the records it
 * sends are in inject_records.c, CUPTI's activity buffers in inject_buffers.c and the CUDA API
 * callbacks in inject_api.c. The rules for code in all of them are in inject_int.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject_int.h"
#include "pyloc.h"

#define LS_EXPORT __attribute__((visibility("default")))

struct lib L = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.names_lock = PTHREAD_MUTEX_INITIALIZER,
	.pool_lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

void lib_log(int level, const char *fmt, ...)
{
	char line[320];
	va_list ap;
	int n;

	if (level > L.loglevel)
		return;
	n = snprintf(line, sizeof(line), "linescope-gpu[%d]: ", (int)getpid());
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	/* one write per message so lines of several processes do not interleave */
	if (write(STDERR_FILENO, line, strlen(line)) < 0)
		return;
}

__u32 env_u32(const char *name, __u32 def, __u32 lo, __u32 hi)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		lib_log(1, "ignoring %s=%s (expected %u..%u)", name, s, lo, hi);
		return def;
	}
	return (__u32)v;
}

static void on_fork_child(void)
{
	/* the child is another process: new records, new attach epoch, names announced again */
	L.pid = getpid();
	atomic_store(&L.seq, 0);
	atomic_store(&L.attached, 0);
	L.nvml_last_ns = 0;
}

static void on_exit_flush(void)
{
	if (!L.subscribed || getpid() != L.pid)
		return;
	if (L.same_loc)
		launches_send_all(); /* before the activity the flush delivers */
	if (L.activity_on && atomic_load(&L.attached))
		L.cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (!LINESCOPE_GPU_RECORD_ENABLED() || !atomic_load(&L.attached))
		return;
	pthread_mutex_lock(&L.lock);
	housekeeping(1);
	send_status(LS_GPU_EXIT);
	pthread_mutex_unlock(&L.lock);
}

static void fail(__u32 status, CUptiResult res, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(__u32 status, CUptiResult res, const char *fmt, ...)
{
	va_list ap;

	L.status = status;
	L.cupti_err = res;
	va_start(ap, fmt);
	vsnprintf(L.message, sizeof(L.message), fmt, ap);
	va_end(ap);
	lib_log(1, "%s", L.message);
}

static void setup(void)
{
	CUpti_SubscriberParams params = {};
	char why[160], holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
	CUptiResult res;
	__u32 sample;

	L.loglevel = (int)env_u32("LINESCOPE_GPU_LOG", 1, 0, 2);
	if (!env_u32("LINESCOPE_GPU", 1, 0, 1)) {
		L.status = LS_GPU_ST_DISABLED;
		return;
	}
	L.buffer_size = env_u32("LINESCOPE_GPU_BUFFER_KB", 256, 16, 65536) * 1024;
	L.flush_ms = env_u32("LINESCOPE_GPU_FLUSH_MS", 500, 0, 60000);
	L.nvml_ms = env_u32("LINESCOPE_GPU_NVML_MS", 200, 10, 60000);
	L.follow_copies = (int)env_u32("LINESCOPE_GPU_COPIES", 1, 0, 1);
	sample = env_u32("LINESCOPE_GPU_SAMPLE", 1, 1, 1u << 16);
	if (sample & (sample - 1)) {
		lib_log(1, "ignoring LINESCOPE_GPU_SAMPLE=%u (expected a power of two)", sample);
		sample = 1;
	}
	while ((1u << L.sample_shift) < sample)
		L.sample_shift++;
	if (L.sample_shift) {
		L.unsampled = calloc(UNSAMPLED_SLOTS, sizeof(*L.unsampled));
		if (!L.unsampled) {
			lib_log(1, "out of memory for LINESCOPE_GPU_SAMPLE; probing every launch");
			L.sample_shift = 0;
		}
	}

	/* without sampling, launches from a thread's last probed Python location are batched */
	if (!L.sample_shift && env_u32("LINESCOPE_GPU_SAME_LOCATION", 1, 0, 1)) {
		int err = ls_pyloc__init(why, sizeof(why));

		if (!err)
			err = launches_init();
		L.same_loc = !err;
		if (err)
			lib_log(2, "every launch is probed: %s",
				err == -ENOENT || err == -ENOTSUP ? why : strerror(-err));
	}
	if (ls_cupti_api__load(&L.cupti, why, sizeof(why))) {
		fail(LS_GPU_ST_NO_CUPTI, 0, "GPU collection is off: %s", why);
		return;
	}
	if (L.cupti.get_version)
		L.cupti.get_version(&L.cupti_version);
	if (ls_kname__new(&L.names)) {
		fail(LS_GPU_ST_CUPTI_ERROR, 0, "GPU collection is off: out of memory");
		return;
	}
	if (L.cupti.subscribe_v2) {
		params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
		params.subscriberName = "linescope-bpf";
		params.oldSubscriberName = holder;
		params.oldSubscriberSize = sizeof(holder) - 1;
		res = L.cupti.subscribe_v2(&L.sub, on_callback, NULL, &params);
	} else {
		res = L.cupti.subscribe(&L.sub, on_callback, NULL);
	}
	if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		fail(LS_GPU_ST_CONFLICT, res,
		     "GPU collection is off: CUPTI is already used by %s (torch.profiler, Nsight "
		     "and linescope-bpf cannot share a process)",
		     holder[0] ? holder : "another profiler");
		return;
	}
	if (res != CUPTI_SUCCESS) {
		fail(LS_GPU_ST_CUPTI_ERROR, res,
		     "GPU collection is off: cuptiSubscribe failed: %s (error %d); is the NVIDIA "
		     "driver new enough for %s?",
		     ls_cupti_api__strerror(&L.cupti, res), res, L.cupti.path);
		return;
	}
	L.subscribed = 1;
	if (enable_callbacks()) {
		fail(LS_GPU_ST_CUPTI_ERROR, L.last_err,
		     "GPU collection is off: no CUDA API callback could be enabled (%s)",
		     ls_cupti_api__strerror(&L.cupti, L.last_err));
		return;
	}
	res = L.cupti.register_callbacks(on_buffer_request, on_buffer_complete);
	if (res != CUPTI_SUCCESS) {
		fail(LS_GPU_ST_NO_ACTIVITY, res,
		     "no GPU time: cuptiActivityRegisterCallbacks failed: %s (error %d)",
		     ls_cupti_api__strerror(&L.cupti, res), res);
		L.activity_on = 1; /* nothing to enable later */
	} else if (L.cupti.enable(CUPTI_ACTIVITY_KIND_DEVICE) == CUPTI_SUCCESS) {
		L.kinds |= LS_GPU_KB_DEVICE;
	} else {
		L.devices_seen = 1; /* no device records will come; do not wait for them */
	}
	pthread_atfork(NULL, NULL, on_fork_child);
	atexit(on_exit_flush);
	if (LINESCOPE_GPU_API_ENABLED())
		on_attach();
}

/* Runs setup(); a tracer already attached hears why collection is off in this process. */
static void setup_and_report(void)
{
	setup();
	if (!L.subscribed && LINESCOPE_GPU_RECORD_ENABLED()) {
		pthread_mutex_lock(&L.lock);
		send_hello();
		pthread_mutex_unlock(&L.lock);
	}
}

/*
 * Called by the CUDA driver (cuInit) in every process that has CUDA_INJECTION64_PATH set, and by
 * frameworks or tests that load us themselves. Idempotent per process; always returns 1 so that
 * the driver carries on whatever happened here.
 */
LS_EXPORT int InitializeInjection(void)
{
	pthread_mutex_lock(&init_lock);
	if (!L.initialized || L.pid != getpid()) {
		L.initialized = 1;
		L.pid = getpid();
		setup_and_report();
	}
	pthread_mutex_unlock(&init_lock);
	return 1;
}
