// SPDX-License-Identifier: MIT
/*
 * Jupyter server lookup: runtime files (jansson) and the sessions API (libcurl: loopback HTTP or
 * HTTPS against the server's own certificate, or its UNIX socket, connected with its rights).
 */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "asuser.h"
#include "curl_dl.h"
#include "jpserver.h"
#include "procfs.h"

#define ARGV_MAX	65536
#define SERVER_DEPTH	4 /* the server, or a shell or nohup between it and the kernel */
#define MAX_SERVER_FILE (1 << 20)
#define MAX_FIELD	512

#define MAX_CERT (64 << 10)

struct server {
	int port;  /* 0 with sock */
	pid_t pid; /* the server process */
	bool tls;
	char *cert; /* with tls: its certificate (PEM), the one trusted */
	size_t cert_len;
	char token[MAX_FIELD], base_url[MAX_FIELD], root[PATH_MAX], sock[PATH_MAX];
};

/* Only characters that need no quoting in a URL path or an HTTP header */
static bool plain(const char *s, const char *extra)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr(extra, *s)))
			return false;
	return true;
}

/*
 * The value the last of the options opts was given on a command line of n bytes (NUL-separated
 * arguments), as "OPT VALUE" or "OPT=VALUE"; NULL when none.
 */
static const char *option_value(const char *argv, int n, const char *const *opts, size_t nopts)
{
	const char *val = NULL;

	for (const char *p = argv, *prev = ""; n > 0 && p < argv + n; prev = p, p += strlen(p) + 1)
		for (size_t k = 0; k < nopts; k++) {
			size_t l = strlen(opts[k]);

			if (!strcmp(prev, opts[k]))
				val = p;
			else if (!strncmp(p, opts[k], l) && p[l] == '=')
				val = p + l + 1;
		}
	return val;
}

/* The kernel's id and its runtime directory, from -f RUNTIME/kernel-ID.json */
static int connection_file(pid_t pid, char *id, size_t idlen, char *dir, size_t dirlen)
{
	static const char *const opts[] = {"-f", "--f"};
	char argv[ARGV_MAX];
	const char *file, *base;
	int n = ls_procfs__argv(pid, argv, sizeof(argv));
	size_t len;

	file = option_value(argv, n, opts, sizeof(opts) / sizeof(opts[0]));
	if (!file || file[0] != '/')
		return -ENOENT;
	base = strrchr(file, '/') + 1;
	len = strlen(base);
	if (strncmp(base, "kernel-", 7) || len < 13 || strcmp(base + len - 5, ".json") ||
	    len - 12 >= idlen || (size_t)(base - file) >= dirlen)
		return -ENOENT;
	snprintf(id, idlen, "%.*s", (int)(len - 12), base + 7);
	if (!plain(id, "-"))
		return -ENOENT;
	snprintf(dir, dirlen, "%.*s", (int)(base - file - 1), file);
	return 0;
}

static int server_fields(const char *text, size_t len, struct server *s, char *why, size_t whylen)
{
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	const char *token, *base, *root, *sock;
	json_int_t port;
	int err = -EINVAL;

	if (!json_is_object(o)) {
		snprintf(why, whylen, "the Jupyter server's runtime file is not JSON");
		goto out;
	}
	port = json_integer_value(json_object_get(o, "port"));
	token = json_string_value(json_object_get(o, "token"));
	base = json_string_value(json_object_get(o, "base_url"));
	root = json_string_value(json_object_get(o, "root_dir"));
	if (!root)
		root = json_string_value(json_object_get(o, "notebook_dir"));
	sock = json_string_value(json_object_get(o, "sock"));
	if (sock && sock[0]) {
		if (sock[0] != '/' || strlen(sock) >= sizeof(s->sock)) {
			snprintf(why, whylen,
				 "the Jupyter server's UNIX socket is not an absolute path");
			goto out;
		}
		snprintf(s->sock, sizeof(s->sock), "%s", sock);
		port = 0;
	}
	s->tls = json_is_true(json_object_get(o, "secure"));
	if ((!s->sock[0] && (port < 1 || port > 65535)) || !token || strlen(token) >= MAX_FIELD ||
	    !plain(token, "-_.") || !base || base[0] != '/' || strlen(base) >= MAX_FIELD ||
	    !plain(base, "/-_.~") || !root || root[0] != '/' || strlen(root) >= PATH_MAX) {
		snprintf(why, whylen,
			 "the Jupyter server's runtime file has no usable port, token, "
			 "base_url and root directory");
		goto out;
	}
	s->port = (int)(s->sock[0] ? 0 : port);
	snprintf(s->token, sizeof(s->token), "%s", token);
	snprintf(s->base_url, sizeof(s->base_url), "%s%s", base,
		 base[strlen(base) - 1] == '/' ? "" : "/");
	snprintf(s->root, sizeof(s->root), "%s", root);
	err = 0;
out:
	json_decref(o);
	return err;
}

