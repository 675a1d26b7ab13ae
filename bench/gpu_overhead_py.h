/* SPDX-License-Identifier: MIT */
/* bench/gpu-overhead's launch loops in an embedded CPython; see bench/gpu_overhead_py.c. */
#ifndef LS_GPU_OVERHEAD_PY_H
#define LS_GPU_OVERHEAD_PY_H

/*
 * Runs warmup launches, then @rounds of @launches from the loop @shape ("same", "new" or "deep"), in this
 * process's (fresh) interpreter; *best gets the fastest round's ns per launch. 0 or -1.
 */
int gpu_overhead_py(const char *shape, long launches, long warmup, int rounds, double *best);

#endif
