/* SPDX-License-Identifier: MIT */
/*
 * The CUPTI functions the injection library uses, resolved at run time with dlopen. Loading CUPTI
 * ourselves (rather than through DT_NEEDED) lets a process without a usable libcupti run on with a
 * clear message, lets us reuse the libcupti a framework already loaded (PyTorch bundles one), and
 * lets tests substitute a fake libcupti.so.13 through LD_LIBRARY_PATH.
 */
#ifndef LS_GPU_CUPTI_API_H
#define LS_GPU_CUPTI_API_H

#include <stddef.h>
#include <cupti.h>

struct ls_cupti_api {
	void *dl;
	char path[128]; /* the file loaded (for the report) */
	CUptiResult(CUPTIAPI *get_version)(uint32_t *);
	CUptiResult(CUPTIAPI *result_string)(CUptiResult, const char **);
	CUptiResult(CUPTIAPI *subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	/* NULL before CUDA 13.0 */
	CUptiResult(CUPTIAPI *subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
					    CUpti_SubscriberParams *);
	CUptiResult(CUPTIAPI *unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult(CUPTIAPI *enable_callback)(uint32_t, CUpti_SubscriberHandle,
					       CUpti_CallbackDomain, CUpti_CallbackId);
	CUptiResult(CUPTIAPI *callback_name)(CUpti_CallbackDomain, uint32_t, const char **);
	CUptiResult(CUPTIAPI *register_callbacks)(CUpti_BuffersCallbackRequestFunc,
						  CUpti_BuffersCallbackCompleteFunc);
	CUptiResult(CUPTIAPI *enable)(CUpti_ActivityKind);
	CUptiResult(CUPTIAPI *flush_all)(uint32_t);
	CUptiResult(CUPTIAPI *flush_period)(uint32_t); /* may be NULL */
	CUptiResult(CUPTIAPI *next_record)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult(CUPTIAPI *dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult(CUPTIAPI *timestamp)(uint64_t *);
};

/*
 * Finds and loads libcupti: $LINESCOPE_CUPTI_LIB if set; else a libcupti.so.13 or .so.12 already
 * loaded in the process; else the loader's search (LD_LIBRARY_PATH, our RUNPATH); else
 * $CUDA_HOME/lib64 and /usr/local/cuda/{lib64,extras/CUPTI/lib64}.
 * Returns 0, or -ENOENT / -ENOSYS (required symbol missing) with a reason in why[].
 */
int ls_cupti_api__load(struct ls_cupti_api *api, char *why, size_t why_size);

/* CUPTI's text for a result, never NULL. */
const char *ls_cupti_api__strerror(const struct ls_cupti_api *api, CUptiResult res);

#endif
