/* SPDX-License-Identifier: MIT */
/*
 * Spark event-log codecs, decoded as a stream (a log that is still being written is read as it
 * grows): plain; lz4 as lz4-java's LZ4BlockOutputStream frames it; snappy in snappy-java's
 * stream format (SnappyOutputStream); zstd frames (zstd-jni's ZstdOutputStream). The codec is
 * the log's file name suffix (`.lz4`, `.snappy`, `.zstd`, none: plain), as Spark names them.
 */
#ifndef LS_SPARK_CODEC_H
#define LS_SPARK_CODEC_H

#include <stdbool.h>
#include <stddef.h>

/* The most a frame may decode to (an lz4 block, a snappy chunk) or a zstd frame's window. */
#define LS_SPARK_MAX_FRAME (64u << 20)

enum ls_spark_codec {
	LS_SPARK_PLAIN,
	LS_SPARK_LZ4,
	LS_SPARK_SNAPPY,
	LS_SPARK_ZSTD,
};

/* "plain", "lz4", "snappy", "zstd". */
const char *ls_spark_codec__name(enum ls_spark_codec c);

/*
 * The codec of a log file from its name (an `.inprogress` suffix is looked through; a path's
 * directories are not looked at). 0, or -EPROTONOSUPPORT for `.lzf` or any other suffix: Spark
 * takes whatever follows the last dot for a codec name, app ids having none. The caller reports
 * it ("codec lzf is not supported").
 */
int ls_spark_codec__of_name(const char *name, enum ls_spark_codec *c);

struct ls_spark_dec;

/* Decoded bytes, in order; a non-zero return stops the decoder and is returned by __feed(). */
typedef int (*ls_spark_out_fn)(void *ctx, const char *data, size_t len);

/* A decoder for c, or NULL (-ENOMEM). Not thread-safe: one stream, one reader. */
struct ls_spark_dec *ls_spark_dec__new(enum ls_spark_codec c);
void ls_spark_dec__free(struct ls_spark_dec *d);

/*
 * Feeds the next n bytes of the file; every byte that can be decoded is passed to out. A frame
 * cut by the end of the input is kept until the next call, so the input may be cut anywhere.
 * Concatenated streams (lz4, snappy) and frames (zstd) decode as one. -EBADMSG on damaged input
 * (bad magic, checksum, a length out of range: a frame's decoded size is capped at
 * LS_SPARK_MAX_FRAME), -ENOMEM, or out's non-zero return; after any of them the decoder refuses
 * everything, each later call returning the same error.
 */
int ls_spark_dec__feed(struct ls_spark_dec *d, const void *in, size_t n, ls_spark_out_fn out,
		       void *ctx);

/*
 * Bytes fed of a frame not complete yet: a finished log should have none. A zstd frame streams,
 * so its bytes count until it ends although most are decoded already (zstd-jni writes a log as
 * one frame: an `.inprogress` one's are all pending).
 */
size_t ls_spark_dec__pending(const struct ls_spark_dec *d);

/*
 * Why the decoder failed, e.g. "lz4 block checksum mismatch at byte 42013" (the input offset of
 * the frame), or "" while it has not; valid until the next __feed() or __free().
 */
const char *ls_spark_dec__why(const struct ls_spark_dec *d);

#endif
