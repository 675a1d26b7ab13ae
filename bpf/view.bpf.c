// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The key of a sampled thread's view (view.bpf.h), verified once for every program that emits. */
#include "view.bpf.h"

__noinline __u64 ls_task_view_key(__u64 task, struct ls_task_view *v)
{
	if (!v || !ls_read_view((struct task_struct *)task, v))
		return 0;
	return ls_view_key(v);
}
