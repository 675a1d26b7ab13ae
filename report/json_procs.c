// SPDX-License-Identifier: MIT
/* The processes of a profile, their images, and the children each line started. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include "json_int.h"

static json_t *exit_text(int status)
{
	char buf[64];

	if (status < 0)
		return json_null();
	if (WIFEXITED(status))
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "signal %s", sigabbrev_np(WTERMSIG(status)) ?: "?");
	else
		snprintf(buf, sizeof(buf), "status %d", status);
	return json_string(buf);
}

static json_t *python_text(const char *python, const char *build)
{
	char buf[128];

	if (!python)
		return json_null();
	snprintf(buf, sizeof(buf), "%s (%s)", python, build ?: "");
	return json_string(buf);
}

/* A process's images in order: the one it was first seen with, then each exec. */
static json_t *execs_array(const struct ls_model *m, const struct ls_mproc *p)
{
	json_t *a = json_array();

	for (size_t k = 0; k < p->nexecs; k++) {
		const struct ls_mexec *x = &p->execs[k];
		json_t *o = json_object();

		json_object_set_new(o, "how", ls_json__str(x->how));
		json_object_set_new(o, "argv", ls_json__name(x->argv ? x->argv : x->comm));
		json_object_set_new(o, "exe", ls_json__name(x->exe));
		json_object_set_new(o, "comm", ls_json__str(x->comm));
		json_object_set_new(o, "start_s", ls_json__secs(x->start_ns));
		json_object_set_new(o, "end_s",
				    x->end_ns >= 0 ? ls_json__secs(x->end_ns) : json_null());
		json_object_set_new(o, "python", python_text(x->python, x->python_build));
		json_object_set_new(o, "note", ls_json__str(x->note));
		json_object_set_new(o, "samples", json_integer(x->samples));
		json_object_set_new(o, "cpu_s", ls_json__secs(x->cpu_ns));
		json_object_set_new(o, "wait_s", m->wall ? ls_json__secs(x->wait_ns) : json_null());
		json_object_set_new(o, "unresolved", json_integer(x->unresolved));
		json_object_set_new(o, "first_line_s",
				    x->first_line_ns >= 0 ? ls_json__secs(x->first_line_ns)
							  : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

json_t *lsj_process_object(const struct ls_model *m, const struct ls_mproc *p)
{
	json_t *o = json_object();

	json_object_set_new(o, "pid", json_integer(p->pid));
	json_object_set_new(o, "ppid", json_integer(p->ppid));
	json_object_set_new(o, "nspid",
			    p->nspid && p->nspid != p->pid ? json_integer(p->nspid) : json_null());
	json_object_set_new(o, "comm", ls_json__str(p->comm));
	json_object_set_new(o, "argv", ls_json__name(p->argv ? p->argv : p->comm));
	json_object_set_new(o, "start_s", ls_json__secs(p->start_ns));
	json_object_set_new(o, "end_s", p->end_ns >= 0 ? ls_json__secs(p->end_ns) : json_null());
	json_object_set_new(o, "exit", exit_text(p->exit_code));
	json_object_set_new(o, "python", python_text(p->python, p->python_build));
	json_object_set_new(o, "note", ls_json__str(p->note));
	json_object_set_new(o, "execs", execs_array(m, p));
	json_object_set_new(o, "cgroup", ls_json__str(p->cgroup));
	json_object_set_new(o, "cgroup_id",
			    p->cgroup_id >= 0 ? json_integer(p->cgroup_id) : json_null());
	json_object_set_new(o, "host", ls_json__name(ls_model__host(m, (int)(p - m->procs))));
	json_object_set_new(o, "rank", p->rank >= 0 ? json_integer(p->rank) : json_null());
	json_object_set_new(o, "local_rank",
			    p->local_rank >= 0 ? json_integer(p->local_rank) : json_null());
	json_object_set_new(o, "world_size",
			    p->world_size >= 0 ? json_integer(p->world_size) : json_null());
	json_object_set_new(o, "master_addr", ls_json__name(p->master_addr));
	json_object_set_new(o, "trace", ls_json__str(p->trace));
	json_object_set_new(o, "threads", json_integer(p->threads));
	json_object_set_new(o, "samples", json_integer(p->samples));
	json_object_set_new(o, "native_samples", json_integer(p->native_samples));
	json_object_set_new(o, "wait_s", m->wall ? ls_json__secs(p->wait_ns) : json_null());
	json_object_set_new(o, "runq_s", m->wall ? ls_json__secs(p->runq_ns) : json_null());
	json_object_set_new(o, "gil_wait_s", m->wall ? ls_json__secs(p->gil_ns) : json_null());
	json_object_set_new(o, "idle_wait_s",
			    m->wall ? ls_json__secs(p->idle_wait_ns) : json_null());
	if (p->parent >= 0 && p->spawn_file >= 0)
		json_object_set_new(
			o, "parent",
			json_pack("{s:i, s:i, s:i, s:o, s:s}", "proc", p->parent, "src",
				  p->spawn_file, "line", p->spawn_line, "wait_s",
				  m->wall ? ls_json__secs(p->parent_wait_ns) : json_null(), "via",
				  p->by_waiter ? "waiting thread" : "spawn"));
	else
		json_object_set_new(o, "parent", json_null());
	return o;
}

json_t *lsj_children_array(const struct ls_model *m)
{
	json_t *a = json_array();

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ls_mproc *p = &m->procs[i];
		json_t *o;

		if (p->parent < 0 || p->spawn_file < 0)
			continue;
		o = json_object();
		json_object_set_new(o, "proc", json_integer(i));
		json_object_set_new(o, "parent_proc", json_integer(p->parent));
		json_object_set_new(o, "src", json_integer(p->spawn_file));
		json_object_set_new(o, "line", json_integer(p->spawn_line));
		json_object_set_new(o, "pid", json_integer(p->pid));
		json_object_set_new(o, "kind", json_string("process"));
		json_object_set_new(o, "status",
				    json_string(p->exit_code > 0 || (p->exit_code >= 0 &&
								     WIFSIGNALED(p->exit_code))
							? "Failed"
							: "Success"));
		json_object_set_new(o, "source", json_null());
		json_object_set_new(o, "cmd", ls_json__name(p->argv ? p->argv : p->comm));
		json_object_set_new(o, "wait_s",
				    m->wall ? ls_json__secs(p->parent_wait_ns) : json_null());
		json_object_set_new(o, "duration_s",
				    p->end_ns >= 0 ? ls_json__secs(p->end_ns - p->start_ns)
						   : json_null());
		json_object_set_new(o, "exit", exit_text(p->exit_code));
		json_object_set_new(o, "via",
				    json_string(p->by_waiter ? "waiting thread" : "spawn"));
		json_array_append_new(a, o);
	}
	for (size_t i = 0; i < m->nnbruns; i++) {
		const struct ls_mnbrun *r = &m->nbruns[i];
		int64_t total = 0;
		json_t *o;

		/* the %run line waited for the child notebook: its time on the stack is the child's
		 */
		for (size_t k = 0; k < m->nlines; k++)
			if (m->lines[k].proc == r->proc && m->lines[k].file == r->src &&
			    m->lines[k].line == r->line)
				total += m->lines[k].total_ns;
		o = json_pack("{s:i, s:i, s:i, s:i, s:n, s:s, s:s, s:o, s:o, s:o, s:n, s:i, s:s}",
			      "proc", r->proc, "parent_proc", r->proc, "src", r->src, "line",
			      r->line, "pid", "kind", "notebook", "status", "Reference", "cmd",
			      ls_json__line_text(&m->files[r->src], r->line), "wait_s",
			      ls_json__secs(total), "duration_s", ls_json__secs(total), "exit",
			      "source", r->child, "via", "spawn");
		json_array_append_new(a, o);
	}
	return a;
}
