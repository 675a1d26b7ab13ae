/* SPDX-License-Identifier: MIT */
/* The skeleton's load with its programs verified on two CPUs at once (loader_split.c). */
#ifndef LS_LOADER_SPLIT_H
#define LS_LOADER_SPLIT_H

struct linescope_bpf;

#include <stdbool.h>

/*
 * Loads the opened and configured skeleton: its maps, and the programs it loads, but, with split,
 * for a share that *second (another instance of the object, on the same maps) loads on a thread;
 * attach and destroy both. Worth it where the second share is large (wall mode's off-CPU
 * programs). 0, or a negative errno (nothing left loaded).
 */
int ls_loader_split__load(struct linescope_bpf *skel, bool split, struct linescope_bpf **second);

#endif
