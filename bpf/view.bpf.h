/* SPDX-License-Identifier: MIT */
/* How a task sees files (struct ls_task_view), read from the kernel, and its key. */
#ifndef __LS_VIEW_BPF_H
#define __LS_VIEW_BPF_H

#include "maps.bpf.h"

/*
 * How the task sees files now (struct ls_task_view): true, or false with v->mntns 0 (unreadable).
 * Groups past v->ngroups are left as they were. Callers wrap it in a function of their own.
 */
static __always_inline bool ls_read_view(struct task_struct *task, struct ls_task_view *v)
{
	const struct cred *cred = BPF_CORE_READ(task, cred);
	struct group_info *gi = BPF_CORE_READ(cred, group_info);
	struct dentry *root = BPF_CORE_READ(task, fs, root.dentry);
	__u32 n;

	v->start_ns = BPF_CORE_READ(task, group_leader, start_time);
	v->mntns = BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);
	v->root_dev = BPF_CORE_READ(root, d_sb, s_dev);
	v->root_ino = BPF_CORE_READ(root, d_inode, i_ino);
	v->fsuid = BPF_CORE_READ(cred, fsuid.val);
	v->fsgid = BPF_CORE_READ(cred, fsgid.val);
	v->euid = BPF_CORE_READ(cred, euid.val);
	v->egid = BPF_CORE_READ(cred, egid.val);
	v->pad = 0;
	n = BPF_CORE_READ(gi, ngroups);
	v->ngroups = n;
	if (n > LS_VIEW_GROUPS)
		n = LS_VIEW_GROUPS;
	if (!root || (n && bpf_probe_read_kernel(v->groups, n * sizeof(__u32), &gi->gid))) {
		v->mntns = 0;
		return false;
	}
	return v->mntns != 0;
}

/*
 * ls_view_key() of the current task's view (task: bpf_get_current_task(); a global function
 * takes no kernel pointer), read into scratch v; 0 when it cannot be read whole. Global
 * (view.bpf.c): its groups' hash is verified once, not again in every program that emits.
 */
__u64 ls_task_view_key(__u64 task, struct ls_task_view *v);

#endif /* __LS_VIEW_BPF_H */
