// SPDX-License-Identifier: MIT
/*
 * libcurl opened where it is used (a push, a Jupyter server's sessions), not linked: it and the
 * twenty libraries it needs cost every start of the tool 15 ms on a 2-vCPU VM (their pages faulted
 * in, their relocations), whether or not it is used.
 */
#include <errno.h>
#include <pthread.h>
#include "curl_dl.h"
#include "dl.h"
#include "log.h"

struct ls_curl ls_curl;

static const char *const names[] = {
	"curl_global_init",   "curl_easy_init",	     "curl_easy_escape",  "curl_free",
	"curl_mime_init",     "curl_mime_addpart",   "curl_mime_free",	  "curl_mime_name",
	"curl_mime_filename", "curl_mime_type",	     "curl_mime_data",	  "curl_easy_setopt",
	"curl_easy_perform",  "curl_easy_strerror",  "curl_easy_getinfo", "curl_easy_cleanup",
	"curl_slist_append",  "curl_slist_free_all",
};
_Static_assert(sizeof(struct ls_curl) == sizeof(names) / sizeof(names[0]) * sizeof(void *),
	       "one name per libcurl function");

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int open_err;

static void open_once(void)
{
	open_err = ls_dl__open("libcurl.so.4", names, sizeof(names) / sizeof(names[0]),
			       (void **)&ls_curl);
	/* once, before any thread uses it (libcurl's own rule) */
	if (!open_err && ls_curl.global_init(CURL_GLOBAL_DEFAULT))
		open_err = ls_err(-ENOMEM, "cannot start libcurl");
}

int ls_curl__open(void)
{
	pthread_once(&once, open_once);
	return open_err;
}
