/* SPDX-License-Identifier: MIT */
/*
 * Source files and their snapshots. A file is a path as a process saw it plus the content it had
 * at first sight; snapshots are stored once per content hash. Files and snapshots are numbered
 * from 1 in order of first sight, so the store receives them append-only. Not thread-safe.
 */
#ifndef LS_SOURCES_H
#define LS_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "hashmap.h"

#define LS_MAX_SOURCE_BYTES (32 << 20)

struct ls_file {
	char *path;
	int64_t source_id; /* -1 when the text is unavailable */
	const char *kind; /* "python" (project code) or "library" (stdlib, site-packages, frozen) */
	char *unavailable; /* why there is no snapshot, or NULL */
	bool dirty;	   /* changed after it was flushed (ls_sources__set_text) */
};

struct ls_source {
	char hash[33]; /* XXH3-128, hex */
	char *text;
	size_t len;
};

/* A path read in one view (ls_sources__lookup_in): the file it gave, when, and what it read. */
struct ls_view_read {
	uint64_t view;
	char *path;
	int64_t file;	  /* 0: none read yet, or the last read gave no text */
	uint64_t read_ns; /* of the last read that gave a text, or of its last check */
	/* the file that read: device, inode, size, modification and change times */
	uint64_t dev, ino, size, mtime_ns, ctime_ns;
};

struct ls_sources {
	struct ls_file *files; /* [1, nfiles) */
	size_t nfiles, fcap, files_flushed;
	struct ls_source *srcs; /* [1, nsrcs) */
	size_t nsrcs, scap, srcs_flushed;
	struct ls_hashmap by_hash;  /* XXH3-64 of content -> source id */
	struct ls_hashmap by_key;   /* hash of (path, source id) -> file id */
	struct ls_view_read *reads; /* [0, nreads) */
	size_t nreads, rcap;
	struct ls_hashmap by_view; /* hash of (view, path) -> index in reads */
};

void ls_sources_init(struct ls_sources *s);
void ls_sources_release(struct ls_sources *s);

/*
 * The file id for `path` named by process pid: reads the file through the process's root (or
 * cwd for relative paths) and snapshots it. Unreadable files still get an id, with the reason.
 * Returns the id or a negative errno (-ENOMEM).
 */
int64_t ls_sources__lookup(struct ls_sources *s, pid_t pid, const char *path);

/*
 * How long a read serves the other processes of its view: as stale as a target's rights may be
 * (credcache.h), and far less than how late a loaded collector may read a file a process imported.
 */
#define LS_SOURCES_VIEW_TTL_NS (1000 * 1000000ULL)

/*
 * What decides how an absolute path reads in a process: id hashes its mount namespace, its root
 * and its rights (0: unknown, the process reads each file itself). A process that has ended
 * (gone: its rights at its exit, from the kernel) reads with those in our root when that was its
 * root too (in_ours); else only a read of the same view by another process serves it, and with
 * id 0 (its view is not known) nothing: its pid may name another process by now.
 */
struct ls_creds;
struct ls_source_view {
	uint64_t id;
	const struct ls_creds *gone;
	bool in_ours;
};

/*
 * ls_sources__lookup, in view v (NULL or id 0: ls_sources__lookup). An absolute path another
 * process of the same view read successfully less than LS_SOURCES_VIEW_TTL_NS before now_ns
 * gives that read's file without a read of its own: 500 processes of a job each reading the same
 * dozen modules were a fifth of the collector's CPU. Later, it still does while the path names
 * the same file (ls_procfs__identify: device, inode, size, modification and change times), which
 * renews it; else it is read again.
 */
int64_t ls_sources__lookup_in(struct ls_sources *s, pid_t pid, const struct ls_source_view *v,
			      const char *path, uint64_t now_ns);

/*
 * A file whose text comes from elsewhere than its path (a notebook cell): text (owned by s from
 * now on, even on failure) or NULL with why. The file id, or -ENOMEM.
 */
int64_t ls_sources__add_text(struct ls_sources *s, const char *path, char *text, size_t len,
			     const char *why);
/* Gives file its text (owned by s from now on, even on failure) or a new reason; 0 or -ENOMEM. */
int ls_sources__set_text(struct ls_sources *s, int64_t file, char *text, size_t len,
			 const char *why);

/* "library" for the standard library, installed packages and frozen modules, else "python". */
const char *ls_sources__kind(const char *path);

#endif
