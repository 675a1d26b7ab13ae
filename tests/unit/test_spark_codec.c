// SPDX-License-Identifier: MIT
/*
 * Spark event-log codecs against logs compressed by Spark's own codec classes
 * (tests/fixtures/spark/make-compressed.sh): the same bytes however the input is cut, and
 * damaged input refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "spark_codec.h"

#define FIXTURES "tests/fixtures/spark/"
/* apache/spark's sql/core/src/test/resources/spark-events/local-1596020211915, too big to keep
 * plain here: its length and SHA-256 stand for it */
#define LOCAL_LEN    693297
#define LOCAL_SHA256 "eb0a969dd7d157940046b5f3297055aef205ea0f071b3d1effdc2489326f2249"

struct file {
	char *data;
	size_t len;
};

/* What a decoder gave, all of it. */
struct sink {
	char *data;
	size_t len, cap;
	size_t fail_at; /* return -EIO once this many bytes are had (0: never) */
};

static struct file pi;

static uint64_t rnd_state = 0x9e3779b97f4a7c15;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static struct file load(const char *name)
{
	char path[256];
	struct file f = {0};
	FILE *fp;
	long n;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	fp = fopen(path, "rb");
	if (!fp)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	assert_true(n > 0);
	rewind(fp);
	f.len = n;
	f.data = malloc(f.len);
	assert_non_null(f.data);
	assert_int_equal(fread(f.data, 1, f.len, fp), f.len);
	fclose(fp);
	return f;
}

static int collect(void *ctx, const char *data, size_t len)
{
	struct sink *s = ctx;

	assert_true(len > 0);
	if (s->len + len > s->cap) {
		s->cap = (s->len + len) * 2;
		s->data = realloc(s->data, s->cap);
		assert_non_null(s->data);
	}
	memcpy(s->data + s->len, data, len);
	s->len += len;
	return s->fail_at && s->len >= s->fail_at ? -EIO : 0;
}

/* How to cut the input: whole, byte by byte, or in random chunks up to max bytes. */
enum cut { WHOLE, BYTES, RANDOM };

/* Feeds data cut as asked; the first error, or 0 */
static int feed(struct ls_spark_dec *d, const char *data, size_t len, enum cut cut, size_t max,
		struct sink *s)
{
	size_t off = 0, n;
	int err;

	while (off < len) {
		n = cut == WHOLE ? len - off : cut == BYTES ? 1 : 1 + rnd() % max;
		if (n > len - off)
			n = len - off;
		err = ls_spark_dec__feed(d, data + off, n, collect, s);
		if (err)
			return err;
		off += n;
	}
	return 0;
}

static void sha256_hex(const char *data, size_t len, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n;

	assert_true(EVP_Digest(data, len, md, &n, EVP_sha256(), NULL));
	assert_int_equal(n, 32);
	for (unsigned int i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
}

/* Decodes file with c, cut as asked, and checks it makes want (NULL: the local log) */
static void check_decode(const char *file, enum ls_spark_codec c, const struct file *want,
			 enum cut cut, size_t max)
{
	struct file f = load(file);
	struct sink s = {0};
	struct ls_spark_dec *d = ls_spark_dec__new(c);
	char hex[65];

	assert_non_null(d);
	assert_int_equal(feed(d, f.data, f.len, cut, max, &s), 0);
	assert_int_equal(ls_spark_dec__pending(d), 0);
	assert_string_equal(ls_spark_dec__why(d), "");
	if (want) {
		assert_int_equal(s.len, want->len);
		assert_memory_equal(s.data, want->data, want->len);
	} else {
		assert_int_equal(s.len, LOCAL_LEN);
		sha256_hex(s.data, s.len, hex);
		assert_string_equal(hex, LOCAL_SHA256);
	}
	ls_spark_dec__free(d);
	free(s.data);
	free(f.data);
}

static const struct {
	const char *file;
	enum ls_spark_codec codec;
	bool local; /* decodes to the local log, not to pi */
} fixtures[] = {
	{"pi", LS_SPARK_PLAIN, false},	       {"pi.lz4", LS_SPARK_LZ4, false},
	{"pi.snappy", LS_SPARK_SNAPPY, false}, {"pi.zstd", LS_SPARK_ZSTD, false},
	{"local.lz4", LS_SPARK_LZ4, true},
};
#define NFIX (sizeof(fixtures) / sizeof(fixtures[0]))

static void test_whole(void **state)
{
	for (size_t i = 0; i < NFIX; i++)
		check_decode(fixtures[i].file, fixtures[i].codec, fixtures[i].local ? NULL : &pi,
			     WHOLE, 0);
}

/* every byte a frame boundary of its own: headers and lengths cut at each point */
static void test_byte_by_byte(void **state)
{
	for (size_t i = 0; i < NFIX; i++)
		check_decode(fixtures[i].file, fixtures[i].codec, fixtures[i].local ? NULL : &pi,
			     BYTES, 0);
}

static void test_random_chunks(void **state)
{
	static const size_t maxes[] = {7, 100, 4096, 70000};

	for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++)
		for (int round = 0; round < 5; round++)
			for (size_t i = 0; i < NFIX; i++)
				check_decode(fixtures[i].file, fixtures[i].codec,
					     fixtures[i].local ? NULL : &pi, RANDOM, maxes[m]);
}

