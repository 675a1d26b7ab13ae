// SPDX-License-Identifier: MIT
/*
 * userspace/pyversions.c against real CPython builds.
 *
 * For every build listed by tests/tools/pylayouts.sh (Debian 3.11, pyenv 3.11.7/3.12.1/3.13.0 and
 * the Debian sid 3.13/3.14/3.15 of tests/fixtures/pyroot.sh) this reads Py_Version and the start of
 * _PyRuntime straight from the ELF file (the debug offsets are static initializers, so they are in
 * the file), resolves the layout, and compares every field with the offsetof() values that
 * pylayout_dump computed from that build's own headers. Then it corrupts real blobs.
 *
 * Needs $LS_PYLAYOUT_DIR (default .output/tests/pylayouts), made by `make pylayouts`.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pyversions.h"

#define MAX_BUILDS 16
#define MAX_FACTS  256

struct fact {
	char name[96];
	unsigned long value;
};

/* One interpreter build: its header facts and what its ELF file holds. */
struct build {
	char id[64];
	char binary[PATH_MAX];
	struct fact facts[MAX_FACTS];
	int nfacts;
	__u32 py_version; /* Py_Version from the ELF file */
	unsigned char blob[LS_PY_DEBUG_OFFSETS_MAX];
	size_t blob_len;	  /* bytes of _PyRuntime copied (the section may be shorter) */
	__u64 runtime_size;	  /* st_size of _PyRuntime */
	unsigned char getter[32]; /* first bytes of _PyThreadState_GetCurrent, if exported */
	size_t getter_len;
	__u64 tls_memsz, tls_align; /* PT_TLS */
};

static struct build builds[MAX_BUILDS];
static int nbuilds;

static const char *expected_ids[] = {
	"debian-3.11", "pyenv-3.11.7", "pyenv-3.12.1", "pyenv-3.13.0",
	"sid-3.13",    "sid-3.14",     "sid-3.15",
};

static unsigned long fact(const struct build *b, const char *name)
{
	int i;

	for (i = 0; i < b->nfacts; i++)
		if (strcmp(b->facts[i].name, name) == 0)
			return b->facts[i].value;
	fail_msg("%s: header fact %s missing from the dump", b->id, name);
	return 0;
}

static bool has_fact(const struct build *b, const char *name)
{
	int i;

	for (i = 0; i < b->nfacts; i++)
		if (strcmp(b->facts[i].name, name) == 0)
			return true;
	return false;
}

/* Copies @len bytes at virtual address @addr of the file, from whichever section holds them. */
static int read_vaddr(Elf *elf, int fd, __u64 addr, void *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sh.sh_flags & SHF_ALLOC))
			continue;
		if (addr >= sh.sh_addr && addr + len <= sh.sh_addr + sh.sh_size)
			return pread(fd, buf, len, sh.sh_offset + (addr - sh.sh_addr)) ==
					       (ssize_t)len
				       ? 0
				       : -EIO;
	}
	return -ENOENT;
}

static int find_symbol(Elf *elf, const char *name, GElf_Sym *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; data && i < n; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, i, &sym))
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0 && sym.st_shndx != SHN_UNDEF) {
				*out = sym;
				return 0;
			}
		}
	}
	return -ENOENT;
}

static void load_elf(struct build *b)
{
	GElf_Sym sym;
	GElf_Phdr ph;
	__u64 version = 0;
	size_t i, nph;
	int fd;
	Elf *elf;

	fd = open(b->binary, O_RDONLY);
	if (fd < 0)
		fail_msg("%s: cannot open %s: %s", b->id, b->binary, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);

	assert_int_equal(find_symbol(elf, "Py_Version", &sym), 0);
	assert_int_equal(read_vaddr(elf, fd, sym.st_value, &version, sizeof(version)), 0);
	b->py_version = (__u32)version;

	assert_int_equal(find_symbol(elf, "_PyRuntime", &sym), 0);
	b->runtime_size = sym.st_size;
	b->blob_len = sym.st_size < sizeof(b->blob) ? sym.st_size : sizeof(b->blob);
	assert_int_equal(read_vaddr(elf, fd, sym.st_value, b->blob, b->blob_len), 0);

	if (find_symbol(elf, "_PyThreadState_GetCurrent", &sym) == 0 &&
	    read_vaddr(elf, fd, sym.st_value, b->getter, sizeof(b->getter)) == 0)
		b->getter_len = sizeof(b->getter);
	assert_int_equal(elf_getphdrnum(elf, &nph), 0);
	for (i = 0; i < nph; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_TLS) {
			b->tls_memsz = ph.p_memsz;
			b->tls_align = ph.p_align;
		}
	elf_end(elf);
	close(fd);
}

