// SPDX-License-Identifier: MIT
/*
 * Whether the kernel lets a tracepoint program schedule a task work (wall mode reports the
 * intervals of threads without rseq with one, offcpu.bpf.c). A kernel can have the kfunc and
 * still refuse it there: 6.18.y stable kernels verify task-work callbacks as sleepable and then
 * refuse them in a program that is not ("sleepable callback in a program that is not
 * sleepable"), which failed the whole skeleton's load. So a program of 21 instructions that does
 * what handle_switch does is loaded first, without libbpf's object machinery: that would parse
 * the kernel's BTF (10-20 ms) a second time. The two type ids it needs are found by a walk over
 * the kernel BTF's type section that only steps over each type.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "taskwork_probe.h"
#include "log.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* The kernel's BTF: header, then the type and string sections (mapped, or read, whole). */
struct kbtf {
	struct btf_header h;
	char *data; /* hdr_len + every section */
	size_t len;
	bool mapped;
};

/*
 * Mapped where the kernel allows it (6.16+), populated in one call: a read of the sysfs file
 * returns a page a call, and each page of a fresh buffer faults in on its own (17 ms in all on a
 * VM where mapping it takes 2).
 */
static int kbtf_read(struct kbtf *k)
{
	int fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r = 1;

	memset(k, 0, sizeof(*k));
	if (fd < 0)
		return -errno;
	if (pread(fd, &k->h, sizeof(k->h), 0) != (ssize_t)sizeof(k->h) || k->h.magic != BTF_MAGIC ||
	    k->h.hdr_len < sizeof(k->h) || k->h.type_len > (1u << 28) ||
	    k->h.str_len > (1u << 28) || k->h.type_off > (1u << 28) || k->h.str_off > (1u << 28)) {
		close(fd);
		return -EINVAL;
	}
	k->len = (size_t)k->h.hdr_len + (k->h.str_off + k->h.str_len > k->h.type_off + k->h.type_len
						 ? k->h.str_off + k->h.str_len
						 : k->h.type_off + k->h.type_len);
	k->data = mmap(NULL, k->len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (k->data != MAP_FAILED) {
		k->mapped = true;
		close(fd);
		return 0;
	}
	k->data = malloc(k->len);
	while (k->data && r > 0 && n < k->len)
		if ((r = pread(fd, k->data + n, k->len - n, (off_t)n)) > 0)
			n += (size_t)r;
	close(fd);
	if (!k->data || n != k->len) {
		free(k->data);
		k->data = NULL;
		return -EIO;
	}
	return 0;
}

static void kbtf_free(struct kbtf *k)
{
	if (k->mapped)
		munmap(k->data, k->len);
	else
		free(k->data);
	k->data = NULL;
}

/* Bytes that follow a type's common record, by kind (include/uapi/linux/btf.h). */
static size_t kind_extra(const struct btf_type *t)
{
	size_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_DATASEC:
	case 19: /* BTF_KIND_ENUM64 (libbpf 1.1's headers may lack it) */
		return vlen * 12;
	case BTF_KIND_ENUM:
	case BTF_KIND_FUNC_PROTO:
		return vlen * 8;
	default: /* PTR, FWD, TYPEDEF, VOLATILE, CONST, RESTRICT, FUNC, FLOAT, TYPE_TAG */
		return 0;
	}
}

/* The ids of the types named as asked (0: not found); -EINVAL for a malformed section. */
static int kbtf_find(const struct kbtf *k, const int *kinds, const char *const *names, __u32 *ids,
		     int n)
{
	const char *types = k->data + k->h.hdr_len + k->h.type_off;
	const char *strs = k->data + k->h.hdr_len + k->h.str_off;
	size_t off = 0;
	__u32 id = 1;
	int left = n;

	for (int i = 0; i < n; i++)
		ids[i] = 0;
	while (left && off + sizeof(struct btf_type) <= k->h.type_len) {
		const struct btf_type *t = (const void *)(types + off);

		for (int i = 0; i < n; i++)
			if (!ids[i] && (int)BTF_INFO_KIND(t->info) == kinds[i] &&
			    t->name_off < k->h.str_len &&
			    !strncmp(strs + t->name_off, names[i], k->h.str_len - t->name_off)) {
				ids[i] = id;
				left--;
			}
		off += sizeof(*t) + kind_extra(t);
		id++;
	}
	return off > k->h.type_len ? -EINVAL : 0;
}

/* The probe's own BTF: a map value holding a bpf_task_work, the program and its callback. */
static struct btf *probe_btf(__u32 *key_id, __u32 *value_id, __u32 *main_id, __u32 *cb_id)
{
	struct btf *b = btf__new_empty();
	int i32, u64, tw, val, vptr, proto_main, proto_cb, err = 0;

