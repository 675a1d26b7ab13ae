/* SPDX-License-Identifier: MIT */
/*
 * Jupyter servers: the notebook a server's kernel runs. The kernel's connection file
 * (-f RUNTIME/kernel-ID.json) gives its id; the server above it left RUNTIME/jpserver-PID.json
 * (jupyter_server) or RUNTIME/nbserver-PID.json (notebook 6) with its port and token, read with
 * the kernel's rights (what it could read itself); its sessions API (GET /api/sessions on loopback)
 * maps kernel ids to notebook paths under its root directory. Not thread-safe (libcurl's global
 * state).
 */
#ifndef LS_JPSERVER_H
#define LS_JPSERVER_H

#include <stddef.h>
#include <sys/types.h>

#define LS_JPSERVER_TIMEOUT_MS 2000
#define LS_JPSERVER_MAX_REPLY  (4 << 20)

/*
 * The notebook kernel pid runs for a server: 0 with *path (absolute, the caller frees it) and
 * *server; -ENOENT when pid is not a server's kernel (nothing in why), or
 * another -errno with a one-line reason in why.
 */
int ls_jpserver__notebook(pid_t pid, char **path, pid_t *server, char *why, size_t whylen);

/* The session list a server replied (JSON): the notebook path of kernel id, or NULL. */
char *ls_jpserver__session_path(const char *reply, size_t len, const char *id);

#endif
