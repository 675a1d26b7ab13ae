// SPDX-License-Identifier: MIT
/* Run-time loading of libcupti; see cupti_api.h. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_api.h"

static const char *const sonames[] = {"libcupti.so.13", "libcupti.so.12"};

static void *try_open(const char *name, int flags, char *path, size_t size)
{
	struct link_map *lm = NULL;
	void *dl = dlopen(name, flags);

	if (!dl)
		return NULL;
	if (dlinfo(dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
		snprintf(path, size, "%s", lm->l_name);
	else
		snprintf(path, size, "%s", name);
	return dl;
}

static void *find_cupti(char *path, size_t size)
{
	const char *env = getenv("LINESCOPE_CUPTI_LIB"), *home = getenv("CUDA_HOME");
	const char *dirs[] = {home, "/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64"};
	char file[512];
	size_t i, j;
	void *dl;

	if (env && *env)
		return try_open(env, RTLD_NOW | RTLD_LOCAL, path, size);
	/* one CUPTI per process: prefer the one a framework (PyTorch's Kineto) already loaded */
	for (i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++) {
		dl = try_open(sonames[i], RTLD_NOW | RTLD_NOLOAD, path, size);
		if (dl)
			return dl;
	}
	for (i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++) {
		dl = try_open(sonames[i], RTLD_NOW | RTLD_LOCAL, path, size);
		if (dl)
			return dl;
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		for (j = 0; j < sizeof(sonames) / sizeof(sonames[0]); j++) {
			snprintf(file, sizeof(file), "%s%s/%s", dirs[i], i == 0 ? "/lib64" : "",
				 sonames[j]);
			dl = try_open(file, RTLD_NOW | RTLD_LOCAL, path, size);
			if (dl)
				return dl;
		}
	}
	return NULL;
}

#define SYM(field, name) (*(void **)&api->field = dlsym(api->dl, name))

int ls_cupti_api__load(struct ls_cupti_api *api, char *why, size_t why_size)
{
	const char *env = getenv("LINESCOPE_CUPTI_LIB");

	memset(api, 0, sizeof(*api));
	api->dl = find_cupti(api->path, sizeof(api->path));
	if (!api->dl && env && *env) {
		snprintf(why, why_size, "LINESCOPE_CUPTI_LIB=%s cannot be loaded: %s", env,
			 dlerror());
		return -ENOENT;
	}
	if (!api->dl) {
		snprintf(why, why_size,
			 "libcupti.so.13 not found; set LINESCOPE_CUPTI_LIB or add the CUDA "
			 "toolkit's lib64 to LD_LIBRARY_PATH");
		return -ENOENT;
	}
	SYM(get_version, "cuptiGetVersion");
	SYM(result_string, "cuptiGetResultString");
	SYM(subscribe, "cuptiSubscribe");
	SYM(subscribe_v2, "cuptiSubscribe_v2");
	SYM(unsubscribe, "cuptiUnsubscribe");
	SYM(enable_callback, "cuptiEnableCallback");
	SYM(callback_name, "cuptiGetCallbackName");
	SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
	SYM(enable, "cuptiActivityEnable");
	SYM(flush_all, "cuptiActivityFlushAll");
	SYM(flush_period, "cuptiActivityFlushPeriod");
	SYM(next_record, "cuptiActivityGetNextRecord");
	SYM(dropped, "cuptiActivityGetNumDroppedRecords");
	SYM(timestamp, "cuptiGetTimestamp");
	if (!api->subscribe || !api->enable_callback || !api->register_callbacks || !api->enable ||
	    !api->flush_all || !api->next_record || !api->timestamp) {
		snprintf(why, why_size, "%s lacks required CUPTI functions (too old)", api->path);
		dlclose(api->dl);
		api->dl = NULL;
		return -ENOSYS;
	}
	return 0;
}

const char *ls_cupti_api__strerror(const struct ls_cupti_api *api, CUptiResult res)
{
	const char *s = NULL;

	if (api->result_string && api->result_string(res, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}