static void load_build(const char *dir, const char *id)
{
	struct build *b = &builds[nbuilds++];
	char path[PATH_MAX], name[96];
	unsigned long value;
	FILE *f;

	snprintf(b->id, sizeof(b->id), "%s", id);
	snprintf(path, sizeof(path), "%s/%s.txt", dir, id);
	f = fopen(path, "r");
	if (!f)
		fail_msg("%s: %s missing (%s); run `make pylayouts` (tests/tools/pylayouts.sh)", id,
			 path, strerror(errno));
	if (fscanf(f, "binary %4095s\n", b->binary) != 1)
		fail_msg("%s: %s does not start with a binary line", id, path);
	while (fscanf(f, "%95s %lu\n", name, &value) == 2 && b->nfacts < MAX_FACTS) {
		snprintf(b->facts[b->nfacts].name, sizeof(b->facts[0].name), "%s", name);
		b->facts[b->nfacts++].value = value;
	}
	fclose(f);
	assert_true(b->nfacts > 40);
	load_elf(b);
}

static int setup(void **state)
{
	const char *dir = getenv("LS_PYLAYOUT_DIR") ?: ".output/tests/pylayouts";
	size_t i;

	elf_version(EV_CURRENT);
	for (i = 0; i < sizeof(expected_ids) / sizeof(expected_ids[0]); i++)
		load_build(dir, expected_ids[i]);
	return 0;
}

static struct build *build_by_id(const char *id)
{
	int i;

	for (i = 0; i < nbuilds; i++)
		if (strcmp(builds[i].id, id) == 0)
			return &builds[i];
	fail_msg("build %s not loaded", id);
	return NULL;
}

#define EXPECT(b, got, name)                                                     \
	do {                                                                     \
		unsigned long want_ = fact(b, name);                             \
		if ((unsigned long)(got) != want_)                               \
			fail_msg("%s: %s = %lu, headers say %lu", (b)->id, #got, \
				 (unsigned long)(got), want_);                   \
	} while (0)

