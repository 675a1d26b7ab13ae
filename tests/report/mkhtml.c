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
#include "../lib/read_file.h"

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
	json = ls_test_read_file(argv[1], &len);
	if (!json) {
		fprintf(stderr, "mkhtml: cannot read %s: %s\n", argv[1], strerror(errno));
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
