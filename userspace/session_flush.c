// SPDX-License-Identifier: MIT
/*
 * Writing the profile while recording: every flush adds what the kernel and the recorder
 * gathered, then the counters that describe it; --rotate closes one interval's profile and
 * begins the next.
 */
#include <stdio.h>
#include <string.h>
#include "log.h"
#include "session_int.h"

static void put_prog_cost(void *ctx, const char *prog, uint64_t runs, uint64_t run_ns)
{
	struct cost_sum *c = ctx;
	char key[96];

	/* the programs come in the object's order: the interval's share is past their base */
	if (c->base_runs && c->nprogs < LSS_MAX_PROGS) {
		uint64_t r0 = c->base_runs[c->nprogs], n0 = c->base_ns[c->nprogs];

		c->last_runs[c->nprogs] = runs;
		c->last_ns[c->nprogs] = run_ns;
		runs -= runs >= r0 ? r0 : runs;
		run_ns -= run_ns >= n0 ? n0 : run_ns;
	}
	c->nprogs++;
	c->runs += runs;
	c->ns += run_ns;
	if (!c->store)
		return;
	snprintf(key, sizeof(key), "bpf_runs:%s", prog);
	ls_store__put_stat(c->store, key, (int64_t)runs);
	snprintf(key, sizeof(key), "bpf_run_ns:%s", prog);
	ls_store__put_stat(c->store, key, (int64_t)run_ns);
}

/* The loader's counters since the interval began (all of them are counts). */
static void interval_stats(struct session *s, struct ls_stats *bs)
{
	__u64 *v = (__u64 *)bs;
	const __u64 *b = (const __u64 *)&s->bs_base;

	ls_loader__stats(s->loader, bs);
	s->bs_last = *bs;
	for (size_t i = 0; i < sizeof(*bs) / sizeof(*v); i++)
		v[i] -= v[i] >= b[i] ? b[i] : v[i];
}

