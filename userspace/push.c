// SPDX-License-Identifier: MIT
/*
 * Pushing a profile to a Pyroscope-compatible server: the pprof export of the stored profile,
 * POSTed once sampling is over (so a slow or absent server never delays a sample), with up to
 * five tries 0.5, 1, 2 and 4 s apart when the server cannot be reached or answers 429 or 5xx.
 * Label values come from the profile (host names, the job's rank) and are reduced to
 * [A-Za-z0-9._-] so that they cannot add labels of their own.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include "curl_dl.h"
#include "export.h"
#include "log.h"
#include "model.h"
#include "push.h"
#include "store.h"

#define PUSH_TRIES	    5
#define PUSH_FIRST_DELAY_MS 500
#define PUSH_TENANT_MAX	    150 /* the longest tenant id Pyroscope takes */

int ls_push__check_url(const char *url)
{
	const char *host = !strncmp(url, "http://", 7)	  ? url + 7
			   : !strncmp(url, "https://", 8) ? url + 8
							  : NULL;

	if (!host || !*host || *host == '/' || strpbrk(url, " \t\r\n"))
		return -EINVAL;
	return 0;
}

/* The tenant id rules of Pyroscope (as Cortex and Mimir): it also keeps the header one line */
int ls_push__check_tenant(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > PUSH_TENANT_MAX || !strcmp(id, ".") || !strcmp(id, ".."))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)id[i]) && !strchr("!-_.*'()", id[i]))
			return -EINVAL;
	return 0;
}

/* v with every byte outside [A-Za-z0-9._-] made '_', into buf */
static void label_value(const char *v, char *buf, size_t n)
{
	size_t i = 0;

	for (; v && v[i] && i + 1 < n; i++)
		buf[i] = isalnum((unsigned char)v[i]) || strchr("._-", v[i]) ? v[i] : '_';
	buf[i] = 0;
	if (!i)
		snprintf(buf, n, "unknown");
}

/* The rank every ranked process of the profile shares, or -1 (none, or several). */
static int one_rank(const struct ls_model *m)
{
	int rank = -1;

	for (size_t i = 0; i < m->nprocs; i++) {
		if (m->procs[i].rank < 0)
			continue;
		if (rank >= 0 && rank != m->procs[i].rank)
			return -1;
		rank = m->procs[i].rank;
	}
	return rank;
}

static int64_t meta_num(const struct ls_model *m, const char *key, int64_t dflt, int64_t max)
{
	return ls_profile__meta_num(ls_model__meta(m, key), dflt, max);
}

/* The ingest URL with its query: name APP{host=...[,rank=N]}, from, until, format, rate. */
static char *ingest_url(CURL *c, const char *url, const char *app, const struct ls_model *m)
{
	char host[128], name[384], appv[128], *esc, *out = NULL;
	int64_t wall = meta_num(m, "wall_start_ns", -1, LS_META_WALL_MAX),
		elapsed = meta_num(m, "elapsed_ns", 0, LS_META_SPAN_MAX);
	long long from, until;
	size_t ul = strlen(url);
	int rank = one_rank(m), n;

	if (wall < 0) /* a profile older than wall_start_ns: started_at is not worth parsing */
		wall = (int64_t)time(NULL) * 1000000000LL - elapsed;
	else /* --rotate: the interval's start, after the run's */
		wall += meta_num(m, "interval_start_ns", 0, LS_META_SPAN_MAX);
	from = wall / 1000000000LL;
	until = (wall + elapsed + 999999999LL) / 1000000000LL;
	if (until <= from)
		until = from + 1;
	label_value(ls_model__meta(m, "host"), host, sizeof(host));
	label_value(app ? app : "linescope", appv, sizeof(appv));
	n = snprintf(name, sizeof(name), "%s{host=%s", appv, host);
	if (rank >= 0)
		n += snprintf(name + n, sizeof(name) - n, ",rank=%d", rank);
	snprintf(name + n, sizeof(name) - n, "}");
	esc = ls_curl.easy_escape(c, name, 0);
	if (!esc)
		return NULL;
	while (ul && url[ul - 1] == '/')
		ul--;
	n = ul >= 7 && !strncmp(url + ul - 7, "/ingest", 7);
	if (asprintf(&out,
		     "%.*s%s?name=%s&from=%lld&until=%lld&format=pprof&sampleRate=%lld"
		     "&spyName=linescope-bpf",
		     (int)ul, url, n ? "" : "/ingest", esc, from, until,
		     (long long)meta_num(m, "frequency_hz", 999, 1000000)) < 0)
		out = NULL;
	ls_curl.free(esc);
	return out;
}

struct reply {
	char text[160]; /* the start of the server's answer, for the message */
	size_t len;
};