/*
 * A TLS server's certificate, from --certfile on its command line (--NotebookApp.certfile,
 * --ServerApp.certfile), read with its rights: the one certificate the connection accepts.
 */
static int server_cert(struct server *s, char *why, size_t whylen)
{
	static const char *const opts[] = {"--certfile", "--NotebookApp.certfile",
					   "--ServerApp.certfile"};
	char argv[ARGV_MAX];
	const char *file;
	int n = ls_procfs__argv(s->pid, argv, sizeof(argv)), err;

	file = option_value(argv, n, opts, sizeof(opts) / sizeof(opts[0]));
	if (!file || file[0] != '/') {
		snprintf(why, whylen,
			 "the Jupyter server uses TLS with a certificate its command line does not "
			 "name (--certfile=/absolute/path): its sessions are not queried");
		return -ENOENT;
	}
	err = ls_procfs__read_file(s->pid, file, LS_READ_NOFOLLOW, MAX_CERT, &s->cert,
				   &s->cert_len);
	if (err) {
		s->cert = NULL;
		snprintf(why, whylen, "the Jupyter server's certificate %s: %s", file,
			 strerror(-err));
	}
	return err;
}

/* The server above kernel that left a runtime file in dir, read with the kernel's rights */
static int find_server(pid_t kernel, const char *dir, struct server *s, pid_t *server, char *why,
		       size_t whylen)
{
	pid_t pid = kernel;
	static const char *const kinds[] = {"jpserver", "nbserver"};
	char path[PATH_MAX + 64], *text;
	struct ls_procstat st;
	size_t len;
	int err;

	for (int depth = 0; depth < SERVER_DEPTH; depth++) {
		if (ls_procfs__stat(pid, &st) || st.ppid <= 1)
			break;
		pid = st.ppid;
		for (size_t k = 0; k < 2; k++) {
			snprintf(path, sizeof(path), "%s/%s-%d.json", dir, kinds[k], pid);
			err = ls_procfs__read_file(pid, path, LS_READ_NOFOLLOW, MAX_SERVER_FILE,
						   &text, &len);
			if (err == -ENOENT)
				continue;
			if (err) {
				snprintf(why, whylen, "the Jupyter server's %s: %s", path,
					 strerror(-err));
				return err;
			}
			err = server_fields(text, len, s, why, whylen);
			free(text);
			*server = s->pid = pid;
			if (!err && s->tls)
				err = server_cert(s, why, whylen);
			return err;
		}
	}
	return -ENOENT;
}

struct reply {
	char *buf;
	size_t len;
	bool too_long;
};

static size_t on_data(char *data, size_t size, size_t n, void *ctx)
{
	struct reply *r = ctx;
	size_t add = size * n;
	char *v;

	if (r->len + add > LS_JPSERVER_MAX_REPLY) {
		r->too_long = true;
		return 0; /* aborts the transfer */
	}
	v = realloc(r->buf, r->len + add + 1);
	if (!v)
		return 0;
	memcpy(v + r->len, data, add);
	r->buf = v;
	r->len += add;
	r->buf[r->len] = 0;
	return add;
}

