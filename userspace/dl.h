/* SPDX-License-Identifier: MIT */
/*
 * Libraries opened at their first use rather than linked (dl.c, curl_dl.c): linked, each is
 * mapped and relocated at every start of the tool, used or not.
 */
#ifndef LS_DL_H
#define LS_DL_H

#include <stddef.h>
#include <openssl/evp.h>
#include <snappy-c.h>

/* Opens soname (kept open) and sets slot[i] to its names[i]: 0, or -ENOENT (logged). */
int ls_dl__open(const char *soname, const char *const *names, size_t n, void **slot);

/* snappy's C API, for Spark's snappy event logs, each named without its snappy_ prefix */
struct ls_snappy {
	size_t (*max_compressed_length)(size_t source_length);
	snappy_status (*uncompressed_length)(const char *compressed, size_t compressed_length,
					     size_t *result);
	snappy_status (*validate_compressed_buffer)(const char *compressed,
						    size_t compressed_length);
	snappy_status (*uncompress)(const char *compressed, size_t compressed_length,
				    char *uncompressed, size_t *uncompressed_length);
};

/* libcrypto's digests, for the SHA-1 that names an IPython cell, each named without EVP_ */
struct ls_crypto {
	int (*Digest)(const void *data, size_t count, unsigned char *md, unsigned int *size,
		      const EVP_MD *type, ENGINE *impl);
	const EVP_MD *(*sha1)(void);
};

extern struct ls_snappy ls_snappy;
extern struct ls_crypto ls_crypto;

/* Each fills its table once (later calls return the first one's result): 0, or -ENOENT. */
int ls_snappy__open(void);
int ls_crypto__open(void);

#endif
