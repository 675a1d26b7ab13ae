// SPDX-License-Identifier: MIT
/*
 * Libraries opened at their first use rather than linked: snappy (Spark's snappy event logs)
 * brings the C++ runtime, and libcrypto (one SHA-1 per IPython cell) has 21,000 relocations; the
 * two and their pages were 5 ms of every start of the tool on a 2-vCPU VM, used or not.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include "dl.h"
#include "log.h"

struct ls_snappy ls_snappy;
struct ls_crypto ls_crypto;

int ls_dl__open(const char *soname, const char *const *names, size_t n, void **slot)
{
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL); /* kept open */

	if (!lib)
		return ls_err(-ENOENT, "cannot load %s: %s", soname, dlerror());
	for (size_t i = 0; i < n; i++) {
		slot[i] = dlsym(lib, names[i]);
		if (!slot[i])
			return ls_err(-ENOENT, "%s has no %s", soname, names[i]);
	}
	return 0;
}

static const char *const snappy_names[] = {
	"snappy_max_compressed_length",
	"snappy_uncompressed_length",
	"snappy_validate_compressed_buffer",
	"snappy_uncompress",
};
_Static_assert(sizeof(struct ls_snappy) == sizeof(snappy_names), "one name per snappy function");

static const char *const crypto_names[] = {"EVP_Digest", "EVP_sha1"};
_Static_assert(sizeof(struct ls_crypto) == sizeof(crypto_names), "one name per EVP function");

static pthread_once_t snappy_once = PTHREAD_ONCE_INIT, crypto_once = PTHREAD_ONCE_INIT;
static int snappy_err, crypto_err;

static void open_snappy(void)
{
	snappy_err =
		ls_dl__open("libsnappy.so.1", snappy_names,
			    sizeof(snappy_names) / sizeof(snappy_names[0]), (void **)&ls_snappy);
}

static void open_crypto(void)
{
	crypto_err =
		ls_dl__open("libcrypto.so.3", crypto_names,
			    sizeof(crypto_names) / sizeof(crypto_names[0]), (void **)&ls_crypto);
}

int ls_snappy__open(void)
{
	pthread_once(&snappy_once, open_snappy);
	return snappy_err;
}

int ls_crypto__open(void)
{
	pthread_once(&crypto_once, open_crypto);
	return crypto_err;
}
