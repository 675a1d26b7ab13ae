/* SPDX-License-Identifier: MIT */
/*
 * The report's front-end, embedded at build time: report/gen-assets.sh turns the template, the
 * stylesheet and the concatenated script (report/assets/) into .output/report/assets.S, whose
 * .incbin directives place each file in .rodata between a start and an end symbol. The bytes are
 * not NUL-terminated (a NUL follows the end symbol only as a guard); use the end symbol for the
 * length. Valid for the life of the process.
 */
#ifndef LS_ASSETS_H
#define LS_ASSETS_H

#include <stddef.h>

extern const char ls_asset_template[], ls_asset_template_end[];
extern const char ls_asset_css[], ls_asset_css_end[];
extern const char ls_asset_js[], ls_asset_js_end[];
/* "sha256-<base64>" of ls_asset_js, for the page's Content-Security-Policy (NUL-terminated). */
extern const char ls_asset_js_sha256[];

#define LS_ASSET_LEN(name) ((size_t)(ls_asset_##name##_end - ls_asset_##name))

#endif
