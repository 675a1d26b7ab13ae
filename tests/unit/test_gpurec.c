// SPDX-License-Identifier: MIT
/*
 * The GPU record consumer (userspace/gpurec.c, with gpu_agg.c) fed through the recorder with
 * hand-built launch samples and LS_REC_GPU records: device and driver time land on the launching
 * process and stack, work whose launch was never seen on the process's own row, sequence gaps
 * count as lost records, malformed records change nothing; all read back from the profile.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "linescope.h" /* the __u32... types gpu_records.h needs */
#include "gpu_records.h"
#include "recorder.h"
#include "store.h"
#include "../lib/sql_query.h"
#include "../lib/tmp_profile.h"

#define PID 4500001 /* above PID_MAX_LIMIT: /proc never answers */
#define MS  1000000ULL

LS_TEST_PROFILE_FIXTURE("gpurec")

static void hdr(struct ls_gpu_hdr *h, uint16_t sub, uint16_t count, uint32_t seq)
{
	h->type = LS_REC_GPU;
	h->pid = PID;
	h->tid = PID;
	h->sub = sub;
	h->count = count;
	h->ts = 5000 * MS;	 /* ktime */
	h->cupti_ts = 1000 * MS; /* CUPTI: ktime = cupti + 4000 ms */
	h->seq = seq;
	h->lib_pid = 7;
}

static void feed(struct ls_recorder *r, const void *rec, size_t len)
{
	assert_int_equal(ls_recorder__handle(r, (void *)rec, len), 0);
}

static void launch(struct ls_recorder *r, uint32_t corr, uint64_t api_ns)
{
	struct ls_sample s = {
		.type = LS_REC_SAMPLE,
		.pid = PID,
		.tid = PID,
		.kind = LS_SAMPLE_GPULAUNCH,
		.ts = 4999 * MS,
		.weight_ns = api_ns,
		.aux = LS_GPU_AUX(corr, LS_GPU_API_LAUNCH, 211, 0),
	};

	feed(r, &s, sizeof(s));
}

struct act_rec {
	struct ls_gpu_hdr h;
	struct ls_gpu_act a[4];
};

static struct ls_gpu_act kernel(uint32_t corr, uint64_t start, uint64_t dur, uint8_t flags)
{
	return (struct ls_gpu_act){.kind = LS_GPU_ACT_KERNEL,
				   .corr = corr,
				   .start = start,
				   .end = start + dur,
				   .flags = flags,
				   .stream = 3};
}