/* Spark reads concatenated streams as one (lz4's stopOnEmptyBlock false, snappy's header in a
 * chunk length's place, zstd frames) */
static void test_concatenated(void **state)
{
	for (size_t i = 1; i < 4; i++) {
		struct file f = load(fixtures[i].file);
		struct ls_spark_dec *d = ls_spark_dec__new(fixtures[i].codec);
		struct sink s = {0};
		char *two = malloc(2 * f.len);

		assert_non_null(d);
		assert_non_null(two);
		memcpy(two, f.data, f.len);
		memcpy(two + f.len, f.data, f.len);
		assert_int_equal(feed(d, two, 2 * f.len, RANDOM, 5000, &s), 0);
		assert_int_equal(ls_spark_dec__pending(d), 0);
		assert_int_equal(s.len, 2 * pi.len);
		assert_memory_equal(s.data, pi.data, pi.len);
		assert_memory_equal(s.data + pi.len, pi.data, pi.len);
		ls_spark_dec__free(d);
		free(two);
		free(s.data);
		free(f.data);
	}
}

/* A log still being written: what is there decodes, the cut frame waits, no error. */
static void test_truncated(void **state)
{
	for (size_t i = 1; i < NFIX; i++) {
		struct file f = load(fixtures[i].file);
		const size_t cuts[] = {1, 5, 20, 300, f.len / 2, f.len - 1};

		for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
			struct ls_spark_dec *d = ls_spark_dec__new(fixtures[i].codec);
			struct sink s = {0};

			assert_non_null(d);
			assert_int_equal(feed(d, f.data, cuts[k], RANDOM, 999, &s), 0);
			assert_true(ls_spark_dec__pending(d) > 0);
			assert_true(ls_spark_dec__pending(d) <= cuts[k]);
			assert_string_equal(ls_spark_dec__why(d), "");
			if (!fixtures[i].local) {
				assert_true(s.len <= pi.len);
				assert_memory_equal(s.data, pi.data, s.len);
			}
			/* the rest completes it */
			assert_int_equal(feed(d, f.data + cuts[k], f.len - cuts[k], WHOLE, 0, &s),
					 0);
			assert_int_equal(ls_spark_dec__pending(d), 0);
			assert_int_equal(s.len, fixtures[i].local ? LOCAL_LEN : pi.len);
			ls_spark_dec__free(d);
			free(s.data);
		}
		free(f.data);
	}
}

static void put_le32(char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (char)(v >> (8 * i));
}

static void put_be32(char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (char)(v >> (24 - 8 * i));
}

static uint32_t get_be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return (uint32_t)u[0] << 24 | u[1] << 16 | u[2] << 8 | u[3];
}

/* f must fail with -EBADMSG, fed whole and byte by byte, and stay failed */
static void check_refused(enum ls_spark_codec c, const struct file *f, const char *what)
{
	for (enum cut cut = WHOLE; cut <= BYTES; cut++) {
		struct ls_spark_dec *d = ls_spark_dec__new(c);
		struct sink s = {0};

		assert_non_null(d);
		if (feed(d, f->data, f->len, cut, 0, &s) != -EBADMSG)
			fail_msg("%s: %s accepted", ls_spark_codec__name(c), what);
		assert_true(strlen(ls_spark_dec__why(d)) > 0);
		/* what was decoded before the damage is right */
		assert_true(s.len <= pi.len);
		if (c != LS_SPARK_ZSTD)
			assert_memory_equal(s.data, pi.data, s.len);
		/* refuses everything after */
		assert_int_equal(ls_spark_dec__feed(d, "LZ4Block", 8, collect, &s), -EBADMSG);
		assert_int_equal(ls_spark_dec__feed(d, "", 0, collect, &s), -EBADMSG);
		ls_spark_dec__free(d);
		free(s.data);
	}
}