/* The resolved layout of every real build matches its headers, field by field. */
static void test_real_builds_match_headers(void **state)
{
	int i;

	for (i = 0; i < nbuilds; i++) {
		struct build *b = &builds[i];
		unsigned minor = (b->py_version >> 16) & 0xff;
		struct ls_pylayout lay;
		struct ls_pyver info;
		int err;

		assert_int_equal(b->py_version,
				 fact(b, "version")); /* headers belong to the binary */
		/*
		 * 3.11/3.12 tables carry sizeof(_PyRuntimeState) as a check value, so it must match
		 * the headers. From 3.13 the blob is the truth: the Debian 3.15 build (GCC 16) has
		 * a PyInterpreterState 8 bytes larger than GCC 12 computes from the same headers,
		 * after every field we use; that is why 3.13+ is read from _Py_DebugOffsets.
		 */
		if (minor <= 12)
			assert_int_equal(b->runtime_size, fact(b, "sizeof._PyRuntimeState"));
		err = ls_pyversions__resolve(b->py_version, b->blob, b->blob_len, b->runtime_size,
					     &lay, &info);
		if (err)
			fail_msg("%s: resolve failed (%d): %s", b->id, err, info.note);
		assert_string_equal(info.note, "");
		assert_int_equal(info.from_debug_offsets, minor >= 13);
		assert_false(info.free_threaded);
		assert_int_equal(info.runtime_size, b->runtime_size);

		/* ls_pylayout: what the BPF walker reads */
		if (minor <= 12) {
			EXPECT(b, lay.tstate_frame, "PyThreadState.cframe");
			EXPECT(b, lay.cframe_current, "_PyCFrame.current_frame");
			EXPECT(b, lay.frame_code, "_PyInterpreterFrame.f_code");
			EXPECT(b, lay.frame_instr, "_PyInterpreterFrame.prev_instr");
		} else {
			EXPECT(b, lay.tstate_frame, "PyThreadState.current_frame");
			assert_int_equal(lay.cframe_current, LS_OFF_NONE);
			EXPECT(b, lay.frame_code, "_PyInterpreterFrame.f_executable");
			EXPECT(b, lay.frame_instr, "_PyInterpreterFrame.instr_ptr");
		}
		EXPECT(b, lay.tstate_native_tid, "PyThreadState.native_thread_id");
		EXPECT(b, lay.tstate_next, "PyThreadState.next");
		EXPECT(b, lay.frame_previous, "_PyInterpreterFrame.previous");
		EXPECT(b, lay.frame_owner, "_PyInterpreterFrame.owner");
		EXPECT(b, lay.code_adaptive, "PyCodeObject.co_code_adaptive");
		EXPECT(b, lay.code_firstlineno, "PyCodeObject.co_firstlineno");
		EXPECT(b, lay.code_filename, "PyCodeObject.co_filename");
		EXPECT(b, lay.code_qualname, "PyCodeObject.co_qualname");
		EXPECT(b, lay.code_linetable, "PyCodeObject.co_linetable");
		EXPECT(b, lay.interp_threads_head, "PyInterpreterState.threads.head");
		EXPECT(b, lay.runtime_interp_head, "_PyRuntimeState.interpreters.head");
		EXPECT(b, lay.owner_cstack, "owner.cstack");
		EXPECT(b, info.frame_owner_native, "owner.cstack");
		if (minor == 11)
			EXPECT(b, lay.runtime_gil_holder,
			       "_PyRuntimeState.gilstate.tstate_current");
		else
			assert_int_equal(lay.runtime_gil_holder, LS_OFF_NONE);
		assert_int_equal(lay.code_tag_mask, minor >= 14 ? 3 : 0);

		/* ls_pyinfo */
		EXPECT(b, info.runtime_interp_head, "_PyRuntimeState.interpreters.head");
		EXPECT(b, info.runtime_interp_main, "_PyRuntimeState.interpreters.main");
		/* a futex wait inside the GIL's state is a GIL wait */
		assert_true(info.gil_size >= fact(b, "sizeof.gil"));
		assert_true(info.gil_size <= fact(b, "sizeof.gil") + 16);
		/* the walker reads str and bytes objects itself */
		assert_int_equal(lay.unicode_length, info.unicode_length);
		assert_int_equal(lay.unicode_state, info.unicode_state);
		assert_int_equal(lay.unicode_ascii_data, info.unicode_ascii_data);
		assert_int_equal(lay.unicode_compact_data, info.unicode_compact_data);
		assert_int_equal(lay.bytes_size, info.bytes_size);
		assert_int_equal(lay.bytes_data, info.bytes_data);
		if (minor == 11) {
			EXPECT(b, info.runtime_gil, "_PyRuntimeState.ceval.gil");
			EXPECT(b, info.runtime_tss_key, "_PyRuntimeState.gilstate.autoTSSkey._key");
			EXPECT(b, info.runtime_gil_holder,
			       "_PyRuntimeState.gilstate.tstate_current");
			assert_int_equal(info.interp_ceval_gil, LS_PY_OFF_NONE);
		} else {
			if (minor <= 14)
				EXPECT(b, info.runtime_tss_key, "_PyRuntimeState.autoTSSkey._key");
			else
				assert_int_equal(info.runtime_tss_key, LS_PY_OFF_NONE);
			EXPECT(b, info.interp_ceval_gil, "PyInterpreterState.ceval.gil");
			EXPECT(b, info.gil_locked + fact(b, "PyInterpreterState._gil"),
			       "PyInterpreterState._gil.locked");
			EXPECT(b, info.gil_last_holder + fact(b, "PyInterpreterState._gil"),
			       "PyInterpreterState._gil.last_holder");
		}
		assert_int_equal(info.tstate_ways & LS_PY_TS_TSS_KEY ? 1 : 0, minor <= 14);
		assert_true(info.tstate_ways & LS_PY_TS_THREAD_LIST);
		EXPECT(b, info.interp_next, "PyInterpreterState.next");
		EXPECT(b, info.interp_threads_head, "PyInterpreterState.threads.head");
		if (minor >= 14)
			EXPECT(b, info.interp_threads_main, "PyInterpreterState.threads.main");
		else if (minor <= 12)
			assert_int_equal(info.interp_threads_main, LS_PY_OFF_NONE);
		EXPECT(b, info.tstate_size, "sizeof.PyThreadState");
		EXPECT(b, info.tstate_prev, "PyThreadState.prev");
		EXPECT(b, info.tstate_next, "PyThreadState.next");
		EXPECT(b, info.tstate_interp, "PyThreadState.interp");
		EXPECT(b, info.tstate_thread_id, "PyThreadState.thread_id");
		EXPECT(b, info.tstate_native_thread_id, "PyThreadState.native_thread_id");
		if (minor >= 15)
			EXPECT(b, info.tstate_holds_gil, "PyThreadState.holds_gil");
		else
			assert_int_equal(info.tstate_holds_gil, LS_PY_OFF_NONE);
		EXPECT(b, info.frame_size, "sizeof._PyInterpreterFrame");
		EXPECT(b, info.code_size, "sizeof.PyCodeObject");
		EXPECT(b, info.code_filename, "PyCodeObject.co_filename");
		EXPECT(b, info.code_name, "PyCodeObject.co_name");
		EXPECT(b, info.code_qualname, "PyCodeObject.co_qualname");
		EXPECT(b, info.code_linetable, "PyCodeObject.co_linetable");
		EXPECT(b, info.code_firstlineno, "PyCodeObject.co_firstlineno");
		EXPECT(b, info.code_argcount, "PyCodeObject.co_argcount");
		EXPECT(b, info.code_adaptive, "PyCodeObject.co_code_adaptive");
		EXPECT(b, info.unicode_length, "PyASCIIObject.length");
		EXPECT(b, info.unicode_state, "PyASCIIObject.state");
		EXPECT(b, info.unicode_ascii_data, "sizeof.PyASCIIObject");
		EXPECT(b, info.unicode_compact_data, "sizeof.PyCompactUnicodeObject");
		EXPECT(b, info.unicode_kind_shift, "unicode.kind_shift");
		EXPECT(b, info.unicode_compact_bit, "unicode.compact_bit");
		EXPECT(b, info.unicode_ascii_bit, "unicode.ascii_bit");
		EXPECT(b, info.bytes_size, "PyBytesObject.ob_base.ob_size");
		EXPECT(b, info.bytes_data, "PyBytesObject.ob_sval");
		if (minor >= 13) {
			EXPECT(b, info.debug_offsets_size, "sizeof._Py_DebugOffsets");
			assert_int_equal(ls_pyversions__blob_size(b->py_version),
					 fact(b, "sizeof._Py_DebugOffsets"));
		} else {
			assert_false(has_fact(b, "sizeof._Py_DebugOffsets"));
			assert_int_equal(ls_pyversions__blob_size(b->py_version), 0);
		}
	}
}

