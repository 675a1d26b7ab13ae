// SPDX-License-Identifier: MIT
/*
 * Fills the embedded template. Placeholders look like @@LS_NAME@@ so that they cannot be
 * mistaken for HTML, CSS or JS, and each must appear exactly once: a template that lost one is a
 * build bug that the unit tests catch.
 */
#include <errno.h>
#include <string.h>
#include "assets.h"
#include "escape.h"
#include "html.h"

enum slot { SLOT_TITLE, SLOT_CSP_SCRIPT, SLOT_CSS, SLOT_JS, SLOT_DATA, SLOT_COUNT };

static const char *const slot_names[SLOT_COUNT] = {
	[SLOT_TITLE] = "TITLE", [SLOT_CSP_SCRIPT] = "CSP_SCRIPT",
	[SLOT_CSS] = "CSS",	[SLOT_JS] = "JS",
	[SLOT_DATA] = "DATA",
};

static int write_raw(FILE *out, const char *s, size_t n)
{
	return n && fwrite(s, 1, n, out) != n ? -EIO : 0;
}

static int write_slot(FILE *out, enum slot slot, const char *data, size_t len, const char *title)
{
	switch (slot) {
	case SLOT_TITLE:
		return ls_escape__html(out, title ? title : "LineScope-BPF report");
	case SLOT_CSP_SCRIPT:
		return fputs(ls_asset_js_sha256, out) < 0 ? -EIO : 0;
	case SLOT_CSS:
		return write_raw(out, ls_asset_css, LS_ASSET_LEN(css));
	case SLOT_JS:
		return write_raw(out, ls_asset_js, LS_ASSET_LEN(js));
	case SLOT_DATA:
		return ls_escape__json_script(out, data, len);
	default:
		return -EINVAL;
	}
}

/* Which slot the placeholder at p (starting "@@LS_") names, or -1. Sets *end past it. */
static int parse_slot(const char *p, const char *lim, const char **end)
{
	const char *name = p + 5, *close;
	size_t n;
	int i;

	close = memmem(name, lim - name, "@@", 2);
	if (!close)
		return -1;
	n = close - name;
	for (i = 0; i < SLOT_COUNT; i++) {
		if (strlen(slot_names[i]) == n && !memcmp(name, slot_names[i], n)) {
			*end = close + 2;
			return i;
		}
	}
	return -1;
}

int ls_html__write(FILE *out, const char *data_json, size_t len, const char *title)
{
	const char *p = ls_asset_template, *lim = ls_asset_template_end, *at, *end;
	int seen[SLOT_COUNT] = {0};
	int slot, err, i;

	if (!out || !data_json || !len)
		return -EINVAL;
	/* Check the template before writing anything, so a broken build never emits half a file. */
	for (at = p; (at = memmem(at, lim - at, "@@LS_", 5)); at = end) {
		slot = parse_slot(at, lim, &end);
		if (slot < 0)
			return -EINVAL;
		seen[slot]++;
	}
	for (i = 0; i < SLOT_COUNT; i++) {
		if (seen[i] != 1)
			return -EINVAL;
	}
	while ((at = memmem(p, lim - p, "@@LS_", 5))) {
		slot = parse_slot(at, lim, &end);
		err = write_raw(out, p, at - p);
		if (!err)
			err = write_slot(out, slot, data_json, len, title);
		if (err)
			return err;
		p = end;
	}
	err = write_raw(out, p, lim - p);
	if (!err && fflush(out))
		err = -EIO;
	return err;
}
