// SPDX-License-Identifier: MIT
/* .ipynb reader: code cells of an nbformat 4 notebook (jansson), every field checked. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "ipynb.h"
#include "procfs.h"

void ls_ipynb_release(struct ls_ipynb *nb)
{
	for (size_t i = 0; i < nb->n; i++) {
		free(nb->cells[i].text);
		free(nb->cells[i].id);
	}
	free(nb->cells);
	nb->cells = NULL;
	nb->n = 0;
}

/* nbformat keeps a source as one string or as a list of lines that carry their own newlines */
static int join_source(const json_t *src, char **out, size_t *len)
{
	size_t total = 0, i;
	json_t *part;
	char *buf;

	if (json_is_string(src)) {
		*len = json_string_length(src);
		*out = malloc(*len + 1);
		if (!*out)
			return -ENOMEM;
		memcpy(*out, json_string_value(src), *len + 1);
		return 0;
	}
	if (!json_is_array(src))
		return -EINVAL;
	json_array_foreach(src, i, part)
	{
		if (!json_is_string(part))
			return -EINVAL;
		total += json_string_length(part);
	}
	buf = malloc(total + 1);
	if (!buf)
		return -ENOMEM;
	total = 0;
	json_array_foreach(src, i, part)
	{
		memcpy(buf + total, json_string_value(part), json_string_length(part));
		total += json_string_length(part);
	}
	buf[total] = 0;
	*out = buf;
	*len = total;
	return 0;
}

int ls_ipynb__parse(const char *text, size_t len, struct ls_ipynb *nb, char *why, size_t whylen)
{
	json_error_t jerr;
	json_t *root, *cells, *cell;
	size_t cap = 0, i;
	int err = 0, index = 0;

	memset(nb, 0, sizeof(*nb));
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(why, whylen, "notebook is not valid JSON (line %d: %s)", jerr.line,
			 jerr.text);
		return -EINVAL;
	}
	cells = json_object_get(root, "cells");
	if (!json_is_object(root) || json_integer_value(json_object_get(root, "nbformat")) != 4 ||
	    !json_is_array(cells)) {
		snprintf(why, whylen, "not an nbformat 4 notebook");
		json_decref(root);
		return -EINVAL;
	}
	if (json_array_size(cells) > LS_IPYNB_MAX_CELLS) {
		snprintf(why, whylen, "notebook has more than %d cells", LS_IPYNB_MAX_CELLS);
		json_decref(root);
		return -EFBIG;
	}
	json_array_foreach(cells, i, cell)
	{
		const char *type = json_string_value(json_object_get(cell, "cell_type"));
		struct ls_ipynb_cell *c, *v;

		if (!type || strcmp(type, "code"))
			continue;
		index++;
		v = ls_array_grow(nb->cells, &cap, nb->n, sizeof(*v), 16);
		if (!v) {
			err = -ENOMEM;
			break;
		}
		nb->cells = v;
		c = &nb->cells[nb->n];
		err = join_source(json_object_get(cell, "source"), &c->text, &c->len);
		if (err == -EINVAL) {
			/* a cell we cannot read is one no name will match: skip it, keep the rest
			 */
			err = 0;
			continue;
		}
		if (err)
			break;
		c->index = index;
		c->id = NULL;
		{
			const char *id = json_string_value(json_object_get(cell, "id"));

			/* nbformat: 1 to 64 characters of [a-zA-Z0-9-_] */
			if (id && strlen(id) <= 64 &&
			    strspn(id, "abcdefghijklmnopqrstuvwxyz"
				       "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "0123456789-_") == strlen(id) &&
			    *id && !(c->id = strdup(id))) {
				free(c->text);
				err = -ENOMEM;
				break;
			}
		}
		nb->n++;
	}
	json_decref(root);
	if (err) {
		snprintf(why, whylen, "out of memory reading the notebook");
		ls_ipynb_release(nb);
	}
	return err;
}

int ls_ipynb__load(pid_t pid, const char *path, int *kept, struct ls_ipynb *nb, char *why,
		   size_t whylen)
{
	char *text = NULL;
	size_t len = 0;
	int err;

	memset(nb, 0, sizeof(*nb));
	err = kept ? ls_procfs__read_file_kept(pid, path, 0, LS_IPYNB_MAX_BYTES, &text, &len, kept)
		   : ls_procfs__read_file(pid, path, 0, LS_IPYNB_MAX_BYTES, &text, &len);
	if (err) {
		if (err == -EFBIG)
			snprintf(why, whylen, "notebook larger than %d MB not read",
				 LS_IPYNB_MAX_BYTES >> 20);
		else if (err == -EACCES || err == -EPERM)
			snprintf(why, whylen, "notebook unreadable by the process that ran it");
		else if (err == -ESRCH)
			snprintf(why, whylen, "the kernel ended before its notebook could be read");
		else
			snprintf(why, whylen, "cannot read the notebook: %s", strerror(-err));
		return err;
	}
	err = ls_ipynb__parse(text, len, nb, why, whylen);
	free(text);
	return err;
}
