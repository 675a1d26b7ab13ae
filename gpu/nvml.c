// SPDX-License-Identifier: MIT
/* NVML by dlopen; see nvml.h. Declarations follow NVML API version 13 (nvml.h of driver R580). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"

typedef int nvml_ret;
typedef struct nvml_device_st *nvml_device;

#define NVML_SUCCESS		     0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE     (~0ULL)
#define NVML_DEVICE_MIG_ENABLE	     1

struct nvml_memory {
	unsigned long long total, free, used;
};

/* nvmlProcessInfo_v2_t, what the _v3 process queries fill */
struct nvml_process_info {
	unsigned int pid;
	unsigned long long used_gpu_memory;
	unsigned int gpu_instance_id;
	unsigned int compute_instance_id;
};
_Static_assert(sizeof(struct nvml_process_info) == 24, "nvmlProcessInfo_v2_t layout");

struct ls_nvml {
	void *dl;
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	const char *(*error_string)(nvml_ret);
	nvml_ret (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, nvml_device *);
	nvml_ret (*name)(nvml_device, char *, unsigned int);
	nvml_ret (*uuid)(nvml_device, char *, unsigned int);
	nvml_ret (*memory)(nvml_device, struct nvml_memory *);
	nvml_ret (*mig_mode)(nvml_device, unsigned int *, unsigned int *);
	nvml_ret (*driver)(char *, unsigned int);
	nvml_ret (*cuda_driver)(int *);
	nvml_ret (*procs)(nvml_device, unsigned int *, struct nvml_process_info *);
	struct nvml_process_info *pbuf;
	unsigned int pcap;
};

static const char *err_text(struct ls_nvml *n, nvml_ret r)
{
	const char *s = n->error_string ? n->error_string(r) : NULL;

	return s ? s : "unknown NVML error";
}

int ls_nvml__open(struct ls_nvml **out, char *why, size_t why_size)
{
	const char *lib = getenv("LINESCOPE_NVML_LIB");
	struct ls_nvml *n;
	nvml_ret r;

	if (!lib || !*lib)
		lib = "libnvidia-ml.so.1";
	n = calloc(1, sizeof(*n));
	if (!n) {
		snprintf(why, why_size, "out of memory");
		return -ENOMEM;
	}
	n->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl) {
		snprintf(why, why_size, "%s not found (no NVIDIA driver on this machine)", lib);
		free(n);
		return -ENOENT;
	}
	/* nvmlInit_v2 and the _v2/_v3 names exist in every driver of the last decade */
	*(void **)&n->init = dlsym(n->dl, "nvmlInit_v2");
	*(void **)&n->shutdown = dlsym(n->dl, "nvmlShutdown");
	*(void **)&n->error_string = dlsym(n->dl, "nvmlErrorString");
	*(void **)&n->count = dlsym(n->dl, "nvmlDeviceGetCount_v2");
	*(void **)&n->handle = dlsym(n->dl, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&n->name = dlsym(n->dl, "nvmlDeviceGetName");
	*(void **)&n->uuid = dlsym(n->dl, "nvmlDeviceGetUUID");
	*(void **)&n->memory = dlsym(n->dl, "nvmlDeviceGetMemoryInfo");
	*(void **)&n->mig_mode = dlsym(n->dl, "nvmlDeviceGetMigMode");
	*(void **)&n->driver = dlsym(n->dl, "nvmlSystemGetDriverVersion");
	*(void **)&n->cuda_driver = dlsym(n->dl, "nvmlSystemGetCudaDriverVersion_v2");
	*(void **)&n->procs = dlsym(n->dl, "nvmlDeviceGetComputeRunningProcesses_v3");
	if (!n->init || !n->count || !n->handle) {
		snprintf(why, why_size, "%s lacks nvmlInit_v2 or device queries (driver too old)",
			 lib);
		goto fail;
	}
	r = n->init();
	if (r != NVML_SUCCESS) {
		snprintf(why, why_size, "nvmlInit failed: %s (error %d)", err_text(n, r), r);
		goto fail;
	}
	*out = n;
	return 0;
fail:
	dlclose(n->dl);
	free(n);
	return -ENODEV;
}

void ls_nvml__close(struct ls_nvml *n)
{
	if (!n)
		return;
	if (n->shutdown)
		n->shutdown();
	/* the library stays mapped: NVML may have started threads that run until process exit */
	free(n->pbuf);
	free(n);
}

int ls_nvml__count(struct ls_nvml *n)
{
	unsigned int c = 0;

	if (n->count(&c) != NVML_SUCCESS)
		return 0;
	return (int)c;
}

int ls_nvml__device(struct ls_nvml *n, __u32 index, struct ls_nvml_dev *out)
{
	unsigned int cur = 0, pending = 0;
	struct nvml_memory mem;
	nvml_device dev;

	memset(out, 0, sizeof(*out));
	out->index = index;
	if (n->handle(index, &dev) != NVML_SUCCESS)
		return -ENODEV;
	if (n->name && n->name(dev, out->name, sizeof(out->name)) != NVML_SUCCESS)
		out->name[0] = 0;
	if (n->uuid && n->uuid(dev, out->uuid, sizeof(out->uuid)) != NVML_SUCCESS)
		out->uuid[0] = 0;
	if (n->memory && n->memory(dev, &mem) == NVML_SUCCESS) {
		out->mem_total = mem.total;
		out->mem_used = mem.used;
	}
	if (n->mig_mode && n->mig_mode(dev, &cur, &pending) == NVML_SUCCESS)
		out->mig = cur == NVML_DEVICE_MIG_ENABLE;
	return 0;
}

void ls_nvml__driver(struct ls_nvml *n, char *buf, size_t size, __u32 *cuda_version)
{
	int v = 0;

	buf[0] = 0;
	if (n->driver && n->driver(buf, (unsigned int)size) != NVML_SUCCESS)
		buf[0] = 0;
	*cuda_version = 0;
	if (n->cuda_driver && n->cuda_driver(&v) == NVML_SUCCESS && v > 0)
		*cuda_version = (__u32)v;
}

int ls_nvml__proc_used(struct ls_nvml *n, __u32 index, __u32 pid, __u64 *used)
{
	unsigned int count, i;
	nvml_device dev;
	nvml_ret r;
	int tries;

	if (!n->procs)
		return -ENOSYS;
	if (n->handle(index, &dev) != NVML_SUCCESS)
		return -ENODEV;
	/* the list can grow between the sizing call and the fetch: retry a few times */
	for (tries = 0; tries < 4; tries++) {
		count = n->pcap;
		r = n->procs(dev, &count, n->pbuf);
		if (r == NVML_SUCCESS)
			break;
		if (r != NVML_ERROR_INSUFFICIENT_SIZE)
			return -EIO;
		free(n->pbuf);
		n->pcap = count + 8;
		n->pbuf = calloc(n->pcap, sizeof(*n->pbuf));
		if (!n->pbuf) {
			n->pcap = 0;
			return -ENOMEM;
		}
	}
	if (r != NVML_SUCCESS)
		return -EAGAIN;
	for (i = 0; i < count; i++) {
		if (n->pbuf[i].pid != pid)
			continue;
		if (n->pbuf[i].used_gpu_memory == NVML_VALUE_NOT_AVAILABLE)
			return 0;
		*used = n->pbuf[i].used_gpu_memory;
		return 1;
	}
	return 0;
}