/* Blocks that would not shrink are stored raw (method 0x10); LZ4BlockOutputStream writes such */
static void test_lz4_raw(void **state)
{
	static const char text[] = "{\"Event\":\"SparkListenerLogStart\"}\n";
	size_t n = sizeof(text) - 1, len = 0;
	struct file f = {.len = 2 * (21 + n) + 21};
	struct sink s = {0};

	f.data = calloc(1, f.len);
	assert_non_null(f.data);
	for (int i = 0; i < 2; i++, len += 21 + n) {
		memcpy(f.data + len, "LZ4Block\x15", 9);
		put_le32(f.data + len + 9, n);
		put_le32(f.data + len + 13, n);
		put_le32(f.data + len + 17, XXH32(text, n, 0x9747b28c) & 0x0FFFFFFF);
		memcpy(f.data + len + 21, text, n);
	}
	memcpy(f.data + len, "LZ4Block\x15", 9);
	for (enum cut cut = WHOLE; cut <= BYTES; cut++) {
		struct ls_spark_dec *d = ls_spark_dec__new(LS_SPARK_LZ4);

		assert_non_null(d);
		s.len = 0;
		assert_int_equal(feed(d, f.data, f.len, cut, 0, &s), 0);
		assert_int_equal(ls_spark_dec__pending(d), 0);
		assert_int_equal(s.len, 2 * n);
		assert_memory_equal(s.data, text, n);
		assert_memory_equal(s.data + n, text, n);
		ls_spark_dec__free(d);
	}
	/* the checksum covers raw data too */
	f.data[21 + 3] ^= 1;
	check_refused(LS_SPARK_LZ4, &f, "flipped raw byte");
	free(s.data);
	free(f.data);
}

static void test_lz4_damaged(void **state)
{
	struct file f = load("pi.lz4");
	char *orig = malloc(f.len);
	uint32_t clen = 0, next;

	assert_non_null(orig);
	memcpy(orig, f.data, f.len);
	/* blocks of 32 KiB, level 5 (2^15), the first one compressed */
	assert_memory_equal(f.data, "LZ4Block\x25", 9);
	memcpy(&clen, f.data + 9, 4);
	next = 21 + clen;
#define EDIT(what, stmt)                                 \
	do {                                             \
		memcpy(f.data, orig, f.len);             \
		stmt;                                    \
		check_refused(LS_SPARK_LZ4, &f, (what)); \
	} while (0)
	EDIT("bad magic", f.data[0] = 'M');
	EDIT("bad magic in the second block", f.data[next + 3] ^= 0x20);
	EDIT("flipped data byte", f.data[21 + 100] ^= 0x01);
	EDIT("flipped last data byte", f.data[next - 1] ^= 0x80);
	EDIT("flipped checksum", f.data[17] ^= 0x01);
	EDIT("checksum's masked-off bits set", f.data[20] |= 0x10);
	EDIT("unknown method", f.data[8] = 0x35);
	EDIT("decoded length over the block size", put_le32(f.data + 13, (1u << 15) + 1));
	EDIT("decoded length over 64 MiB",
	     (f.data[8] = 0x2f, put_le32(f.data + 13, (64u << 20) + 1)));
	EDIT("negative decoded length", put_le32(f.data + 13, 0xffffffff));
	EDIT("negative compressed length", put_le32(f.data + 9, 0x80000000));
	EDIT("compressed length over the bound", put_le32(f.data + 9, 40000));
	EDIT("raw block lengths differ", f.data[8] = 0x15);
	EDIT("compressed length 0", put_le32(f.data + 9, 0));
	EDIT("end block with a checksum", put_le32(f.data + f.len - 4, 1));
	EDIT("end block with data", put_le32(f.data + f.len - 12, 1));
	EDIT("bad magic of the end block", f.data[f.len - 21] = 'X');
#undef EDIT
	free(orig);
	free(f.data);
}

