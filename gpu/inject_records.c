// SPDX-License-Identifier: MIT
/*
 * The records the injection library sends the tracer through the record probe: the header every
 * record gets, HELLO, STATUS, DEVICE cards merged with NVML, NVML memory samples, and the
 * housekeeping that sends them when due; see gpu/gpu_records.h.
 */
#include <stdio.h>
#include <string.h>

#include "inject_int.h"

/* The only site of the record probe, so that the ELF has one probe location for it. */
__attribute__((noinline)) static void fire_record(const void *rec, __u32 len)
{
	LINESCOPE_GPU_RECORD(rec, len);
}

/* Fills the library's part of the header and fires the record probe. */
void emit(struct ls_gpu_hdr *h, __u16 sub, __u16 count, __u32 len)
{
	uint64_t ts = 0;

	if (!LINESCOPE_GPU_RECORD_ENABLED())
		return;
	h->type = LS_REC_GPU;
	h->pid = h->tid = 0;
	h->ts = 0;
	h->sub = sub;
	h->count = count;
	if (L.cupti.timestamp)
		L.cupti.timestamp(&ts);
	h->cupti_ts = ts;
	h->seq = atomic_fetch_add_explicit(&L.seq, 1, memory_order_relaxed) + 1;
	h->lib_pid = (__u32)L.pid;
	fire_record(h, len);
}

void send_hello(void)
{
	struct ls_gpu_hello h = {};

	h.abi = LS_GPU_ABI_VERSION;
	h.cupti_version = L.cupti_version;
	h.status = L.status;
	h.cupti_err = L.cupti_err;
	h.kinds = L.kinds;
	h.ncallbacks = L.ncallbacks;
	h.epoch = atomic_load(&L.epoch);
	h.nvml = L.nvml != NULL;
	snprintf(h.cupti_path, sizeof(h.cupti_path), "%s", L.cupti.path);
	snprintf(h.message, sizeof(h.message), "%s", L.message);
	emit(&h.hdr, LS_GPU_HELLO, 0, sizeof(h));
}

void send_status(__u16 sub)
{
	struct ls_gpu_status s = {};
	size_t dropped = 0;

	if (L.cupti.dropped && L.cupti.dropped(NULL, 0, &dropped) == CUPTI_SUCCESS)
		L.dropped = dropped;
	s.dropped = L.dropped;
	s.declined = atomic_load(&L.declined);
	s.records = atomic_load(&L.records);
	s.unknown = atomic_load(&L.unknown);
	s.no_timing = atomic_load(&L.no_timing);
	s.bad_buffers = atomic_load(&L.bad_buffers);
	s.probe_skipped = atomic_load(&L.no_entry);
	s.unsampled = atomic_load(&L.dropped_unsampled);
	s.last_err = L.last_err;
	s.nvml = L.nvml != NULL && L.nvml_listed;
	if (!L.nvml)
		snprintf(s.nvml_note, sizeof(s.nvml_note), "%s", L.nvml_why);
	else if (!L.nvml_listed)
		snprintf(s.nvml_note, sizeof(s.nvml_note),
			 "NVML does not list pid %d (another pid namespace, or no context yet)",
			 (int)L.pid);
	L.status_sent_dropped = L.dropped;
	emit(&s.hdr, sub, 0, sizeof(s));
}

/* Opens NVML once per process; never from an application thread's launch path. */
static void nvml_open(void)
{
	__u32 i;
	int n;

	if (L.nvml_tried)
		return;
	L.nvml_tried = 1;
	if (!env_u32("LINESCOPE_GPU_NVML", 1, 0, 1)) {
		snprintf(L.nvml_why, sizeof(L.nvml_why), "NVML disabled by LINESCOPE_GPU_NVML=0");
		return;
	}
	if (ls_nvml__open(&L.nvml, L.nvml_why, sizeof(L.nvml_why))) {
		lib_log(2, "no device memory from NVML: %s", L.nvml_why);
		return;
	}
	n = ls_nvml__count(L.nvml);
	for (i = 0; i < (__u32)n && i < LS_GPU_MAX_DEVICES; i++)
		if (ls_nvml__device(L.nvml, i, &L.ndev[L.nnvml]) == 0)
			L.nnvml++;
	ls_nvml__driver(L.nvml, L.driver, sizeof(L.driver), &L.cuda_driver);
}