static void write_progress(struct session *s, uint64_t now)
{
	struct cost_sum cost = {.store = s->store};
	struct ls_stats bs;
	struct ls_recorder_stats rs, base;
	uint64_t raises, raised_ns;

	if (s->o->rotate) {
		cost.base_runs = s->prog_runs_base;
		cost.base_ns = s->prog_ns_base;
		cost.last_runs = s->prog_runs_last;
		cost.last_ns = s->prog_ns_last;
	}
	interval_stats(s, &bs);
	ls_recorder__stats(s->rec, &rs);
	ls_recorder__interval_base(s->rec, &base);
	rs.read_fail -= base.read_fail;
	rs.truncated -= base.truncated;
	rs.agg_orphans -= base.agg_orphans;
	rs.agg_parked -= base.agg_parked;
	rs.timeline_lost -= base.timeline_lost;
	ls_store__put_meta_int(s->store, "elapsed_ns", now - s->interval_start);
	if (s->attached_ns)
		ls_store__put_meta_int(s->store, "attached_ns", s->attached_ns);
	ls_store__put_stat(s->store, "bpf_samples", bs.samples);
	ls_store__put_stat(s->store, "taken", bs.taken);
	ls_store__put_stat(s->store, "sample_drops", bs.sample_drops);
	ls_store__put_stat(s->store, "exec_events", bs.exec_events);
	ls_store__put_stat(s->store, "ringbuf_drops", bs.ringbuf_drops);
	ls_store__put_stat(s->store, "scratch_busy", bs.scratch_busy);
	ls_store__put_stat(s->store, "read_fail", rs.read_fail);
	ls_store__put_stat(s->store, "truncated_stacks", rs.truncated);
	ls_store__put_stat(s->store, "procs_full", bs.procs_full);
	ls_store__put_stat(s->store, "no_tstate", bs.no_tstate);
	ls_store__put_stat(s->store, "offcpu_intervals", bs.offcpu);
	ls_store__put_stat(s->store, "offcpu_short_skipped", bs.offcpu_dropped);
	ls_store__put_stat(s->store, "offcpu_pending_full", bs.pending_full);
	ls_store__put_stat(s->store, "offcpu_resume_late", bs.resume_late);
	ls_store__put_stat(s->store, "offcpu_task_works", bs.task_works);
	ls_store__put_stat(s->store, "offcpu_lost_at_exit", bs.lost_at_exit);
	ls_store__put_stat(s->store, "offcpu_unseen_in", bs.unseen_in);
	ls_store__put_stat(s->store, "offcpu_open_at_start", bs.offcpu_opened);
	ls_store__put_stat(s->store, "offcpu_open_at_stop", bs.offcpu_closed);
	ls_store__put_stat(s->store, "agg_added", bs.agg_added);
	ls_store__put_stat(s->store, "agg_full", bs.agg_full);
	ls_store__put_stat(s->store, "agg_first", bs.agg_first);
	ls_store__put_stat(s->store, "agg_unset", bs.agg_unset);
	ls_store__put_stat(s->store, "agg_orphans", rs.agg_orphans);
	ls_store__put_stat(s->store, "agg_parked", rs.agg_parked);
	ls_store__put_stat(s->store, "long_wait_drops", bs.long_wait_drops);
	ls_store__put_stat(s->store, "tick_lost_ns", bs.tick_lost_ns);
	ls_store__put_stat(s->store, "agg_in_exec", bs.agg_in_exec);
	if (s->o->remote_sampler) {
		uint64_t passes, late_ns;

		ls_loader__remote_stats(s->loader, &passes, &late_ns);
		ls_store__put_stat(s->store, "remote_passes", (int64_t)passes);
		ls_store__put_stat(s->store, "remote_late_ns", (int64_t)late_ns);
	}
	if (s->o->timeline) {
		ls_store__put_stat(s->store, "timeline_drops", bs.timeline_drops);
		ls_store__put_stat(s->store, "timeline_lost", rs.timeline_lost);
	}
	ls_store__put_stat(s->store, "collector_setup_cpu_ns", (int64_t)s->setup_cpu_ns);
	lss_reader_raised(s, now, &raises, &raised_ns);
	s->raises_last = raises;
	s->raised_ns_last = raised_ns;
	ls_store__put_stat(s->store, "reader_raises", (int64_t)(raises - s->raises_base));
	ls_store__put_stat(s->store, "reader_raised_ns", (int64_t)(raised_ns - s->raised_ns_base));
	s->cpu_last = self_cpu_ns();
	ls_store__put_stat(s->store, "collector_cpu_ns", (int64_t)(s->cpu_last - s->cpu_base));
	s->costed = !ls_loader__cost(s->loader, put_prog_cost, &cost);
	s->cost = cost;
	ls_store__put_stat(s->store, "code_records", bs.code_records);
	ls_store__put_stat(s->store, "rss_events", bs.rss_events);
}

/*
 * What the kernel added up: the active map is retired (swapped), the ring buffer read past the
 * swap (the descriptions of its stacks come before it), then the map drained. A reader behind
 * its writers reads one slice only: a key whose stack it has not reached the description of is
 * kept, and added once it has (lss_agg_settle). all: read up to the swap, however long it takes.
 * Returns the CPU time its reads of records took.
 */
static uint64_t collect_agg(struct session *s, bool all)
{
	uint64_t pos, cpu;

	if (ls_loader__agg_swap(s->loader))
		return 0; /* not begun yet, or the swap failed (logged) */
	pos = ls_loader__ring_written(s->loader);
	cpu = thread_cpu_ns();
	if (all)
		lss_read_to(s, pos);
	else
		lss_read(s, 0);
	lss_agg_settle(s);
	cpu = thread_cpu_ns() - cpu;
	ls_recorder__agg_park(s->rec, ls_loader__ring_read(s->loader) < pos ? pos : 0);
	/* a failed read is logged there; what it left is read when retired again */
	ls_loader__agg_drain(s->loader, ls_recorder__add_agg, s->rec);
	ls_recorder__agg_park(s->rec, 0);
	return cpu;
}

