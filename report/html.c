// SPDX-License-Identifier: MIT
/* Interim HTML writer (replaced by the report front-end): the data block and a plain notice. */
#include <errno.h>
#include <stdio.h>
#include "escape.h"
#include "html.h"

int ls_html__write(FILE *out, const char *data_json, size_t len, const char *title)
{
	if (!data_json)
		return -EINVAL;
	fputs("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>", out);
	ls_escape__html(out, title ? title : "LineScope-BPF report");
	fputs("</title></head><body><p>LineScope-BPF report (embeds source code).</p>"
	      "<script type=\"application/json\" id=\"ls-data\">",
	      out);
	ls_escape__json_script(out, data_json, len);
	fputs("</script></body></html>\n", out);
	return ferror(out) ? -EIO : 0;
}
