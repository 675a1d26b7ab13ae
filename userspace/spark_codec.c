// SPDX-License-Identifier: MIT
/*
 * Spark event-log codecs as streams. lz4 and snappy are framed by their Java stream classes:
 * a frame is kept whole (from the input when it holds one, else gathered in buf) and decoded
 * at once; zstd streams through libzstd's own buffering.
 */
#include <errno.h>
#include <lz4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>
#include <zstd.h>
#include <zstd_errors.h>
#include "dl.h"
#include "spark_codec.h"

/* net.jpountz.lz4.LZ4BlockOutputStream (lz4-java 1.8) */
#define LZ4B_MAGIC	"LZ4Block"
#define LZ4B_MAGIC_LEN	8
#define LZ4B_HDR_LEN	21 /* magic, token, compressed, decompressed, checksum (int32 LE) */
#define LZ4B_RAW	0x10
#define LZ4B_LZ4	0x20
#define LZ4B_LEVEL_BASE 10
#define LZ4B_SEED	0x9747b28c
#define LZ4B_CHECK_MASK 0x0FFFFFFF /* StreamingXXHash32.asChecksum() keeps 28 bits */
/* org.xerial.snappy.SnappyCodec: magic, version, compatible version (int32 BE) */
#define SNAPPY_MAGIC	 "\x82SNAPPY\0"
#define SNAPPY_MAGIC_LEN 8
#define SNAPPY_HDR_LEN	 16
#define SNAPPY_LEN_LEN	 4	    /* a chunk's compressed length (int32 BE) */
#define SNAPPY_MAGIC_HD	 0x82534e41 /* the magic's first 4 bytes read as a chunk length */
/* a zstd window is what a frame costs to decode: 64 MiB, as for the other codecs */
#define ZSTD_WINDOW_LOG 26
#define ZSTD_HDR_MAX	18 /* magic, descriptor, window, dictionary id, content size */

struct ls_spark_dec {
	enum ls_spark_codec codec;
	int err;	 /* once set, every __feed() returns it */
	char why[128];	 /* what err is about */
	size_t off;	 /* input offset of the frame being decoded */
	char *buf;	 /* lz4, snappy: a frame cut by the end of an input */
	size_t len, cap; /* its bytes so far; buf's size */
	char *out;	 /* a decoded frame (lz4, snappy), libzstd's output (zstd) */
	size_t out_cap;
	bool snappy_hdr; /* snappy: the stream header is read */
	ZSTD_DStream *zs;
	size_t zpend;			   /* zstd: bytes fed since the last frame ended */
	size_t zout;			   /* zstd: bytes the frame made */
	unsigned char zhead[ZSTD_HDR_MAX]; /* zstd: the frame's header, as far as it came */
};

const char *ls_spark_codec__name(enum ls_spark_codec c)
{
	static const char *const names[] = {
		[LS_SPARK_PLAIN] = "plain",
		[LS_SPARK_LZ4] = "lz4",
		[LS_SPARK_SNAPPY] = "snappy",
		[LS_SPARK_ZSTD] = "zstd",
	};

	if ((unsigned int)c >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[c];
}

int ls_spark_codec__of_name(const char *name, enum ls_spark_codec *c)
{
	static const char inprogress[] = ".inprogress";
	static const struct {
		const char *ext;
		enum ls_spark_codec codec;
	} known[] = {
		{"lz4", LS_SPARK_LZ4},
		{"snappy", LS_SPARK_SNAPPY},
		{"zstd", LS_SPARK_ZSTD},
	};
	const char *base = strrchr(name, '/'), *dot;
	size_t len, n;

	base = base ? base + 1 : name;
	len = strlen(base);
	n = sizeof(inprogress) - 1;
	if (len >= n && !strcmp(base + len - n, inprogress))
		len -= n;
	/*
	 * Spark's EventLogFileReader.codecName(): whatever follows the last dot, trailing empty
	 * fields dropped as String.split() drops them. App ids are sanitized of dots, so any
	 * suffix names a codec (looked up lowercased), and one we do not know is not plain JSON.
	 */
	while (len && base[len - 1] == '.')
		len--;
	dot = memrchr(base, '.', len);
	if (!dot) {
		*c = LS_SPARK_PLAIN;
		return 0;
	}
	dot++;
	n = len - (dot - base);
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strlen(known[i].ext) == n && !strncasecmp(dot, known[i].ext, n)) {
			*c = known[i].codec;
			return 0;
		}
	}
	return -EPROTONOSUPPORT;
}

struct ls_spark_dec *ls_spark_dec__new(enum ls_spark_codec c)
{
	struct ls_spark_dec *d;

