// SPDX-License-Identifier: MIT
/*
 * Fake libnvidia-ml.so.1: the NVML functions gpu/nvml.c uses, describing the fake devices of
 * fakecuda.h. The calling process is listed on device 0 with FAKE_NVML_BASE_MB (default 512) MiB
 * of context memory plus what it allocated through the fake driver; an unrelated process (pid 1)
 * is listed too, so that a caller must match pids. FAKE_NVML_INIT_ERR=n makes nvmlInit fail with
 * n; FAKE_NVML_HIDE_PID=1 leaves the caller out of the list (a pid namespace).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakecuda.h"

#define EXPORT __attribute__((visibility("default")))

struct memory {
	unsigned long long total, free, used;
};

struct process_info {
	unsigned int pid;
	unsigned long long used;
	unsigned int gi, ci;
};

static int ndevices(void)
{
	const char *s = getenv("FAKE_CUDA_DEVICES");
	int n = s ? atoi(s) : 1;

	return n >= 1 && n <= 8 ? n : 1;
}

static int dev_index(void *dev)
{
	int i = (int)(uintptr_t)dev - 1;

	return i >= 0 && i < ndevices() ? i : -1;
}

static uint64_t allocated(void)
{
	void *dl = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	uint64_t (*fn)(void) = NULL;
	uint64_t v = 0;

	if (!dl)
		return 0;
	*(void **)&fn = dlsym(dl, "fakecuda_allocated");
	if (fn)
		v = fn();
	dlclose(dl);
	return v;
}

EXPORT int nvmlInit_v2(void)
{
	const char *s = getenv("FAKE_NVML_INIT_ERR");

	return s ? atoi(s) : 0;
}

EXPORT int nvmlShutdown(void)
{
	return 0;
}

EXPORT const char *nvmlErrorString(int r)
{
	return r == 9 ? "Driver Not Loaded" : "fake NVML error";
}

EXPORT int nvmlDeviceGetCount_v2(unsigned int *count)
{
	*count = (unsigned int)ndevices();
	return 0;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **dev)
{
	if ((int)index >= ndevices())
		return 2;
	*dev = (void *)(uintptr_t)(index + 1);
	return 0;
}

EXPORT int nvmlDeviceGetName(void *dev, char *name, unsigned int len)
{
	if (dev_index(dev) < 0)
		return 2;
	snprintf(name, len, "%s", FAKECUDA_DEVICE_NAME);
	return 0;
}

EXPORT int nvmlDeviceGetUUID(void *dev, char *out, unsigned int len)
{
	unsigned char b[16];
	int i = dev_index(dev);

	if (i < 0)
		return 2;
	fakecuda_uuid(i, b);
	snprintf(out, len,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
		 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
	return 0;
}

EXPORT int nvmlDeviceGetMemoryInfo(void *dev, struct memory *m)
{
	if (dev_index(dev) < 0)
		return 2;
	m->total = FAKECUDA_DEVICE_MEM;
	m->used = (2ull << 30) + allocated();
	m->free = m->total - m->used;
	return 0;
}

EXPORT int nvmlDeviceGetMigMode(void *dev, unsigned int *cur, unsigned int *pending)
{
	(void)dev;
	(void)cur;
	(void)pending;
	return 3; /* NVML_ERROR_NOT_SUPPORTED, as on GPUs without MIG */
}

EXPORT int nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
	snprintf(buf, len, "580.95.05");
	return 0;
}

EXPORT int nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	*v = 13000;
	return 0;
}

EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned int *count,
						   struct process_info *infos)
{
	const char *base = getenv("FAKE_NVML_BASE_MB"), *hide = getenv("FAKE_NVML_HIDE_PID");
	struct process_info list[2];
	unsigned int n = 0, i;

	if (dev_index(dev) < 0)
		return 2;
	list[n++] = (struct process_info){.pid = 1, .used = 1ull << 30, .gi = ~0u, .ci = ~0u};
	if (dev_index(dev) == 0 && !(hide && atoi(hide)))
		list[n++] = (struct process_info){
			.pid = (unsigned int)getpid(),
			.used = (unsigned long long)(base ? atoi(base) : 512) * (1ull << 20) +
				allocated(),
			.gi = ~0u,
			.ci = ~0u,
		};
	if (*count < n) {
		*count = n;
		return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
	}
	for (i = 0; i < n; i++)
		infos[i] = list[i];
	*count = n;
	return 0;
}