/* The 3.11/3.12 tables accept any blob (none is read) and only warn on a size mismatch. */
static void test_table_runtime_size_mismatch_warns(void **state)
{
	struct build *b = build_by_id("pyenv-3.12.1");
	struct ls_pylayout lay;
	struct ls_pyver info;

	assert_int_equal(ls_pyversions__resolve(b->py_version, NULL, 0, 0, &lay, &info), 0);
	assert_string_equal(info.note, "");
	assert_int_equal(
		ls_pyversions__resolve(b->py_version, NULL, 0, b->runtime_size + 64, &lay, &info),
		0);
	assert_non_null(strstr(info.note, "_PyRuntime is"));
	assert_int_equal(lay.frame_owner, fact(b, "_PyInterpreterFrame.owner"));
}

static int resolve_copy(const struct build *b, void (*mutate)(unsigned char *blob, void *arg),
			void *arg, size_t len, __u64 runtime_size, struct ls_pyver *info)
{
	unsigned char blob[LS_PY_DEBUG_OFFSETS_MAX];
	struct ls_pylayout lay;
	int err;

	memcpy(blob, b->blob, sizeof(blob));
	if (mutate)
		mutate(blob, arg);
	memset(&lay, 0xaa, sizeof(lay));
	err = ls_pyversions__resolve(b->py_version, blob, len, runtime_size, &lay, info);
	if (err) {
		/* nothing half-filled escapes a refusal */
		struct ls_pylayout zero;

		memset(&zero, 0, sizeof(zero));
		assert_memory_equal(&lay, &zero, sizeof(lay));
		assert_true(info->note[0] != '\0');
	}
	return err;
}