	if ((unsigned int)c > LS_SPARK_ZSTD)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->codec = c;
	if (c == LS_SPARK_SNAPPY && ls_snappy__open()) {
		free(d);
		return NULL;
	}
	if (c == LS_SPARK_ZSTD) {
		d->zs = ZSTD_createDStream();
		d->out_cap = ZSTD_DStreamOutSize();
		d->out = malloc(d->out_cap);
		if (!d->zs || !d->out ||
		    ZSTD_isError(
			    ZSTD_DCtx_setParameter(d->zs, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG))) {
			ls_spark_dec__free(d);
			return NULL;
		}
	}
	return d;
}

void ls_spark_dec__free(struct ls_spark_dec *d)
{
	if (!d)
		return;
	ZSTD_freeDStream(d->zs);
	free(d->buf);
	free(d->out);
	free(d);
}

size_t ls_spark_dec__pending(const struct ls_spark_dec *d)
{
	return d->codec == LS_SPARK_ZSTD ? d->zpend : d->len;
}

const char *ls_spark_dec__why(const struct ls_spark_dec *d)
{
	return d->why;
}

/* -EBADMSG, with what was wrong and where */
static int bad(struct ls_spark_dec *d, const char *what)
{
	snprintf(d->why, sizeof(d->why), "%s %s at byte %zu", ls_spark_codec__name(d->codec), what,
		 d->off);
	return -EBADMSG;
}

static uint32_t le32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return u[0] | u[1] << 8 | u[2] << 16 | (uint32_t)u[3] << 24;
}

static uint32_t be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return (uint32_t)u[0] << 24 | u[1] << 16 | u[2] << 8 | u[3];
}