static void test_snappy_damaged(void **state)
{
	struct file f = load("pi.snappy");
	char *orig = malloc(f.len);

	assert_non_null(orig);
	memcpy(orig, f.data, f.len);
	/* header: magic, version 1, compatible version 1 */
	assert_memory_equal(f.data, "\x82SNAPPY\0\0\0\0\1\0\0\0\1", 16);
#define EDIT(what, stmt)                                    \
	do {                                                \
		memcpy(f.data, orig, f.len);                \
		stmt;                                       \
		check_refused(LS_SPARK_SNAPPY, &f, (what)); \
	} while (0)
	EDIT("bad magic", f.data[1] = 's');
	EDIT("version 0", f.data[11] = 0);
	EDIT("chunk length over the cap", put_be32(f.data + 16, 0x7fffffff));
	EDIT("negative chunk length", put_be32(f.data + 16, 0xfffffff0));
	EDIT("chunk length 0", put_be32(f.data + 16, 0));
	/* the chunk's varint decoded length: the chunk then makes a different length */
	EDIT("flipped decoded length", f.data[20] ^= 0x01);
	EDIT("decoded length over 64 MiB",
	     (put_be32(f.data + 16, 5), memcpy(f.data + 20, "\x81\x80\x80\x20\x00", 5)));
	EDIT("chunk length one short", put_be32(f.data + 16, get_be32(f.data + 16) - 1));
#undef EDIT
	free(orig);
	free(f.data);
}

static void test_zstd_damaged(void **state)
{
	struct file f = load("pi.zstd");
	char *orig = malloc(f.len);

	assert_non_null(orig);
	memcpy(orig, f.data, f.len);
	assert_memory_equal(f.data, "\x28\xb5\x2f\xfd", 4);
#define EDIT(what, stmt)                                  \
	do {                                              \
		memcpy(f.data, orig, f.len);              \
		stmt;                                     \
		check_refused(LS_SPARK_ZSTD, &f, (what)); \
	} while (0)
	EDIT("bad magic", f.data[0] = 0x29);
	/* libzstd would read it as a v0.6 frame (fed whole) */
	EDIT("legacy magic", f.data[0] = 0x26);
	EDIT("bad magic of a skippable frame", memcpy(f.data, "\x50\x2a\x4d\x19", 4));
	/* window descriptor: 2^27 bytes, over the 64 MiB cap */
	EDIT("window over 64 MiB", f.data[5] = (27 - 10) << 3);
	EDIT("reserved frame header bit", f.data[4] |= 0x08);
	/* block header: type 3 is reserved */
	EDIT("reserved block type", f.data[6] |= 0x06);
#undef EDIT
	/* a frame of 256 bytes (2-byte content size) whose last block is empty: libzstd refuses
	 * it fed whole, streams it to its end fed byte by byte */
	free(f.data);
	f.len = 11;
	f.data = malloc(f.len);
	assert_non_null(f.data);
	memcpy(f.data, "\x28\xb5\x2f\xfd\x40\x01\x00\x00\x01\x00\x00", f.len);
	check_refused(LS_SPARK_ZSTD, &f, "content size not what the frame made");
	/* a 0-byte window (single segment, content size 0) with an empty RLE block: libzstd
	 * takes it in one pass (fed whole), refuses it streamed */
	free(f.data);
	f.len = 6 + 3 + 4;
	f.data = calloc(1, f.len);
	assert_non_null(f.data);
	memcpy(f.data, "\x28\xb5\x2f\xfd\x20\x00\x02\x00\x00\x00\x01\x00\x00", f.len);
	check_refused(LS_SPARK_ZSTD, &f, "empty RLE block in a 0-byte window");
	free(orig);
	free(f.data);
}

/* zstd's skippable frames (magic 0x184D2A5?, a length, what it skips) are passed over */
static void test_zstd_skippable(void **state)
{
	struct file f = load("pi.zstd"), g;

	g.len = 8 + 5 + f.len;
	g.data = malloc(g.len);
	assert_non_null(g.data);
	memcpy(g.data, "\x5a\x2a\x4d\x18\x05\0\0\0LZ4Bl", 13);
	memcpy(g.data + 13, f.data, f.len);
	for (enum cut cut = WHOLE; cut <= BYTES; cut++) {
		struct ls_spark_dec *d = ls_spark_dec__new(LS_SPARK_ZSTD);
		struct sink s = {0};

		assert_non_null(d);
		assert_int_equal(feed(d, g.data, g.len, cut, 0, &s), 0);
		assert_int_equal(ls_spark_dec__pending(d), 0);
		assert_int_equal(s.len, pi.len);
		assert_memory_equal(s.data, pi.data, pi.len);
		ls_spark_dec__free(d);
		free(s.data);
	}
	free(g.data);
	free(f.data);
}