static void set_u64(unsigned char *blob, size_t pos, __u64 v)
{
	memcpy(blob + pos, &v, sizeof(v));
}

struct poke {
	size_t pos;
	__u64 value;
};

static void do_poke(unsigned char *blob, void *arg)
{
	struct poke *p = arg;

	set_u64(blob, p->pos, p->value);
}

static void bad_cookie(unsigned char *blob, void *arg)
{
	blob[3] ^= 0x20;
}

static void test_corrupt_blobs(void **state)
{
	const char *ids[] = {"pyenv-3.13.0", "sid-3.13", "sid-3.14", "sid-3.15"};
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct build *b = build_by_id(ids[i]);
		size_t size = fact(b, "sizeof._Py_DebugOffsets");
		struct ls_pyver info;
		struct poke p;

		/* the unmodified blob resolves; the rest must not */
		assert_int_equal(resolve_copy(b, NULL, NULL, size, b->runtime_size, &info), 0);

		assert_int_equal(resolve_copy(b, bad_cookie, NULL, size, 0, &info), -EBADMSG);
		assert_non_null(strstr(info.note, "cookie"));

		assert_int_equal(resolve_copy(b, NULL, NULL, size - 1, 0, &info), -EBADMSG);
		assert_non_null(strstr(info.note, "bytes of _Py_DebugOffsets"));
		assert_int_equal(ls_pyversions__resolve(b->py_version, NULL, 0, 0,
							&(struct ls_pylayout){}, &info),
				 -EBADMSG);

		/* another patch release's blob in this binary */
		p = (struct poke){fact(b, "dbg.version"), b->py_version + 0x100};
		assert_int_equal(resolve_copy(b, do_poke, &p, size, 0, &info), -EBADMSG);
		assert_non_null(strstr(info.note, "says version"));

		p = (struct poke){fact(b, "dbg.free_threaded"), 1};
		assert_int_equal(resolve_copy(b, do_poke, &p, size, 0, &info), -ENOTSUP);
		assert_true(info.free_threaded);
		assert_non_null(strstr(info.note, "free-threaded"));

		/* the binary's _PyRuntime symbol disagrees with the blob */
		assert_int_equal(resolve_copy(b, NULL, NULL, size, b->runtime_size + 8, &info),
				 -EBADMSG);

		/* an offset at the very end of its struct (no room for the 8-byte field) */
		p = (struct poke){fact(b, "dbg.thread_state.native_thread_id"),
				  fact(b, "sizeof.PyThreadState") - 4};
		assert_int_equal(resolve_copy(b, do_poke, &p, size, 0, &info), -EBADMSG);
		assert_non_null(strstr(info.note, "native_thread_id"));

		p = (struct poke){fact(b, "dbg.code_object.linetable"), ~0ull};
		assert_int_equal(resolve_copy(b, do_poke, &p, size, 0, &info), -EBADMSG);

		/* a struct size of 0 and one beyond reason */
		p = (struct poke){fact(b, "dbg.interpreter_frame.size"), 0};
		assert_int_equal(resolve_copy(b, do_poke, &p, size, 0, &info), -EBADMSG);
		assert_non_null(strstr(info.note, "_PyInterpreterFrame size"));
		p = (struct poke){fact(b, "dbg.code_object.size"), 1ull << 40};
		assert_int_equal(resolve_copy(b, do_poke, &p, size, 0, &info), -EBADMSG);

		/* inside PyInterpreterState, but too far for the u16 in ls_pylayout */
		p = (struct poke){fact(b, "dbg.interpreter_state.threads_head"), 70000};
		assert_int_equal(resolve_copy(b, do_poke, &p, size, 0, &info), -EBADMSG);
		assert_non_null(strstr(info.note, "does not fit"));

		p = (struct poke){fact(b, "dbg.unicode_object.asciiobject_size"), 0};
		assert_int_equal(resolve_copy(b, do_poke, &p, size, 0, &info), -EBADMSG);
	}
}