static size_t keep_reply(char *data, size_t size, size_t n, void *ctx)
{
	struct reply *r = ctx;
	size_t take = size * n;

	if (take > sizeof(r->text) - 1 - r->len)
		take = sizeof(r->text) - 1 - r->len;
	memcpy(r->text + r->len, data, take);
	r->len += take;
	r->text[r->len] = 0;
	return size * n;
}

/* One POST: 0 accepted, 1 worth another try, -EIO not (why in msg). */
static int post(CURL *c, const char *url, const char *body, size_t len, char *msg, size_t n)
{
	curl_mime *mime = ls_curl.mime_init(c);
	curl_mimepart *part = mime ? ls_curl.mime_addpart(mime) : NULL;
	struct reply r = {.len = 0};
	long status = 0;
	CURLcode rc;

	if (!part) {
		ls_curl.mime_free(mime);
		snprintf(msg, n, "out of memory");
		return -EIO;
	}
	ls_curl.mime_name(part, "profile");
	ls_curl.mime_filename(part, "profile.pprof");
	ls_curl.mime_type(part, "application/octet-stream");
	ls_curl.mime_data(part, body, len);
	ls_curl.easy_setopt(c, CURLOPT_URL, url);
	ls_curl.easy_setopt(c, CURLOPT_MIMEPOST, mime);
	ls_curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_reply);
	ls_curl.easy_setopt(c, CURLOPT_WRITEDATA, &r);
	rc = ls_curl.easy_perform(c);
	ls_curl.easy_setopt(c, CURLOPT_MIMEPOST, NULL);
	ls_curl.mime_free(mime);
	if (rc != CURLE_OK) {
		snprintf(msg, n, "%s", ls_curl.easy_strerror(rc));
		return 1;
	}
	ls_curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return 0;
	for (size_t i = 0; i < r.len; i++) /* one line, plain text */
		if (!isprint((unsigned char)r.text[i]))
			r.text[i] = ' ';
	snprintf(msg, n, "HTTP %ld%s%.120s", status, r.len ? ": " : "", r.text);
	return status == 429 || status >= 500 ? 1 : -EIO;
}

/* The profile's pprof export, in memory: 0 or -errno (logged). */
static int pprof_of(const char *profile, char **buf, size_t *len, struct ls_model **m)
{
	FILE *f;
	int err = ls_model__load_flags(profile, LS_MODEL_STACKS, m);

	if (err)
		return err;
	f = open_memstream(buf, len);
	if (!f)
		return ls_err(-errno, "push: %s", strerror(errno));
	err = ls_export__pprof(f, *m);
	if (fclose(f) && !err)
		err = -EIO;
	return err ? ls_err(err, "push: cannot export %s as pprof", profile) : 0;
}

int ls_push__run(const char *profile, const char *url, const char *app, const char *tenant)
{
	char msg[256] = "", *body = NULL, *target = NULL, org[PUSH_TENANT_MAX + 32];
	struct curl_slist *headers = NULL;
	struct ls_model *m = NULL;
	size_t len = 0;
	CURL *c = NULL;
	int err, tries = 0;

	err = ls_curl__open();
	if (!err)
		err = pprof_of(profile, &body, &len, &m);
	if (!err && !(c = ls_curl.easy_init()))
		err = ls_err(-ENOMEM, "push: cannot start libcurl");
	if (!err && !(target = ingest_url(c, url, app, m)))
		err = -ENOMEM;
	if (!err && tenant) {
		snprintf(org, sizeof(org), "X-Scope-OrgID: %s", tenant);
		headers = ls_curl.slist_append(NULL, org);
		if (!headers)
			err = ls_err(-ENOMEM, "push: out of memory");
	}
	if (!err) {
		ls_curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		ls_curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
		ls_curl.easy_setopt(c, CURLOPT_TIMEOUT, 60L);
		ls_curl.easy_setopt(c, CURLOPT_USERAGENT, "linescope-bpf/" LS_VERSION);
		ls_curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		ls_curl.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
		for (long delay = PUSH_FIRST_DELAY_MS; tries < PUSH_TRIES; delay *= 2) {
			int r = post(c, target, body, len, msg, sizeof(msg));

			tries++;
			if (r <= 0) {
				err = r;
				break;
			}
			err = -EAGAIN;
			if (tries < PUSH_TRIES) {
				struct timespec ts = {delay / 1000, (delay % 1000) * 1000000};

				nanosleep(&ts, NULL);
			}
		}
		if (err)
			err = ls_err(-ECOMM, "push to %s failed after %d tr%s: %s", url, tries,
				     tries == 1 ? "y" : "ies", msg);
		else if (ls_log_level() >= LS_LOG_WARN)
			fprintf(stderr,
				"linescope-bpf: pushed %s (%zu bytes of pprof) to %s after %d tr%s\n",
				profile, len, url, tries, tries == 1 ? "y" : "ies");
	}
	free(target);
	if (c)
		ls_curl.easy_cleanup(c);
	ls_curl.slist_free_all(headers);
	free(body);
	ls_model__free(m);
	return err;
}
