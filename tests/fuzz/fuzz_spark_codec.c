// SPDX-License-Identifier: MIT
/*
 * Spark event-log codecs (userspace/spark_codec.c): the first byte picks the codec (low 2 bits)
 * and how the rest is cut (the others: 0 byte by byte, k random chunks up to 2^(k % 13) bytes);
 * the rest is a log file. Cut so or fed whole, it must decode the same.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "spark_codec.h"

struct result {
	int err;
	size_t pending;
	XXH64_hash_t hash;
};

static int hash_out(void *ctx, const char *data, size_t len)
{
	XXH64_state_t *st = ctx;

	if (!len)
		abort(); /* the decoder passes bytes, never empty runs */
	XXH64_update(st, data, len);
	return 0;
}

static struct result decode(enum ls_spark_codec c, const uint8_t *in, size_t n, unsigned int cut)
{
	struct ls_spark_dec *d = ls_spark_dec__new(c);
	XXH64_state_t *st = XXH64_createState();
	struct result r = {0};
	uint64_t rnd = 0x9e3779b97f4a7c15 ^ cut;
	size_t off = 0, k, fed = 0;

	if (!d || !st)
		abort();
	XXH64_reset(st, 0);
	while (off < n && !r.err) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		k = cut == ~0u ? n - off : !cut ? 1 : 1 + rnd % (1u << (cut % 13));
		if (k > n - off)
			k = n - off;
		r.err = ls_spark_dec__feed(d, in + off, k, hash_out, st);
		off += k;
		fed += k;
		if (!r.err && ls_spark_dec__pending(d) > fed)
			abort();
		if (r.err && (r.err != -EBADMSG || !ls_spark_dec__why(d)[0]))
			abort();
	}
	/* a failed decoder stays failed */
	if (r.err && ls_spark_dec__feed(d, in, n, hash_out, st) != r.err)
		abort();
	r.pending = r.err ? 0 : ls_spark_dec__pending(d);
	r.hash = XXH64_digest(st);
	ls_spark_dec__free(d);
	XXH64_freeState(st);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum ls_spark_codec c;
	struct result whole, cut;

	if (!size)
		return 0;
	c = (enum ls_spark_codec)(data[0] & 3);
	whole = decode(c, data + 1, size - 1, ~0u);
	cut = decode(c, data + 1, size - 1, data[0] >> 2);
	if (whole.err != cut.err)
		abort();
	/*
	 * lz4 and snappy hand out whole frames only, so the bytes before an error are the same
	 * too; zstd's streaming output before one depends on its buffers
	 */
	if ((!whole.err || c != LS_SPARK_ZSTD) &&
	    (whole.hash != cut.hash || whole.pending != cut.pending))
		abort();
	return 0;
}
