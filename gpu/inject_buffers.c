// SPDX-License-Identifier: MIT
/*
 * CUPTI's activity buffers: handed out (from a pool) and taken back full, their records parsed
 * (gpu/activity.c), kernel names interned and announced, and sent to the tracer in batches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "inject_int.h"

void CUPTIAPI on_buffer_request(uint8_t **buf, size_t *size, size_t *max_records)
{
	*max_records = 0;
	/*
	 * Before any tracer attached only the DEVICE kind is on, and we keep its records for later.
	 * After a tracer detached the other kinds stay on (disabling CONCURRENT_KERNEL can deadlock
	 * CUPTI 13.0), so refuse buffers: CUPTI drops those records cheaply.
	 */
	if (L.devices_seen && !atomic_load_explicit(&L.attached, memory_order_relaxed)) {
		atomic_fetch_add(&L.declined, 1);
		*buf = NULL;
		*size = 0;
		return;
	}
	*buf = NULL;
	pthread_mutex_lock(&L.pool_lock);
	if (L.npool)
		*buf = L.pool[--L.npool];
	pthread_mutex_unlock(&L.pool_lock);
	if (!*buf)
		*buf = aligned_alloc(8, L.buffer_size);
	*size = *buf ? L.buffer_size : 0;
}

static void buffer_release(uint8_t *buf)
{
	pthread_mutex_lock(&L.pool_lock);
	if (L.npool < POOL_MAX) {
		L.pool[L.npool++] = buf;
		buf = NULL;
	}
	pthread_mutex_unlock(&L.pool_lock);
	free(buf);
}

struct batch {
	int on; /* the record probe is enabled: build and send batches */
	__u32 epoch;
	__u32 n;
	/* the previous kernel's name: runs of one kernel skip the name table and its lock */
	const char *last_kname;
	__u32 last_id, last_flags;
	struct {
		struct ls_gpu_hdr hdr;
		struct ls_gpu_act act[LS_GPU_BATCH_MAX];
	} rec;
};

static void batch_flush(struct batch *b)
{
	if (!b->n)
		return;
	emit(&b->rec.hdr, LS_GPU_ACTIVITY, (__u16)b->n,
	     sizeof(b->rec.hdr) + b->n * sizeof(struct ls_gpu_act));
	b->n = 0;
}

static void send_name(__u32 id, const struct ls_kname_entry *e)
{
	struct {
		struct ls_gpu_name n;
		char text[LS_GPU_NAME_MAX];
	} r;

	memset(&r.n, 0, sizeof(r.n));
	r.n.id = id;
	r.n.flags = e->flags;
	memcpy(r.text, e->name, e->len);
	emit(&r.n.hdr, LS_GPU_NAME, (__u16)e->len, sizeof(r.n) + e->len);
}

static int on_act(void *ctx, struct ls_gpu_act *a, const char *kname)
{
	struct batch *b = ctx;
	struct ls_kname_entry *e;

	if (!b->on)
		return 0;
	if (L.unsampled && atomic_load_explicit(&L.unsampled[a->corr & (UNSAMPLED_SLOTS - 1)],
						memory_order_relaxed) == a->corr) {
		atomic_fetch_add_explicit(&L.dropped_unsampled, 1, memory_order_relaxed);
		return 0;
	}
	if (kname && kname == b->last_kname) {
		a->name_id = b->last_id;
		a->flags |= b->last_flags;
	} else if (kname) {
		pthread_mutex_lock(&L.names_lock);
		a->name_id = L.names ? ls_kname__intern(L.names, kname, &e) : 0;
		if (a->name_id) {
			a->flags |= e->flags;
			if (e->sent_epoch != b->epoch) {
				send_name(a->name_id, e);
				e->sent_epoch = b->epoch;
			}
			b->last_kname = kname;
			b->last_id = a->name_id;
			b->last_flags = e->flags;
		}
		pthread_mutex_unlock(&L.names_lock);
	}
	b->rec.act[b->n++] = *a;
	if (b->n == LS_GPU_BATCH_MAX)
		batch_flush(b);
	return 0;
}

static int on_device(void *ctx, const struct ls_gpu_devinfo *dev)
{
	__u32 i;

	pthread_mutex_lock(&L.lock);
	L.devices_seen = 1;
	for (i = 0; i < L.ncdev; i++)
		if (L.cdev[i].ordinal == dev->ordinal)
			break;
	if (i < LS_MAX_CDEV) {
		L.cdev[i] = *dev;
		if (i == L.ncdev)
			L.ncdev++;
		L.devices_sent_epoch = 0; /* send again with this device */
	}
	pthread_mutex_unlock(&L.lock);
	return 0;
}

void CUPTIAPI on_buffer_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				 size_t valid)
{
	struct ls_gpu_parse_stats st = {};
	struct ls_gpu_parse_ops ops = {
		.next = L.cupti.next_record,
		.act = on_act,
		.device = on_device,
	};
	struct batch *b;

	/* 3.6 KiB; we do not know how deep CUPTI's worker stack is, so not on it */
	b = malloc(sizeof(*b));
	if (!b) {
		buffer_release(buf);
		return;
	}
	b->on = LINESCOPE_GPU_RECORD_ENABLED() && atomic_load(&L.attached);
	b->epoch = atomic_load(&L.epoch);
	b->n = 0;
	b->last_kname = NULL;
	ops.ctx = b;
	if (b->on) {
		/* names and devices of a new attach epoch go out before the records using them */
		pthread_mutex_lock(&L.lock);
		housekeeping(0);
		pthread_mutex_unlock(&L.lock);
		/* the launches of this work, before it */
		if (L.same_loc)
			launches_send_all();
	}
	if (ls_gpu_activity__parse(&ops, buf, valid, &st) == -EBADMSG)
		atomic_fetch_add(&L.bad_buffers, 1);
	batch_flush(b);
	atomic_fetch_add(&L.records, st.records);
	atomic_fetch_add(&L.unknown, st.unknown);
	atomic_fetch_add(&L.no_timing, st.no_timing);
	if (b->on && st.devices) {
		pthread_mutex_lock(&L.lock);
		housekeeping(0);
		pthread_mutex_unlock(&L.lock);
	}
	free(b);
	buffer_release(buf);
}