/* a whole stream, then bytes that do not start another: refused once they are there */
static void test_trailing_garbage(void **state)
{
	for (size_t i = 1; i < 4; i++) {
		struct file f = load(fixtures[i].file), g;

		g.len = f.len + 16;
		g.data = malloc(g.len);
		assert_non_null(g.data);
		memcpy(g.data, f.data, f.len);
		memset(g.data + f.len, 'x', 16);
		check_refused(fixtures[i].codec, &g, "garbage after the stream");
		free(g.data);
		free(f.data);
	}
}

/* out's error stops the decoder and is what every later call returns */
static void test_out_error(void **state)
{
	for (size_t i = 0; i < 4; i++) {
		struct file f = load(fixtures[i].file);
		struct ls_spark_dec *d = ls_spark_dec__new(fixtures[i].codec);
		struct sink s = {.fail_at = 50000};

		assert_non_null(d);
		assert_int_equal(feed(d, f.data, f.len, RANDOM, 3000, &s), -EIO);
		assert_true(s.len >= 50000 && s.len < pi.len);
		assert_int_equal(ls_spark_dec__feed(d, f.data, f.len, collect, &s), -EIO);
		ls_spark_dec__free(d);
		free(s.data);
		free(f.data);
	}
}

static void test_names(void **state)
{
	static const struct {
		const char *name;
		int err;
		enum ls_spark_codec codec;
	} cases[] = {
		{"local-1596020211915", 0, LS_SPARK_PLAIN},
		{"events_1_spark-bcec39f6201b42b9925124595baad260", 0, LS_SPARK_PLAIN},
		{"app-2023.inprogress", 0, LS_SPARK_PLAIN},
		{"/var/log/spark.events/app-1", 0, LS_SPARK_PLAIN}, /* a directory's dot */
		{"app-1.", 0, LS_SPARK_PLAIN},
		{"app-1.lz4", 0, LS_SPARK_LZ4},
		{"app-1.lz4.inprogress", 0, LS_SPARK_LZ4},
		{"/tmp/x.y/events_2_app-1.snappy", 0, LS_SPARK_SNAPPY},
		{"app-1.snappy.inprogress", 0, LS_SPARK_SNAPPY},
		{"eventlog_v2_app-1/events_1_app-1.zstd", 0, LS_SPARK_ZSTD},
		{"app-1.zstd.inprogress", 0, LS_SPARK_ZSTD},
		{"app-1.ZSTD", 0, LS_SPARK_ZSTD}, /* Spark lowercases the codec name */
		{"app-1.lz4.", 0, LS_SPARK_LZ4},  /* String.split() drops the empty field */
		{"app-1.lzf", -EPROTONOSUPPORT, LS_SPARK_PLAIN},
		{"app-1.lzf.inprogress", -EPROTONOSUPPORT, LS_SPARK_PLAIN},
		{"app-1.gz", -EPROTONOSUPPORT, LS_SPARK_PLAIN},
		{"app-1.lz", -EPROTONOSUPPORT, LS_SPARK_PLAIN},
		{"app-1.lz4x", -EPROTONOSUPPORT, LS_SPARK_PLAIN},
		/* looked through once, as Spark strips it */
		{"app-1.inprogress.inprogress", -EPROTONOSUPPORT, LS_SPARK_PLAIN},
		{".inprogress", 0, LS_SPARK_PLAIN},
		{"", 0, LS_SPARK_PLAIN},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum ls_spark_codec c = (enum ls_spark_codec)99;
		int err = ls_spark_codec__of_name(cases[i].name, &c);

		if (err != cases[i].err || (!err && c != cases[i].codec))
			fail_msg("%s: %d, codec %d", cases[i].name, err, (int)c);
	}
	assert_string_equal(ls_spark_codec__name(LS_SPARK_PLAIN), "plain");
	assert_string_equal(ls_spark_codec__name(LS_SPARK_LZ4), "lz4");
	assert_string_equal(ls_spark_codec__name(LS_SPARK_SNAPPY), "snappy");
	assert_string_equal(ls_spark_codec__name(LS_SPARK_ZSTD), "zstd");
}

static int setup(void **state)
{
	pi = load("pi");
	return 0;
}

static int teardown(void **state)
{
	free(pi.data);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_byte_by_byte),
		cmocka_unit_test(test_random_chunks),
		cmocka_unit_test(test_concatenated),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_lz4_raw),
		cmocka_unit_test(test_lz4_damaged),
		cmocka_unit_test(test_snappy_damaged),
		cmocka_unit_test(test_zstd_damaged),
		cmocka_unit_test(test_zstd_skippable),
		cmocka_unit_test(test_trailing_garbage),
		cmocka_unit_test(test_out_error),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