/*
 * Random single-slot corruptions of real blobs never crash, and whatever is accepted stays inside
 * the struct sizes the same blob declares.
 */
static void test_random_corruptions_stay_in_bounds(void **state)
{
	const char *ids[] = {"sid-3.13", "sid-3.14", "sid-3.15"};
	unsigned seed = 12345, accepted = 0, refused = 0;
	size_t i;
	int n;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct build *b = build_by_id(ids[i]);
		size_t size = fact(b, "sizeof._Py_DebugOffsets");

		for (n = 0; n < 3000; n++) {
			struct ls_pyver info;
			struct poke p;

			seed = seed * 1103515245 + 12345;
			p.pos = 24 + ((seed >> 8) % ((size - 24) / 8)) * 8; /* keep the header */
			seed = seed * 1103515245 + 12345;
			switch (seed >> 29) {
			case 0:
				p.value = 0;
				break;
			case 1:
				p.value = ~0ull;
				break;
			case 2:
				p.value = (seed >> 4) & 0xffff;
				break;
			case 3:
				p.value = (seed >> 4) & 0xff;
				break;
			default:
				p.value = ((__u64)seed << 20) ^ seed;
				break;
			}
			if (resolve_copy(b, do_poke, &p, size, 0, &info) == 0) {
				struct ls_pylayout lay;

				accepted++;
				{
					unsigned char blob[LS_PY_DEBUG_OFFSETS_MAX];

					memcpy(blob, b->blob, sizeof(blob));
					do_poke(blob, &p);
					assert_int_equal(ls_pyversions__resolve(b->py_version, blob,
										size, 0, &lay,
										&info),
							 0);
				}
				assert_true(lay.frame_owner < info.frame_size);
				assert_true(lay.frame_instr + 8u <= info.frame_size);
				assert_true(lay.frame_code + 8u <= info.frame_size);
				assert_true(lay.frame_previous + 8u <= info.frame_size);
				assert_true(lay.tstate_frame + 8u <= info.tstate_size);
				assert_true(lay.tstate_native_tid + 8u <= info.tstate_size);
				assert_true(lay.code_linetable + 8u <= info.code_size);
				assert_true(lay.code_firstlineno + 4u <= info.code_size);
				assert_true(lay.code_adaptive <= info.code_size);
				assert_true(info.unicode_ascii_data <= info.unicode_compact_data);
			} else {
				refused++;
			}
		}
	}
	/* both outcomes happened, so the check above was exercised */
	assert_true(accepted > 100);
	assert_true(refused > 100);
}