	if (!b)
		return NULL;
/* each call returns a type id, or a negative errno that the first failure keeps in err */
#define ADD(expr)                   \
	({                          \
		int _r = (expr);    \
		if (_r < 0 && !err) \
			err = _r;   \
		_r;                 \
	})
	i32 = ADD(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
	u64 = ADD(btf__add_int(b, "unsigned long long", 8, 0));
	tw = ADD(btf__add_struct(b, "bpf_task_work", 8));
	if (!err)
		ADD(btf__add_field(b, "__opaque", u64, 0, 0));
	val = ADD(btf__add_struct(b, "ls_probe_value", 8));
	if (!err)
		ADD(btf__add_field(b, "tw", tw, 0, 0));
	vptr = ADD(btf__add_ptr(b, 0));
	proto_main = ADD(btf__add_func_proto(b, i32));
	if (!err)
		ADD(btf__add_func_param(b, "ctx", vptr));
	proto_cb = ADD(btf__add_func_proto(b, i32));
	if (!err) {
		ADD(btf__add_func_param(b, "map", vptr));
		ADD(btf__add_func_param(b, "key", vptr));
		ADD(btf__add_func_param(b, "value", vptr));
	}
	if (!err)
		*main_id = ADD(btf__add_func(b, "ls_probe_main", BTF_FUNC_GLOBAL, proto_main));
	if (!err)
		*cb_id = ADD(btf__add_func(b, "ls_probe_cb", BTF_FUNC_STATIC, proto_cb));
#undef ADD
	if (err) {
		btf__free(b);
		return NULL;
	}
	*key_id = i32;
	*value_id = val;
	return b;
}

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define LD_IMM64(d, s, i) INSN(BPF_LD | BPF_DW | BPF_IMM, d, s, 0, i), INSN(0, 0, 0, 0, 0)
#define CB_INSN		  19

/*
 * handle_switch's task work, alone: look the current task's slot up in an array map holding a
 * bpf_task_work and schedule a callback that returns 0. Loaded, never attached.
 */
static int probe_load(__u32 kfunc_id, __u32 attach_id, char *log, size_t log_size)
{
	__u32 key_id, value_id, main_id, cb_id;
	struct btf *b = probe_btf(&key_id, &value_id, &main_id, &cb_id);
	int btf_fd = -1, map_fd = -1, prog_fd = -1, err;

	if (!b)
		return -ENOMEM;
	btf_fd = btf__load_into_kernel(b) ? -1 : btf__fd(b);
	if (btf_fd < 0) {
		err = -errno;
		btf__free(b);
		return err;
	}
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .btf_fd = (__u32)btf_fd, .btf_key_type_id = key_id,
		    .btf_value_type_id = value_id);
	map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ls_tw_probe", 4, 8, 1, &mopts);
	if (map_fd < 0) {
		err = -errno;
		btf__free(b);
		return err;
	}
	struct bpf_insn insns[] = {
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_task_btf),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_0, 0, 0),
		INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
		LD_IMM64(BPF_REG_1, BPF_PSEUDO_MAP_FD, map_fd),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 8, 0), /* to insn 17 */
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_0, 0, 0),
		LD_IMM64(BPF_REG_3, BPF_PSEUDO_MAP_FD, map_fd),
		LD_IMM64(BPF_REG_4, BPF_PSEUDO_FUNC, CB_INSN - 13 - 1),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_5, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, (__s32)kfunc_id),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0), /* 17 */
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0), /* 19: the callback */
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	struct bpf_func_info funcs[] = {{0, main_id}, {CB_INSN, cb_id}};
	LIBBPF_OPTS(bpf_prog_load_opts, popts, .expected_attach_type = BPF_TRACE_RAW_TP,
		    .attach_btf_id = attach_id, .prog_btf_fd = (__u32)btf_fd, .func_info = funcs,
		    .func_info_cnt = 2, .func_info_rec_size = sizeof(funcs[0]), .log_buf = log,
		    .log_size = (__u32)log_size, .log_level = 1);
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "ls_tw_probe", "GPL", insns,
				sizeof(insns) / sizeof(insns[0]), &popts);
	err = prog_fd < 0 ? -errno : 0;
	if (prog_fd >= 0)
		close(prog_fd);
	close(map_fd);
	btf__free(b); /* closes btf_fd */
	return err;
}

int ls_taskwork_probe(bool *rseq, bool *task_work, char *why, size_t why_size)
{
	static const int kinds[] = {BTF_KIND_TYPEDEF, BTF_KIND_FUNC, BTF_KIND_TYPEDEF};
	static const char *const names[] = {"btf_trace_rseq_update",
					    "bpf_task_work_schedule_resume_impl",
					    "btf_trace_sched_switch"};
	char log[4096] = "";
	struct kbtf k;
	__u32 ids[3];
	int err;

	*rseq = *task_work = false;
	if (why_size)
		why[0] = 0;
	err = kbtf_read(&k);
	if (!err)
		err = kbtf_find(&k, kinds, names, ids, 3);
	kbtf_free(&k);
	if (err)
		return err;
	/* the tracepoint's typedef exists only with CONFIG_RSEQ */
	*rseq = ids[0] != 0;
	if (!ids[1] || !ids[2])
		return 0;
	err = probe_load(ids[1], ids[2], log, sizeof(log));
	*task_work = !err;
	if (err && why_size) {
		/* the verifier's reason: the line before the last ("kfunc ... failed ...") */
		char *end = strstr(log, "\nprocessed ");
		char *start = NULL;

		if (end) {
			*end = 0;
			if ((end = strrchr(log, '\n')))
				*end = 0;
			start = strrchr(log, '\n');
			snprintf(why, why_size, "%s", start ? start + 1 : log);
		} else {
			snprintf(why, why_size, "%s", strerror(-err));
		}
	}
	return 0;
}
