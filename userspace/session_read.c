// SPDX-License-Identifier: MIT
/*
 * Reading the ring buffer in slices. libbpf's consume returns only once the buffer is empty, so
 * a reader slower than its writers (a machine whose targets starve us of CPU) would never get
 * back to the loop: no flush, no -d, no stop. A read ends, its last record handled, once it has
 * taken READ_SLICE_NS; a read up to a position goes on, slice after slice, until every record
 * that began before it is handled.
 *
 * Among thousands of busy job threads a reader at the job's priority gets its turn too late and
 * the buffer overflows (bench/scale 500 x 20 threads, wall, 999 Hz: 5 runs of 9 lost 737 to
 * 98,258 records). The reading thread is raised to READER_NICE while the buffer holds more than
 * LS_RINGBUF_BEHIND (8 MB, where BPF starts waking it), and lowered once it is back under a
 * quarter of that: no run of 9 lost more than the 0-3 samples of other causes. Raised for the
 * whole run it cost nearly twice the CPU (3.4% of a core against 1.9% at 99 Hz); raised only
 * while behind, 0.2-0.4% more, the price of reading records while their processes still live
 * (docs/scale.md).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "log.h"
#include "session_int.h"

#define READ_SLICE_NS (20 * NSEC_PER_MSEC) /* the loop's shortest timer, its tick */
#define READER_NICE   (-10)

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

void lss_reader_init(struct session *s)
{
	errno = 0;
	s->base_nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		s->base_nice = 0;
}

/* Linux keeps a nice value per thread: who 0 is the calling thread, the reader. */
static void pace_reader(struct session *s)
{
	uint64_t behind = ls_loader__ring_written(s->loader) - ls_loader__ring_read(s->loader);
	uint64_t high = s->behind_bytes ?: LS_RINGBUF_BEHIND;

	if (!s->raised && !s->cannot_raise && behind > high && s->base_nice > READER_NICE) {
		if (setpriority(PRIO_PROCESS, 0, READER_NICE)) {
			/* without CAP_SYS_NICE: read as we are, and say so once */
			ls_info("cannot raise the reader's priority: %s", strerror(errno));
			s->cannot_raise = true;
			return;
		}
		s->raised = true;
		s->raised_since = ls_mono_ns();
		s->raises++;
	} else if (s->raised && behind < high / 4) {
		lss_reader_lower(s);
	}
}

void lss_reader_lower(struct session *s)
{
	if (!s->raised)
		return;
	setpriority(PRIO_PROCESS, 0, s->base_nice);
	s->raised = false;
	s->raised_ns += ls_mono_ns() - s->raised_since;
}

void lss_reader_raised(const struct session *s, uint64_t now, uint64_t *raises, uint64_t *raised_ns)
{
	*raises = s->raises;
	*raised_ns =
		s->raised_ns + (s->raised && now > s->raised_since ? now - s->raised_since : 0);
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
	pace_reader(s);
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
