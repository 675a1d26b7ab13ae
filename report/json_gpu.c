// SPDX-License-Identifier: MIT
/* The report data's GPU section: device cards, per-process GPU totals and collection notes. */
#include <stdio.h>
#include <string.h>
#include "gpu_idle.h"
#include "json_int.h"

/* CUDA's version numbers: 1000 * major + 10 * minor */
#define CUDA_VER_MAJOR 1000
#define CUDA_VER_MINOR 10

static json_t *str_or_null(const char *s)
{
	return s && *s ? ls_json__str(s) : json_null();
}

/*
 * Device cards (one per device, over the processes that used it), per-process GPU totals, and
 * the reasons collection was partial.
 */
json_t *lsj_gpu_object(const struct ls_model *m)
{
	json_t *o = json_object(), *devs = json_array(), *procs = json_array(),
	       *notes = json_array();
	int64_t peak = -1;
	const char *mem_note = NULL;

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ls_mproc *p = &m->procs[i];

		if (!p->gpu_hello && !p->gpu_ns)
			continue;
		if (p->gpu_peak > peak)
			peak = p->gpu_peak;
		if (p->gpu_nvml_note && *p->gpu_nvml_note && !mem_note)
			mem_note = p->gpu_nvml_note;
		json_array_append_new(
			procs,
			json_pack("{s:i, s:b, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, "
				  "s:I, s:I}",
				  "proc", (int)i, "loaded", p->gpu_hello, "status", p->gpu_status,
				  "message", str_or_null(p->gpu_message), "nvml_note",
				  str_or_null(p->gpu_nvml_note), "gpu_s", ls_json__secs(p->gpu_ns),
				  "driver_s", ls_json__secs(p->driver_ns), "no_python_gpu_s",
				  ls_json__secs(p->gpu_nopy_ns), "unseen_gpu_s",
				  ls_json__secs(p->gpu_unseen_ns), "peak_mem",
				  p->gpu_peak > 0 ? json_integer(p->gpu_peak) : json_null(),
				  "launches", (json_int_t)p->gpu_launches, "dropped",
				  (json_int_t)p->gpu_dropped, "lost", (json_int_t)p->gpu_lost));
		if (p->gpu_message && *p->gpu_message)
			json_array_append_new(notes, ls_json__str(p->gpu_message));
		if (p->gpu_nopy_ns)
			json_array_append_new(
				notes, json_sprintf("pid %d: %.3f s of device time was launched by "
						    "threads with no Python frame",
						    p->pid, p->gpu_nopy_ns / NS_PER_S));
		if (p->gpu_unseen_ns)
			json_array_append_new(
				notes,
				json_sprintf("pid %d: %.3f s of device time came from launches "
					     "made before profiling started",
					     p->pid, p->gpu_unseen_ns / NS_PER_S));
	}
	for (size_t i = 0; i < m->ngpu_devs; i++) {
		const struct ls_mgpu_dev *d = &m->gpu_devs[i];
		bool seen = false;
		char cuda[48];

		/* a device used by several processes gets one card */
		for (size_t k = 0; k < i && !seen; k++)
			seen = m->gpu_devs[k].ordinal == d->ordinal &&
			       !strcmp(m->gpu_devs[k].uuid ?: "", d->uuid ?: "");
		if (seen)
			continue;
		snprintf(cuda, sizeof(cuda), "%lld.%lld",
			 (long long)d->cuda_driver / CUDA_VER_MAJOR,
			 (long long)(d->cuda_driver % CUDA_VER_MAJOR) / CUDA_VER_MINOR);
		json_array_append_new(
			devs,
			json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "index",
				  (json_int_t)d->ordinal, "name", str_or_null(d->name),
				  "memory_total",
				  d->mem_total ? json_integer(d->mem_total) : json_null(), "driver",
				  str_or_null(d->driver), "cuda",
				  d->cuda_driver ? json_string(cuda) : json_null(), "peak_mem",
				  peak > 0 ? json_integer(peak) : json_null(), "memory_note",
				  peak > 0 ? json_null() : str_or_null(mem_note)));
	}
	if (m->gpu_requested && !lsj_gpu_loaded(m))
		json_array_append_new(notes, json_string("GPU collection was requested but no "
							 "process loaded liblinescope_cupti.so"));
	if ((m->gpu || m->gpu_requested) && !(m->stacks && m->stacks->timeline))
		json_array_append_new(notes, json_string("recorded without --timeline: no device "
							 "timeline, and no idle time by line"));
	if (m->gpu_util_skipped)
		json_array_append_new(
			notes,
			json_sprintf("%lld device spans left off the timeline: the profile "
				     "names more than %d devices",
				     (long long)m->gpu_util_skipped, LS_GPU_UTIL_MAX_DEVICES));
	json_object_set_new(o, "devices", devs);
	json_object_set_new(o, "timeline", lsj_gpu_timeline(m, true));
	json_object_set_new(o, "procs", procs);
	json_object_set_new(o, "notes", notes);
	return o;
}