/* GET /api/sessions of the server on 127.0.0.1, or on its UNIX socket */
static int get_sessions(const struct server *s, struct reply *r, char *why, size_t whylen)
{
	char url[MAX_FIELD + 64], auth[MAX_FIELD + 32], where[PATH_MAX + 32], via[64];
	struct curl_blob ca = {.data = s->cert, .len = s->cert_len, .flags = CURL_BLOB_COPY};
	struct curl_slist *hdr;
	struct ls_creds cr;
	long status = 0;
	int ufd = -1;
	CURLcode rc;
	CURL *c;

	if (ls_curl__open()) {
		snprintf(why, whylen, "libcurl cannot be loaded");
		return -EIO;
	}
	if (s->sock[0]) {
		/* the socket the server's user may connect to: root must not reach another */
		ufd = ls_creds__of_pid(s->pid, &cr) ? -ESRCH : ls_asuser__unix_socket(&cr, s->sock);
		if (ufd < 0) {
			snprintf(why, whylen, "the Jupyter server's socket %s: %s", s->sock,
				 strerror(-ufd));
			return -EIO;
		}
		snprintf(url, sizeof(url), "%s://localhost%sapi/sessions",
			 s->tls ? "https" : "http", s->base_url);
		snprintf(where, sizeof(where), "on %s", s->sock);
		snprintf(via, sizeof(via), "/proc/self/fd/%d", ufd);
	} else {
		snprintf(url, sizeof(url), "%s://127.0.0.1:%d%sapi/sessions",
			 s->tls ? "https" : "http", s->port, s->base_url);
		snprintf(where, sizeof(where), "on port %d", s->port);
	}
	snprintf(auth, sizeof(auth), "Authorization: token %s", s->token);
	c = ls_curl.easy_init();
	hdr = ls_curl.slist_append(NULL, auth);
	if (!c || !hdr) {
		ls_curl.easy_cleanup(c);
		ls_curl.slist_free_all(hdr);
		if (ufd >= 0)
			close(ufd);
		return -ENOMEM;
	}
	ls_curl.easy_setopt(c, CURLOPT_URL, url);
	ls_curl.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	/* loopback HTTP(S) only: no proxy, no redirect, no other protocol, a bounded wait */
	ls_curl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, s->tls ? "https" : "http");
	if (s->tls) {
		/* its own certificate is the one trusted; it names a host, not 127.0.0.1 */
		ls_curl.easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
		ls_curl.easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
		ls_curl.easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (s->sock[0])
		ls_curl.easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, via);
	ls_curl.easy_setopt(c, CURLOPT_NOPROXY, "*");
	ls_curl.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	ls_curl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	ls_curl.easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)LS_JPSERVER_TIMEOUT_MS);
	ls_curl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 500L); /* the recorder waits meanwhile */
	ls_curl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	ls_curl.easy_setopt(c, CURLOPT_WRITEDATA, r);
	rc = ls_curl.easy_perform(c);
	ls_curl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	ls_curl.easy_cleanup(c);
	ls_curl.slist_free_all(hdr);
	if (ufd >= 0)
		close(ufd);
	if (rc != CURLE_OK || status != 200) {
		snprintf(why, whylen, "the Jupyter server %s: %s", where,
			 r->too_long	  ? "sessions reply too long"
			 : rc != CURLE_OK ? ls_curl.easy_strerror(rc)
					  : "sessions request refused");
		return -EIO;
	}
	return 0;
}

char *ls_jpserver__session_path(const char *reply, size_t len, const char *id)
{
	json_t *a = json_loadb(reply, len, JSON_REJECT_DUPLICATES, NULL), *e;
	char *path = NULL;
	size_t i;

	if (!json_is_array(a)) {
		json_decref(a);
		return NULL;
	}
	json_array_foreach(a, i, e)
	{
		const char *kid =
			json_string_value(json_object_get(json_object_get(e, "kernel"), "id"));
		const char *p =
			json_string_value(json_object_get(json_object_get(e, "notebook"), "path"));

		if (!p)
			p = json_string_value(json_object_get(e, "path"));
		if (kid && p && p[0] && !strcmp(kid, id) && strlen(p) < PATH_MAX) {
			path = strdup(p);
			break;
		}
	}
	json_decref(a);
	return path;
}

int ls_jpserver__notebook(pid_t pid, char **path, pid_t *server, char *why, size_t whylen)
{
	char id[128], dir[PATH_MAX], *rel;
	struct reply r = {};
	struct server s;
	size_t need;
	int err;

	memset(&s, 0, sizeof(s));
	err = connection_file(pid, id, sizeof(id), dir, sizeof(dir));
	if (!err)
		err = find_server(pid, dir, &s, server, why, whylen);
	if (!err)
		err = get_sessions(&s, &r, why, whylen);
	free(s.cert);
	if (err) {
		free(r.buf);
		return err;
	}
	rel = ls_jpserver__session_path(r.buf ? r.buf : "", r.len, id);
	free(r.buf);
	if (!rel) {
		snprintf(why, whylen, "the Jupyter server has no session for kernel %s", id);
		return -ENODATA;
	}
	/* session paths are relative to the server's root directory, "/"-separated */
	need = strlen(s.root) + strlen(rel) + 2;
	*path = malloc(need);
	if (*path)
		snprintf(*path, need, "%s/%s", s.root, rel[0] == '/' ? rel + 1 : rel);
	free(rel);
	return *path ? 0 : -ENOMEM;
}