static void test_unknown_versions(void **state)
{
	static const struct {
		__u32 version;
		const char *text;
	} cases[] = {
		{0x030a0df0, "3.10.13 is not supported"},
		{0x02070ff0, "2.7.15 is not supported"},
		{0x031000f0, "3.16.0 is newer"},
		{0x030f00a3, "3.15.0a3 is a pre-release"},
		{0x030e00b2, "3.14.0b2 is a pre-release"},
	};
	struct ls_pylayout lay;
	struct ls_pyver info;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned char blob[LS_PY_DEBUG_OFFSETS_MAX] = {0};

		assert_int_equal(ls_pyversions__resolve(cases[i].version, blob, sizeof(blob), 0,
							&lay, &info),
				 -ENOTSUP);
		if (!strstr(info.note, cases[i].text))
			fail_msg("note '%s' lacks '%s'", info.note, cases[i].text);
		assert_non_null(strstr(info.note, "native"));
	}
	assert_int_equal(ls_pyversions__blob_size(0x031000f0), -ENOTSUP);
	assert_int_equal(ls_pyversions__blob_size(0x030a0df0), -ENOTSUP);
	assert_int_equal(ls_pyversions__resolve(0x030b02f0, NULL, 0, 0, NULL, &info), -EINVAL);
	/* a release candidate of a known minor is accepted (it has the final's layout) */
	assert_int_equal(ls_pyversions__resolve(0x030c00c1, NULL, 0, 0, &lay, &info), 0);
}

static void test_format(void **state)
{
	char buf[32];

	assert_int_equal(ls_pyversions__format(0x030e0af0, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "3.14.10");
	ls_pyversions__format(0x030f00b2, buf, sizeof(buf));
	assert_string_equal(buf, "3.15.0b2");
	ls_pyversions__format(0x030d00c1, buf, sizeof(buf));
	assert_string_equal(buf, "3.13.0rc1");
	ls_pyversions__format(0x030b02f0, buf, sizeof(buf));
	assert_string_equal(buf, "3.11.2");
}

/* _Py_tss_tstate: static binaries give a TLS offset inside their PT_TLS block; shared ones don't.
 */
static void test_tls_getter(void **state)
{
	static const unsigned char no_endbr[] = {0x64, 0x48, 0x8b, 0x04, 0x25,
						 0xf0, 0xff, 0xff, 0xff, 0xc3};
	static const unsigned char no_ret[] = {0x64, 0x48, 0x8b, 0x04, 0x25,
					       0xf0, 0xff, 0xff, 0xff, 0x90};
	const char *ids[] = {"sid-3.13", "sid-3.14", "sid-3.15"};
	__s64 off;
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct build *b = build_by_id(ids[i]);
		__u64 block;

		assert_true(b->getter_len > 0);
		assert_true(b->tls_memsz > 0);
		assert_int_equal(ls_pyversions__tls_tpoff(b->getter, b->getter_len, &off), 0);
		/* x86-64 variant II: the executable's block ends at the thread pointer */
		block = (b->tls_memsz + b->tls_align - 1) / b->tls_align * b->tls_align;
		assert_true(off < 0 && off >= -(__s64)block && off % 8 == 0);
	}
	assert_int_equal(ls_pyversions__tls_tpoff(build_by_id("pyenv-3.13.0")->getter,
						  build_by_id("pyenv-3.13.0")->getter_len, &off),
			 -ENOENT);
	assert_int_equal(ls_pyversions__tls_tpoff(no_endbr, sizeof(no_endbr), &off), 0);
	assert_int_equal(off, -16);
	assert_int_equal(ls_pyversions__tls_tpoff(no_ret, sizeof(no_ret), &off), -ENOENT);
	assert_int_equal(ls_pyversions__tls_tpoff(no_endbr, 5, &off), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_builds_match_headers),
		cmocka_unit_test(test_table_runtime_size_mismatch_warns),
		cmocka_unit_test(test_corrupt_blobs),
		cmocka_unit_test(test_random_corruptions_stay_in_bounds),
		cmocka_unit_test(test_unknown_versions),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_tls_getter),
	};

	return cmocka_run_group_tests_name("pyversions", tests, setup, NULL);
}