/*
 * cut: the interval ends here (--rotate): each running thread's CPU time so far goes with it.
 * all: see lss_flush().
 */
static int flush_cut(struct session *s, uint64_t now, bool cut, bool all)
{
	uint64_t cpu = thread_cpu_ns(), reads = 0;
	int err;

	/*
	 * The targets run and are sampled: only now may the profile replace the one at its path.
	 * At the first flush, not at the start: closing and reopening the database there would
	 * hold up the first records, and with them the discovery of the interpreters.
	 */
	err = ls_store__publish(s->store);
	if (err)
		return err;
	if (ls_loader__agg_on(s->loader))
		reads = collect_agg(s, all);
	for (int i = 0; i < s->nnative; i++)
		ls_loader__native_drain(s->loader, s->native_pids[i], ls_recorder__native_count,
					s->rec);
	if (cut)
		ls_recorder__cut(s->rec);
	err = ls_recorder__flush(s->rec);

	if (err)
		return err;
	/* progress goes in its own small transaction after the data it describes */
	err = ls_store__begin(s->store);
	if (err)
		return err;
	write_progress(s, now);
	err = ls_store__commit(s->store);
	cpu = thread_cpu_ns() - cpu;
	s->flush_cost_ns = cpu > reads ? cpu - reads : 0;
	return err;
}

int lss_flush(struct session *s, uint64_t now, bool all)
{
	return flush_cut(s, now, false, all);
}

/*
 * --rotate: the interval's profile is finished and closed, and the next one begins. Its file is
 * made first: when it cannot be, the current one goes on (and the next interval tries again).
 */
void lss_rotate_now(struct session *s, uint64_t now)
{
	struct ls_store *next = NULL;
	char path[PATH_MAX];
	int err;

	s->next_rotate = now + s->o->rotate * NSEC_PER_SEC;
	if (ls_rotate__path(&s->rot, path, sizeof(path)) ||
	    ls_store__create(path, s->uid, s->gid, &next)) {
		ls_warn(0, "--rotate: %s goes on into the next interval", s->path);
		return;
	}
	/*
	 * Everything up to now first, then the cut (the threads' CPU time, read now) in a second,
	 * small flush: a failure of either leaves the interval going on, nothing lost
	 */
	err = lss_flush(s, now, true);
	if (!err)
		err = flush_cut(s, now, true, true);
	if (!err && !(err = ls_store__begin(s->store))) {
		ls_store__put_meta(s->store, "status", "Success");
		ls_store__put_meta(s->store, "status_detail", "an interval of a rotated recording");
		ls_store__put_meta_int(s->store, "elapsed_ns", now - s->interval_start);
		ls_store__put_meta(s->store, "finished", "1");
		err = ls_store__commit(s->store);
	}
	if (err) {
		ls_recorder__uncut(s->rec);
		ls_warn(0, "--rotate: %s could not be finished; it goes on into the next interval",
			s->path);
		ls_store__free(next); /* never published: nothing left behind */
		return;
	}
	ls_store__free(s->store);
	ls_rotate__closed(&s->rot, s->path);
	s->store = next;
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->interval_start = now;
	/*
	 * From what the last flush stored on, the counters count for the new profile: what the
	 * kernel counted after it, with its samples, is the new interval's.
	 */
	s->bs_base = s->bs_last;
	s->cpu_base = s->cpu_last;
	s->raises_base = s->raises_last;
	s->raised_ns_base = s->raised_ns_last;
	memcpy(s->prog_runs_base, s->prog_runs_last, sizeof(s->prog_runs_base));
	memcpy(s->prog_ns_base, s->prog_ns_last, sizeof(s->prog_ns_base));
	ls_recorder__rotate(s->rec, s->store);
	if (!ls_store__begin(s->store)) {
		lss_write_meta(s, s->argc, s->argv);
		ls_store__commit(s->store);
	}
}
