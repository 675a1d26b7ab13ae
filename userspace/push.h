/* SPDX-License-Identifier: MIT */
/*
 * --push URL: a recorded profile sent as pprof to a Pyroscope-compatible ingest endpoint
 * (POST URL/ingest?name=APP{host=...}&from=&until=&format=pprof, the profile as the multipart
 * field "profile"), with retries and back-off. Runs once sampling has stopped.
 */
#ifndef LS_PUSH_H
#define LS_PUSH_H

/* Whether url is one --push takes (http:// or https://, a host, no spaces): 0 or -EINVAL. */
int ls_push__check_url(const char *url);
/* Whether id is a tenant id Pyroscope takes (X-Scope-OrgID): 0 or -EINVAL. */
int ls_push__check_tenant(const char *id);

/*
 * Sends profile to url under app (NULL: "linescope"), for tenant (NULL: none). 0 once the endpoint
 * accepted it; -ECOMM when it did not (refused, or unreachable after every try), another -errno
 * when the profile could not be read; one line says why.
 */
int ls_push__run(const char *profile, const char *url, const char *app, const char *tenant);

#endif
