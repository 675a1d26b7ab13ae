// SPDX-License-Identifier: MIT
/* IPython cell names and the hash that ties a cell's text to its name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dl.h"
#include "ipycell.h"

/* a decimal number (at most 10 digits, at most max) at p: where it ends, or NULL */
static const char *number(const char *p, unsigned long long max, unsigned long long *v)
{
	const char *s = p;

	*v = 0;
	while (*p >= '0' && *p <= '9' && p - s < 10) {
		*v = *v * 10 + (unsigned)(*p - '0');
		p++;
	}
	return p > s && *v <= max && !(*p >= '0' && *p <= '9') ? p : NULL;
}

bool ls_ipycell__parse(const char *path, int *kpid, uint32_t *hash)
{
	const char *file = strrchr(path, '/'), *dir, *p;
	unsigned long long pid, h;

	/* tempfile.gettempdir() is absolute */
	if (path[0] != '/' || !file || file == path)
		return false;
	for (dir = file - 1; dir > path && dir[-1] != '/'; dir--)
		;
	if (strncmp(dir, "ipykernel_", 10))
		return false;
	p = number(dir + 10, 0x7fffffff, &pid);
	if (!p || p != file || !pid)
		return false;
	p = number(file + 1, UINT32_MAX, &h);
	if (!p || strcmp(p, ".py"))
		return false;
	*kpid = (int)pid;
	*hash = (uint32_t)h;
	return true;
}

bool ls_ipycell__parse_input(const char *path, int *num, uint64_t *sha48)
{
	static const char head[] = "<ipython-input-";
	unsigned long long n;
	uint64_t h = 0;
	const char *p;

	if (strncmp(path, head, sizeof(head) - 1))
		return false;
	p = number(path + sizeof(head) - 1, 0x7fffffff, &n);
	if (!p || *p != '-')
		return false;
	for (int i = 1; i <= 12; i++) {
		char ch = p[i];
		int d = ch >= '0' && ch <= '9'	 ? ch - '0'
			: ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
						 : -1;

		if (d < 0)
			return false;
		h = h << 4 | (uint64_t)d;
	}
	if (strcmp(p + 13, ">"))
		return false;
	*num = (int)n;
	*sha48 = h;
	return true;
}

uint64_t ls_ipycell__sha48(const void *data, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	uint64_t h = 0;

	if (ls_crypto__open() || !ls_crypto.Digest(data, len, md, &mdlen, ls_crypto.sha1(), NULL) ||
	    mdlen < 6)
		return 0;
	for (int i = 0; i < 6; i++)
		h = h << 8 | md[i];
	return h;
}

int ls_ipycell__verify_sha48(const char *text, size_t len, uint64_t sha48)
{
	char *t = malloc(len + LS_IPYCELL_MAX_NL);
	int found = -1;

	if (!t)
		return -ENOMEM;
	memcpy(t, text, len);
	memset(t + len, '\n', LS_IPYCELL_MAX_NL);
	for (int nl = 0; nl <= LS_IPYCELL_MAX_NL && found < 0; nl++)
		if (ls_ipycell__sha48(t, len + nl) == sha48)
			found = nl;
	free(t);
	return found;
}

uint32_t ls_ipycell__murmur2(const void *data, size_t len, uint32_t seed)
{
	const uint32_t m = 0x5BD1E995;
	const unsigned char *d = data;
	/* ipykernel's Python masks to 32 bits: the length term is len mod 2^32 */
	uint32_t h = seed ^ (uint32_t)len, k;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		k = d[i] | d[i + 1] << 8 | d[i + 2] << 16 | (uint32_t)d[i + 3] << 24;
		k *= m;
		k ^= k >> 24;
		k *= m;
		h *= m;
		h ^= k;
	}
	switch (len & 3) {
	case 3:
		h ^= d[i + 2] << 16;
		/* fallthrough */
	case 2:
		h ^= d[i + 1] << 8;
		/* fallthrough */
	case 1:
		h ^= d[i];
		h *= m;
	}
	h ^= h >> 13;
	h *= m;
	h ^= h >> 15;
	return h;
}

int ls_ipycell__verify(const char *text, size_t len, uint32_t hash)
{
	char *buf;
	int found = -1;

	if (ls_ipycell__murmur2(text, len, LS_IPYCELL_SEED) == hash)
		return 0;
	buf = malloc(len + LS_IPYCELL_MAX_NL);
	if (!buf)
		return -1;
	memcpy(buf, text, len);
	for (int n = 1; n <= LS_IPYCELL_MAX_NL && found < 0; n++) {
		buf[len + n - 1] = '\n';
		if (ls_ipycell__murmur2(buf, len + n, LS_IPYCELL_SEED) == hash)
			found = n;
	}
	free(buf);
	return found;
}

int ls_ipycell__hashes(const char *text, size_t len, uint32_t out[LS_IPYCELL_MAX_NL + 1])
{
	char *buf = malloc(len + LS_IPYCELL_MAX_NL);

	if (!buf)
		return -ENOMEM;
	memcpy(buf, text, len);
	memset(buf + len, '\n', LS_IPYCELL_MAX_NL);
	for (int n = 0; n <= LS_IPYCELL_MAX_NL; n++)
		out[n] = ls_ipycell__murmur2(buf, len + n, LS_IPYCELL_SEED);
	free(buf);
	return 0;
}

char *ls_ipycell__with_newlines(const char *text, size_t len, int nl, size_t *out)
{
	char *t = malloc(len + nl + 1);

	if (!t)
		return NULL;
	memcpy(t, text, len);
	memset(t + len, '\n', nl);
	t[len + nl] = 0;
	*out = len + nl;
	return t;
}

int ls_ipycell__count_lines(const char *text, size_t len)
{
	int n = 1;

	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}
