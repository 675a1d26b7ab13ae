// SPDX-License-Identifier: MIT
/*
 * Reading the ring buffer in slices. libbpf's consume returns only once the buffer is empty, so
 * a reader slower than its writers (a machine whose targets starve us of CPU) would never get
 * back to the loop: no flush, no -d, no stop. A read ends, its last record handled, once it has
 * taken READ_SLICE_NS; a read up to a position goes on, slice after slice, until every record
 * that began before it is handled.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "session_int.h"

#define READ_SLICE_NS (20 * NSEC_PER_MSEC) /* the loop's shortest timer, its tick */

int lss_on_record(void *ctx, void *data, size_t len)
{
	struct session *s = ctx;
	uint64_t now;

	ls_recorder__handle(s->rec, data, len);
	if (s->fault_record_us)
		usleep(s->fault_record_us);
	now = ls_mono_ns();
	if (!s->slice_end) {
		s->slice_end = now + READ_SLICE_NS;
		return 0;
	}
	/* libbpf stops here, this record counted as read */
	return now < s->slice_end ? 0 : -EAGAIN;
}

/* One slice: the records read (>= 0), -EAGAIN when it ended with some left, or -errno logged. */
static int read_slice(struct session *s)
{
	int n;

	s->slice_end = 0;
	n = ring_buffer__consume(s->rb);
	if (n == -EINTR)
		return 0;
	if (n < 0 && n != -EAGAIN)
		return ls_err(n, "reading the ring buffer: %s", strerror(-n));
	return n;
}

int lss_read(struct session *s, int wait_ms)
{
	int n;

	s->read_behind = false;
	if (wait_ms > 0) {
		/* records, or the launched command's exit (its pidfd) */
		struct pollfd fds[2] = {{.fd = ring_buffer__epoll_fd(s->rb), .events = POLLIN},
					{.fd = s->child_fd, .events = POLLIN}};

		if (poll(fds, s->child_fd >= 0 ? 2 : 1, wait_ms) < 0) {
			int err = -errno;

			return err == -EINTR
				       ? 0
				       : ls_err(err, "waiting for records: %s", strerror(-err));
		}
	}
	/* frequent records do not wake us (maps.bpf.h): read what arrived, woken or not */
	n = read_slice(s);
	s->read_behind = n == -EAGAIN;
	return n < 0 && n != -EAGAIN ? n : 0;
}

int lss_read_to(struct session *s, uint64_t pos)
{
	while (ls_loader__ring_read(s->loader) < pos) {
		int n = read_slice(s);

		if (n < 0 && n != -EAGAIN)
			return n;
		/* stopped at a record reserved and not yet submitted: its program is running */
		if (n == 0)
			sched_yield();
	}
	return 0;
}

int lss_read_all(struct session *s)
{
	return lss_read_to(s, ls_loader__ring_written(s->loader));
}

void lss_agg_settle(struct session *s)
{
	ls_recorder__agg_unpark(s->rec, ls_loader__ring_read(s->loader));
}