/* Grows *p to hold n bytes; n is bounded by the frame checks (LS_SPARK_MAX_FRAME and a bit). */
static int reserve(char **p, size_t *cap, size_t n)
{
	char *q;

	if (n <= *cap)
		return 0;
	q = realloc(*p, n);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/*
 * Room in buf for n bytes of a frame of need: doubled as they come, so that a few bytes that
 * claim a large frame do not take its size.
 */
static int grow_buf(struct ls_spark_dec *d, size_t n, size_t need)
{
	size_t cap = d->cap * 2;

	if (n <= d->cap)
		return 0;
	if (cap < 65536)
		cap = 65536;
	if (cap < n)
		cap = n;
	if (cap > need)
		cap = need;
	return reserve(&d->buf, &d->cap, cap);
}

/*
 * The bytes the lz4 block at f needs, its header's while fewer than those are there; or
 * -EBADMSG. The checks are LZ4BlockInputStream.refill()'s, and a compressed length within
 * LZ4_compressBound() (a writer stores a block raw when it would not shrink).
 */
static long lz4_need(struct ls_spark_dec *d, const char *f, size_t n)
{
	uint32_t clen, dlen, method, level;

	if (memcmp(f, LZ4B_MAGIC, n < LZ4B_MAGIC_LEN ? n : LZ4B_MAGIC_LEN))
		return bad(d, "block magic wrong");
	if (n < LZ4B_HDR_LEN)
		return LZ4B_HDR_LEN;
	method = (unsigned char)f[8] & 0xf0;
	level = LZ4B_LEVEL_BASE + ((unsigned char)f[8] & 0x0f);
	clen = le32(f + 9);
	dlen = le32(f + 13);
	if (method != LZ4B_RAW && method != LZ4B_LZ4)
		return bad(d, "block method unknown");
	/* both lengths are Java ints: a negative one is far above the caps */
	if (dlen > (1u << level) || dlen > LS_SPARK_MAX_FRAME)
		return bad(d, "block decoded length out of range");
	if (!dlen != !clen || (method == LZ4B_RAW && clen != dlen) ||
	    (method == LZ4B_LZ4 && clen > (uint32_t)LZ4_COMPRESSBOUND(dlen)))
		return bad(d, "block compressed length out of range");
	if (!dlen && le32(f + 17))
		return bad(d, "end block checksum not 0");
	return LZ4B_HDR_LEN + clen;
}

static int lz4_decode(struct ls_spark_dec *d, const char *f, size_t n, ls_spark_out_fn out,
		      void *ctx)
{
	uint32_t clen = le32(f + 9), dlen = le32(f + 13);
	const char *data = f + LZ4B_HDR_LEN;
	int err;

	/* lengths 0: a stream's end; another stream may follow (Spark reads them as one) */
	if (!dlen)
		return 0;
	if (((unsigned char)f[8] & 0xf0) == LZ4B_LZ4) {
		err = reserve(&d->out, &d->out_cap, dlen);
		if (err)
			return err;
		/* the whole input must make exactly dlen bytes, as lz4-java requires */
		if (LZ4_decompress_safe(data, d->out, (int)clen, (int)dlen) != (int)dlen)
			return bad(d, "block corrupt");
		data = d->out;
	}
	if ((XXH32(data, dlen, LZ4B_SEED) & LZ4B_CHECK_MASK) != le32(f + 17))
		return bad(d, "block checksum mismatch");
	return out(ctx, data, dlen);
}

/*
 * The stream header (and each one of a concatenated stream, whose magic takes a chunk
 * length's place, as SnappyInputStream.hasNextChunk() reads it), or a chunk.
 */
static bool snappy_at_hdr(const struct ls_spark_dec *d, const char *f, size_t n)
{
	return !d->snappy_hdr || (n >= SNAPPY_LEN_LEN && be32(f) == SNAPPY_MAGIC_HD);
}

static long snappy_need(struct ls_spark_dec *d, const char *f, size_t n)
{
	uint32_t clen;

	if (snappy_at_hdr(d, f, n)) {
		if (memcmp(f, SNAPPY_MAGIC, n < SNAPPY_MAGIC_LEN ? n : SNAPPY_MAGIC_LEN))
			return bad(d, "stream magic wrong");
		if (n < SNAPPY_HDR_LEN)
			return SNAPPY_HDR_LEN;
		/* SnappyCodec.MINIMUM_COMPATIBLE_VERSION; nothing newer exists to refuse */
		if (be32(f + 8) < 1)
			return bad(d, "stream version 0");
		return SNAPPY_HDR_LEN;
	}
	if (n < SNAPPY_LEN_LEN)
		return SNAPPY_LEN_LEN;
	clen = be32(f);
	if (!clen || clen > ls_snappy.max_compressed_length(LS_SPARK_MAX_FRAME))
		return bad(d, "chunk length out of range");
	return SNAPPY_LEN_LEN + clen;
}

static int snappy_decode(struct ls_spark_dec *d, const char *f, size_t n, ls_spark_out_fn out,
			 void *ctx)
{
	size_t dlen, got;
	int err;

	if (snappy_at_hdr(d, f, n)) {
		d->snappy_hdr = true;
		return 0;
	}
	f += SNAPPY_LEN_LEN;
	n -= SNAPPY_LEN_LEN;
	/* no element makes more than 22 times its bytes (a 64-byte copy takes 3) */
	if (ls_snappy.uncompressed_length(f, n, &dlen) != SNAPPY_OK || dlen > LS_SPARK_MAX_FRAME ||
	    dlen / 22 > n)
		return bad(d, "chunk decoded length out of range");
	if (!dlen) {
		if (ls_snappy.validate_compressed_buffer(f, n) != SNAPPY_OK)
			return bad(d, "chunk corrupt");
		return 0;
	}
	err = reserve(&d->out, &d->out_cap, dlen);
	if (err)
		return err;
	got = dlen;
	if (ls_snappy.uncompress(f, n, d->out, &got) != SNAPPY_OK || got != dlen)
		return bad(d, "chunk corrupt");
	return out(ctx, d->out, dlen);
}

static long frame_need(struct ls_spark_dec *d, const char *f, size_t n)
{
	return d->codec == LS_SPARK_LZ4 ? lz4_need(d, f, n) : snappy_need(d, f, n);
}

static int frame_decode(struct ls_spark_dec *d, const char *f, size_t n, ls_spark_out_fn out,
			void *ctx)
{
	int err = d->codec == LS_SPARK_LZ4 ? lz4_decode(d, f, n, out, ctx)
					   : snappy_decode(d, f, n, out, ctx);

	d->off += n;
	return err;
}

/*
 * Frames whole in the input are decoded from it; one cut by the input's end is gathered in buf,
 * first up to its header, then up to the length that header gives.
 */
static int feed_framed(struct ls_spark_dec *d, const char *p, size_t n, ls_spark_out_fn out,
		       void *ctx)
{
	for (;;) {
		const char *f = d->len ? d->buf : p;
		size_t avail = d->len ? d->len : n, take;
		long need;
		int err;

		if (!avail)
			return 0;
		need = frame_need(d, f, avail);
		if (need < 0)
			return need;
		if ((size_t)need <= avail) {
			err = frame_decode(d, f, need, out, ctx);
			if (err)
				return err;
			if (d->len) {
				d->len = 0;
			} else {
				p += need;
				n -= need;
			}
			continue;
		}
		if (!n)
			return 0;
		take = (size_t)need - d->len < n ? (size_t)need - d->len : n;
		err = grow_buf(d, d->len + take, need);
		if (err)
			return err;
		memcpy(d->buf + d->len, p, take);
		d->len += take;
		p += take;
		n -= take;
	}
}

/*
 * A zstd frame's magic, or a skippable frame's: what zstd-jni writes. libzstd would also take
 * the legacy formats' (v0.5-v0.7), and refuses their prefixes early only when it cannot see
 * 4 bytes; a frame decodes the same however it is cut only without them, and their decoders
 * are old code we need not expose to any file we are given.
 */
static bool zstd_magic_ok(const unsigned char *h, size_t n)
{
	static const unsigned char zstd[4] = {0x28, 0xb5, 0x2f, 0xfd},
				   skip[4] = {0x50, 0x2a, 0x4d, 0x18};

	return !memcmp(h, zstd, n) || ((h[0] & 0xf0) == skip[0] && !memcmp(h + 1, skip + 1, n - 1));
}

/* A zstd frame's header length from its descriptor (byte 4), or 0 for a skippable frame. */
static size_t zstd_hdr_len(const unsigned char *h)
{
	static const unsigned char did[4] = {0, 1, 2, 4}, fcs[4] = {0, 2, 4, 8};
	bool single = h[4] & 0x20;

	if (h[0] != 0x28)
		return 0;
	return 4 + 1 + !single + did[h[4] & 3] + (h[4] >> 6 ? fcs[h[4] >> 6] : single);
}

/*
 * A frame's content size, when its header gives one, must be what it made. libzstd checks it
 * when it decodes a frame in one pass (the whole frame fed, room for all of it) but not when
 * it streams one that ends in an empty block: without this, how the input is cut would decide.
 */
static int zstd_frame_end(struct ls_spark_dec *d)
{
	unsigned long long size = ZSTD_getFrameContentSize(
		d->zhead, d->zpend < ZSTD_HDR_MAX ? d->zpend : ZSTD_HDR_MAX);

	if (size == ZSTD_CONTENTSIZE_ERROR || (size != ZSTD_CONTENTSIZE_UNKNOWN && size != d->zout))
		return bad(d, "frame content size wrong");
	d->off += d->zpend;
	d->zpend = 0;
	d->zout = 0;
	return 0;
}

static int feed_zstd(struct ls_spark_dec *d, const char *p, size_t n, ls_spark_out_fn out,
		     void *ctx)
{
	ZSTD_inBuffer in = {p, n, 0};

	/* until the input is taken and the output no longer fills up (more may be flushed) */
	for (;;) {
		ZSTD_outBuffer ob = {d->out, d->out_cap, 0};
		size_t pos = in.pos, r, k = 0, hl;
		int err;

		/* (bytes past a short frame's end may land here: only its own are read) */
		if (d->zpend < ZSTD_HDR_MAX && pos < n) {
			k = ZSTD_HDR_MAX - d->zpend;
			k = k < n - pos ? k : n - pos;
			memcpy(d->zhead + d->zpend, p + pos, k);
			if (d->zpend < 4 &&
			    !zstd_magic_ok(d->zhead, d->zpend + k < 4 ? d->zpend + k : 4))
				return bad(d, "frame magic wrong");
		}
		/*
		 * A frame's header goes in a call of its own: given the whole frame with it,
		 * libzstd decodes the frame in one pass, whose checks differ from its streaming
		 * ones on degenerate frames (an empty RLE block in a 0-byte window), and how the
		 * input was cut would decide whether the frame is refused
		 */
		if (d->zpend + k > 4) {
			hl = zstd_hdr_len(d->zhead);
			if (d->zpend < hl && hl - d->zpend < n - pos)
				in.size = pos + hl - d->zpend;
		}
		r = ZSTD_decompressStream(d->zs, &ob, &in);
		in.size = n;
		if (ZSTD_isError(r) && ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
			return -ENOMEM;
		if (ZSTD_isError(r)) {
			snprintf(d->why, sizeof(d->why), "zstd %s in the frame at byte %zu",
				 ZSTD_getErrorName(r), d->off);
			return -EBADMSG;
		}
		/* 0: a frame ended (the call stops there) and is flushed */
		d->zpend += in.pos - pos;
		d->zout += ob.pos;
		if (!r) {
			err = zstd_frame_end(d);
			if (err)
				return err;
		}
		if (ob.pos) {
			err = out(ctx, d->out, ob.pos);
			if (err)
				return err;
		}
		if (in.pos == n && ob.pos < ob.size)
			return 0;
	}
}

int ls_spark_dec__feed(struct ls_spark_dec *d, const void *in, size_t n, ls_spark_out_fn out,
		       void *ctx)
{
	int err = 0;

	if (d->err)
		return d->err;
	if (!n)
		return 0;
	switch (d->codec) {
	case LS_SPARK_PLAIN:
		err = out(ctx, in, n);
		break;
	case LS_SPARK_LZ4:
	case LS_SPARK_SNAPPY:
		err = feed_framed(d, in, n, out, ctx);
		break;
	case LS_SPARK_ZSTD:
		err = feed_zstd(d, in, n, out, ctx);
		break;
	}
	if (err && !d->why[0])
		snprintf(d->why, sizeof(d->why), "%s",
			 err == -ENOMEM ? "out of memory" : "stopped by the reader");
	/* part of the input may be taken: nothing after it could be decoded in order */
	d->err = err;
	return err;
}
