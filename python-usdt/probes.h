/* SPDX-License-Identifier: MIT */
/*
 * The USDT probes of linescope_usdt. Every probe takes (const void *msg, long len): a message laid
 * out as in bpf/linescope.h (struct ls_trace_state, ls_trace_code + names, ls_trace_batch +
 * lines), which bpf/pyusdt.bpf.c copies into the ring buffer.
 *
 *	linescope:state  ls_trace_state          tracing turned on or off, or cannot start
 *	linescope:code   ls_trace_code + names   names a code id (once per code object and session)
 *	                 ls_trace_cell + texts   an IPython cell's name and texts (cells.c)
 *	linescope:batch  ls_trace_batch + lines  one thread's counts since its previous batch
 *
 * Each probe has a semaphore. The extension traces while linescope_batch_semaphore is non-zero,
 * i.e. while some tracer is attached to linescope:batch; attach the three together.
 */
#ifndef LS_PYUSDT_PROBES_H
#define LS_PYUSDT_PROBES_H

#define LS_USDT_PROVIDER "linescope"
#define LS_USDT_STATE	 "state"
#define LS_USDT_CODE	 "code"
#define LS_USDT_BATCH	 "batch"

/* Fire the probes (core.c); one call site each, so each probe has a single address. */
void ls_probe_state(const void *msg, long len);
void ls_probe_code(const void *msg, long len);
void ls_probe_batch(const void *msg, long len);

/* Non-zero while a tracer is attached to linescope:batch, linescope:code. */
extern volatile unsigned short linescope_batch_semaphore;
extern volatile unsigned short linescope_code_semaphore;

#endif /* LS_PYUSDT_PROBES_H */
