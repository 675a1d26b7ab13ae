/* SPDX-License-Identifier: MIT */
/* libcurl, opened at its first use rather than linked (curl_dl.c). */
#ifndef LS_CURL_DL_H
#define LS_CURL_DL_H

#include <curl/curl.h>

/* The libcurl functions the tool calls, each named as in libcurl without its curl_ prefix. */
struct ls_curl {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	char *(*easy_escape)(CURL *c, const char *s, int len);
	void (*free)(void *p);
	curl_mime *(*mime_init)(CURL *c);
	curl_mimepart *(*mime_addpart)(curl_mime *mime);
	void (*mime_free)(curl_mime *mime);
	CURLcode (*mime_name)(curl_mimepart *part, const char *name);
	CURLcode (*mime_filename)(curl_mimepart *part, const char *name);
	CURLcode (*mime_type)(curl_mimepart *part, const char *type);
	CURLcode (*mime_data)(curl_mimepart *part, const char *data, size_t len);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *c);
	const char *(*easy_strerror)(CURLcode rc);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
};

extern struct ls_curl ls_curl;

/* Fills ls_curl once (later calls return the first one's result): 0, or -ENOENT (logged). */
int ls_curl__open(void);

#endif
