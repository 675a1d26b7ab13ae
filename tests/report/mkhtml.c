// SPDX-License-Identifier: MIT
/*
 * Test-only driver: wraps a report-data JSON file into the HTML report through the real
 * ls_html__write(), so the browser tests exercise the embedding and escaping the tool uses.
 * Usage: mkhtml IN.json OUT.html [TITLE]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "html.h"

static int read_all(const char *path, char **out, size_t *len)
{
	size_t cap = 1 << 20, n = 0, got;
	char *buf = malloc(cap), *tmp;
	FILE *f = fopen(path, "rb");

	if (!f || !buf) {
		free(buf);
		if (f)
			fclose(f);
		return -errno;
	}
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			tmp = realloc(buf, cap * 2);
			if (!tmp) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = tmp;
			cap *= 2;
		}
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

int main(int argc, char **argv)
{
	char *json = NULL;
	size_t len = 0;
	FILE *out;
	int err;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s IN.json OUT.html [TITLE]\n", argv[0]);
		return 64;
	}
	err = read_all(argv[1], &json, &len);
	if (err) {
		fprintf(stderr, "mkhtml: cannot read %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	out = fopen(argv[2], "w");
	if (!out) {
		fprintf(stderr, "mkhtml: cannot create %s: %s\n", argv[2], strerror(errno));
		free(json);
		return 1;
	}
	err = ls_html__write(out, json, len, argc == 4 ? argv[3] : NULL);
	if (fclose(out) && !err)
		err = -EIO;
	free(json);
	if (err) {
		fprintf(stderr, "mkhtml: writing %s failed: %s\n", argv[2], strerror(-err));
		remove(argv[2]);
		return 1;
	}
	return 0;
}