static void test_gpu_records(void **state)
{
	static const struct ls_recorder_ops ops = {0};
	struct ls_proc_event fork = {
		.type = LS_REC_PROC, .kind = LS_PE_FORK, .pid = PID, .ppid = 1, .ts = 1};
	struct ls_gpu_hello hello = {0};
	struct ls_gpu_device dev;
	struct act_rec ar;
	struct ls_recorder *r = NULL;
	struct ls_store *s = NULL;
	sqlite3 *db = NULL;

	ls_test_profile_remove(path);
	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_recorder__new(s, &ops, NULL, 0, &r), 0);
	assert_int_equal(ls_recorder__enable_gpu(r), 0);
	feed(r, &fork, sizeof(fork));

	hdr(&hello.hdr, LS_GPU_HELLO, 0, 1);
	hello.abi = LS_GPU_ABI_VERSION;
	hello.cupti_version = 130000;
	hello.status = LS_GPU_ST_OK;
	feed(r, &hello, sizeof(hello));
	/* a device whose strings fill their arrays, no NUL: cut to fit */
	memset(&dev, 'x', sizeof(dev));
	hdr(&dev.hdr, LS_GPU_DEVICE, 0, 2);
	dev.flags = LS_GPU_DF_CUPTI;
	dev.ordinal = 0;
	dev.nvml_index = 0;
	dev.cc = 90;
	dev.mem_total = 141ULL << 30;
	dev.cuda_driver = 13000;
	feed(r, &dev, sizeof(dev));

	/* two launches (7 and 5 us in the driver); the first runs two kernels, one of them NCCL */
	launch(r, 10, 7000);
	launch(r, 11, 5000);
	memset(&ar, 0, sizeof(ar));
	hdr(&ar.h, LS_GPU_ACTIVITY, 3, 3);
	ar.a[0] = kernel(10, 1000 * MS, 3 * MS, 0);
	ar.a[1] = kernel(10, 1004 * MS, 2 * MS, LS_GPU_AF_NCCL);
	ar.a[2] = kernel(11, 1010 * MS, 1 * MS, 0);
	feed(r, &ar, sizeof(ar.h) + 3 * sizeof(ar.a[0]));
	/* records 4 and 5 lost; 6 holds a kernel whose launch was never seen */
	memset(&ar, 0, sizeof(ar));
	hdr(&ar.h, LS_GPU_ACTIVITY, 1, 6);
	ar.a[0] = kernel(0, 1020 * MS, 4 * MS, 0);
	feed(r, &ar, sizeof(ar.h) + sizeof(ar.a[0]));

	/*
	 * records 7 and 8: launches the library did not probe, 12 from the location of 10 and 13
	 * from a new one, with its frames (this process has no Python state: stack 0 again), and
	 * their kernels
	 */
	{
		struct {
			struct ls_gpu_launches r;
			struct ls_gpu_launch_ent e1, e2;
			struct ls_frame f;
		} lr = {0};

		hdr(&lr.r.hdr, LS_GPU_LAUNCHES, 2, 7);
		lr.r.ident_corr = 10;
		lr.r.mono = 2000 * MS;
		lr.e1 = (struct ls_gpu_launch_ent){.corr = 12, .api_ns = 300, .ref = 10};
		lr.e2 = (struct ls_gpu_launch_ent){.corr = 13, .api_ns = 400, .nframes = 1};
		lr.f = (struct ls_frame){.code = 0x7000, .instr = 4, .fp = 1};
		feed(r, &lr, sizeof(lr));
		memset(&ar, 0, sizeof(ar));
		hdr(&ar.h, LS_GPU_ACTIVITY, 2, 8);
		ar.a[0] = kernel(12, 1050 * MS, 1 * MS, 0);
		ar.a[1] = kernel(13, 1052 * MS, 2 * MS, 0);
		feed(r, &ar, sizeof(ar.h) + 2 * sizeof(ar.a[0]));
	}

	/* malformed: more entries than the record holds, more than a batch may, no such sub, a
	 * header cut short, a record too short for its kind: none of them counts */
	memset(&ar, 0, sizeof(ar));
	hdr(&ar.h, LS_GPU_ACTIVITY, 4, 9);
	ar.a[0] = kernel(10, 1030 * MS, 50 * MS, 0);
	feed(r, &ar, sizeof(ar.h) + 3 * sizeof(ar.a[0]));
	ar.h.count = LS_GPU_BATCH_MAX + 1;
	feed(r, &ar, sizeof(ar));
	ar.h.sub = 99;
	feed(r, &ar, sizeof(ar));
	feed(r, &ar, sizeof(ar.h) - 1);
	hdr(&hello.hdr, LS_GPU_HELLO, 0, 10);
	hello.cupti_version = 1;
	feed(r, &hello, sizeof(hello) - 1);
	/* a GPU record of a pid that is no target: not in the profile */
	hdr(&ar.h, LS_GPU_ACTIVITY, 1, 1);
	ar.h.pid = PID + 1;
	ar.a[0] = kernel(0, 1040 * MS, 8 * MS, 0);
	feed(r, &ar, sizeof(ar.h) + sizeof(ar.a[0]));

	ls_recorder__finish(r);
	assert_int_equal(ls_recorder__flush(r), 0);

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	/* the launching stack (0: no Python frame) of process row 1 */
	assert_int_equal(
		ls_test_q_int(db, "SELECT gpu_ns FROM gpu WHERE process_id = 1 AND stack_id = 0"),
		9 * MS);
	assert_int_equal(
		ls_test_q_int(db, "SELECT api_ns FROM gpu WHERE process_id = 1 AND stack_id = 0"),
		12700);
	assert_int_equal(
		ls_test_q_int(db, "SELECT kernels FROM gpu WHERE process_id = 1 AND stack_id = 0"),
		5);
	assert_int_equal(
		ls_test_q_int(db, "SELECT nccl_ns FROM gpu WHERE process_id = 1 AND stack_id = 0"),
		2 * MS);
	/* the kernel without a launch: the process's own row */
	assert_int_equal(ls_test_q_int(db, "SELECT gpu_ns FROM gpu WHERE process_id = 1"
					   " AND stack_id = 4294967295"),
			 4 * MS);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM gpu"), 2);
	assert_int_equal(ls_test_q_int(db, "SELECT sum(gpu_ns) FROM gpu"), 13 * MS);
	assert_int_equal(ls_test_q_int(db, "SELECT hello FROM gpu_processes WHERE process_id = 1"),
			 1);
	assert_int_equal(ls_test_q_int(db, "SELECT cupti_version FROM gpu_processes"), 130000);
	assert_int_equal(ls_test_q_int(db, "SELECT lost FROM gpu_processes WHERE process_id = 1"),
			 2);
	assert_int_equal(
		ls_test_q_int(db, "SELECT launches FROM gpu_processes WHERE process_id = 1"), 4);
	assert_int_equal(ls_test_q_int(db, "SELECT gpu_ns FROM gpu_processes WHERE process_id = 1"),
			 13 * MS);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM gpu_processes"), 1);
	assert_int_equal(ls_test_q_int(db, "SELECT cc FROM gpu_devices WHERE process_id = 1"), 90);
	assert_int_equal(ls_test_q_int(db, "SELECT length(name) FROM gpu_devices"), 95);
	assert_int_equal(ls_test_q_int(db, "SELECT length(uuid) FROM gpu_devices"), 47);
	sqlite3_close(db);
	ls_recorder__free(r);
	ls_store__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gpu_records, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