static const struct ls_nvml_dev *nvml_by_uuid(const char *uuid)
{
	__u32 i;

	for (i = 0; uuid[0] && i < L.nnvml; i++)
		if (strcmp(L.ndev[i].uuid, uuid) == 0)
			return &L.ndev[i];
	return NULL;
}

/* One DEVICE record per CUDA device, merged with NVML; NVML's list when CUPTI gave none. */
void send_devices(void)
{
	struct ls_gpu_device d;
	const struct ls_nvml_dev *nd;
	__u32 i, n = L.ncdev ? L.ncdev : L.nnvml;

	for (i = 0; i < n; i++) {
		memset(&d, 0, sizeof(d));
		d.ordinal = d.nvml_index = ~0u;
		if (L.ncdev) {
			const struct ls_gpu_devinfo *c = &L.cdev[i];

			d.flags |= LS_GPU_DF_CUPTI;
			d.ordinal = c->ordinal;
			d.cc = c->cc;
			d.mem_total = c->mem_total;
			snprintf(d.name, sizeof(d.name), "%s", c->name);
			snprintf(d.uuid, sizeof(d.uuid), "%s", c->uuid);
			nd = nvml_by_uuid(c->uuid);
		} else {
			nd = &L.ndev[i];
		}
		if (nd) {
			d.flags |= LS_GPU_DF_NVML | (nd->mig ? LS_GPU_DF_MIG : 0);
			d.nvml_index = nd->index;
			if (!d.mem_total)
				d.mem_total = nd->mem_total;
			if (!d.name[0])
				snprintf(d.name, sizeof(d.name), "%s", nd->name);
			if (!d.uuid[0])
				snprintf(d.uuid, sizeof(d.uuid), "%s", nd->uuid);
		}
		if (L.nvml) {
			snprintf(d.driver, sizeof(d.driver), "%s", L.driver);
			d.cuda_driver = L.cuda_driver;
		}
		emit(&d.hdr, LS_GPU_DEVICE, 0, sizeof(d));
	}
	L.devices_sent_epoch = atomic_load(&L.epoch);
}

/* NVML's count of this process's device memory, per device. Caller holds L.lock. */
static void send_memsample(void)
{
	struct {
		struct ls_gpu_memsample m;
		struct ls_gpu_memsample_dev dev[LS_GPU_MAX_DEVICES];
	} s;
	__u32 i, j, n = 0;
	__u64 used;

	if (!L.nvml)
		return;
	memset(&s, 0, sizeof(s));
	for (i = 0; i < L.nnvml; i++) {
		used = 0;
		if (ls_nvml__proc_used(L.nvml, L.ndev[i].index, (__u32)L.pid, &used) != 1)
			continue;
		s.dev[n].nvml_index = L.ndev[i].index;
		s.dev[n].ordinal = ~0u;
		for (j = 0; j < L.ncdev; j++)
			if (strcmp(L.cdev[j].uuid, L.ndev[i].uuid) == 0)
				s.dev[n].ordinal = L.cdev[j].ordinal;
		s.dev[n].used = used;
		s.m.total += used;
		n++;
	}
	s.m.found = n > 0;
	L.nvml_listed = n > 0;
	emit(&s.m.hdr, LS_GPU_MEMSAMPLE, (__u16)n,
	     sizeof(s.m) + n * sizeof(struct ls_gpu_memsample_dev));
	L.nvml_last_ns = mono_ns();
}

/* What to do whenever a record-producing thread finds the tracer attached. Holds L.lock. */
void housekeeping(int force)
{
	__u32 epoch = atomic_load(&L.epoch);

	nvml_open();
	if (L.devices_sent_epoch != epoch && (L.ncdev || L.nnvml))
		send_devices();
	if (L.nvml && (force || mono_ns() - L.nvml_last_ns >= (__u64)L.nvml_ms * 1000000ull))
		send_memsample();
	/* a status once per attach (NVML's state is known by now), then when drops change */
	if (force || L.dropped != L.status_sent_dropped || L.status_sent_epoch != epoch) {
		L.status_sent_epoch = epoch;
		send_status(LS_GPU_STATUS);
	}
}
