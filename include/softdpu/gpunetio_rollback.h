/*
 * softdpu extension (not part of DOCA): the GPUNetIO rollback, bounded and fail-closed.
 *
 * A program that attached a GPU part (a doca_gpu, GPU memory, its registrations, Ethernet queues
 * on the GPU data path, a persistent kernel polling a stop flag) to a device records each piece
 * in a rollback plan as it creates it, then sdp_gpu_rollback_run() takes it all down in the
 * order the GPUNetIO seed's rollback verb asks for, as softdpu's objects allow it:
 *
 *   1 stop-flag      record the drain deadline (CLOCK_MONOTONIC now + deadline_ms), then write
 *                    stop_value into the kernel's stop flag (GPU-visible host memory);
 *   2 drain          poll cuStreamQuery on the kernel's stream (softdpu's CUDA driver layer,
 *                    every millisecond; never a device-wide synchronize) until the stream is
 *                    done or the deadline passes. Past the deadline the run FAILS CLOSED: it
 *                    answers DOCA_ERROR_TIME_OUT and touches nothing else (no queue stop, no
 *                    unregistration, no free, no doca_gpu_destroy); run it again once the
 *                    kernel ended (each run records a new deadline of the same length);
 *                    (then the caller's own step, sdp_gpu_rollback_set_before_stop, once)
 *   3 stop-contexts  doca_ctx_stop and destroy each GPU data path queue (reverse order of
 *                    sdp_gpu_rollback_add_rxq/_txq): the GPU-visible handles and the rings;
 *   4 unregister     doca_buf_arr_destroy / doca_mmap_destroy in reverse order of registration
 *                    (a queue holds its packet buffer's mmap until destroyed: hence after 3);
 *   5 free-memory    doca_gpu_mem_free of each recorded allocation, reverse order;
 *   6 destroy-gpu    doca_gpu_destroy (softdpu refuses it while memory of the handle lives,
 *                    DOCA frees cudaMalloc memory after it: the one order swap, docs/gpunetio.md);
 *   7 reverify       the parent Ethernet path (what the caller measures with the callback, a
 *                    CPU data path queue of the same device that was never torn down) receives
 *                    at its earlier rate: rate >= baseline * (1 - tolerance). A failed check is
 *                    measured once more; a second failure reports the residual gap (both rates)
 *                    with DOCA_ERROR_UNEXPECTED and is never retried again.
 *
 * The parent queue itself (and the device) is never in the plan: it stays up. A step that fails
 * stops the run with its error; a later run resumes at that step (what was already destroyed is
 * not touched again). Every piece is optional: a plan without a kernel skips steps 1-2, one
 * without a GPU (gpu NULL: the CPU stand-in) skips 1-6 and only re-verifies.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_GPUNETIO_ROLLBACK_H_
#define SOFTDPU_GPUNETIO_ROLLBACK_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu;
struct doca_buf_arr;
struct doca_mmap;
struct doca_eth_rxq;
struct doca_eth_txq;
struct sdp_gpu_rollback;

enum sdp_gpu_rollback_step {
	SDP_GPU_ROLLBACK_STOP_FLAG = 0,
	SDP_GPU_ROLLBACK_DRAIN,
	SDP_GPU_ROLLBACK_STOP_CONTEXTS,
	SDP_GPU_ROLLBACK_UNREGISTER,
	SDP_GPU_ROLLBACK_FREE_MEMORY,
	SDP_GPU_ROLLBACK_DESTROY_GPU,
	SDP_GPU_ROLLBACK_REVERIFY,
	SDP_GPU_ROLLBACK_NB_STEPS,
};

enum sdp_gpu_rollback_state {
	SDP_GPU_ROLLBACK_PENDING = 0, /* not reached (yet) */
	SDP_GPU_ROLLBACK_DONE,
	SDP_GPU_ROLLBACK_FAILED,
	SDP_GPU_ROLLBACK_SKIPPED, /* nothing of that kind in the plan */
};

/* The upper bound of sdp_gpu_rollback_add_* entries of each kind. */
#define SDP_GPU_ROLLBACK_MAX 16
/* The tolerance when sdp_gpu_rollback_set_reverify is given a negative one: 20 %. */
#define SDP_GPU_ROLLBACK_DEFAULT_TOLERANCE 0.2

/* What a run did, filled by every sdp_gpu_rollback_run (also on failure). */
struct sdp_gpu_rollback_report {
	enum sdp_gpu_rollback_state state[SDP_GPU_ROLLBACK_NB_STEPS];
	doca_error_t result[SDP_GPU_ROLLBACK_NB_STEPS]; /* DOCA_SUCCESS unless FAILED */
	enum sdp_gpu_rollback_step failed_step;		/* SDP_GPU_ROLLBACK_NB_STEPS: none */
	uint32_t deadline_ms;				/* the declared drain deadline */
	double drain_ms;	/* flag raised (this run) to stream done, or to giving up */
	int kernel_running;	/* 1: the deadline passed, nothing was torn down */
	int kernel_error;	/* 1: the stream ended with a CUDA error (kernel faulted) */
	uint32_t contexts;	/* queues stopped and destroyed (all runs) */
	uint32_t registrations; /* buffer arrays and mmaps destroyed (all runs) */
	uint32_t gpu_mem;	/* allocations freed (all runs) */
	int gpu_destroyed;	/* 1 once doca_gpu_destroy succeeded */
	double tolerance;	/* re-verify: pass when rate >= baseline * (1 - tolerance) */
	double baseline_pps;	/* < 0: no baseline */
	double reverify_pps[2]; /* the measurements (< 0: not made) */
	int reverify_attempts;	/* 0, 1 or 2 */
	double residual_gap;	/* (baseline - last) / baseline after a failed re-verify */
};

/*
 * How the caller measures the parent Ethernet path: the receive rate (packets per second) of a
 * CPU data path queue of the device, over a window of its choice. Returns DOCA_SUCCESS with
 * *rate_pps, or an error (the re-verify then fails with it).
 */
typedef doca_error_t (*sdp_gpu_rollback_measure_cb)(void *user, double *rate_pps);

/* A plan for gpu (NULL: no GPU part, only the re-verify). NO_MEMORY, INVALID_VALUE. */
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_create(struct doca_gpu *gpu, struct sdp_gpu_rollback **rb);
/* Frees the plan only (it owns none of the objects). */
DOCA_EXPERIMENTAL
void sdp_gpu_rollback_destroy(struct sdp_gpu_rollback *rb);

/*
 * The persistent kernel: stop_flag_cpu is the CPU address of the flag it polls (GPU_CPU or
 * CPU_GPU memory), stop_value what to write there, stream its CUDA stream (a cudaStream_t or
 * CUstream of the plan's GPU), deadline_ms the drain deadline (1 to 3600000). INVALID_VALUE for
 * NULL arguments, a plan without a GPU or a deadline out of range.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_set_kernel(struct sdp_gpu_rollback *rb, uint32_t *stop_flag_cpu,
					 uint32_t stop_value, void *stream, uint32_t deadline_ms);

/* Record a piece, in the order it was created or registered. NO_MEMORY past
 * SDP_GPU_ROLLBACK_MAX of a kind, INVALID_VALUE for NULL (or a plan without a GPU). */
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_add_buf_arr(struct sdp_gpu_rollback *rb, struct doca_buf_arr *arr);
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_add_mmap(struct sdp_gpu_rollback *rb, struct doca_mmap *mmap);
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_add_rxq(struct sdp_gpu_rollback *rb, struct doca_eth_rxq *rxq);
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_add_txq(struct sdp_gpu_rollback *rb, struct doca_eth_txq *txq);
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_add_gpu_mem(struct sdp_gpu_rollback *rb, void *memptr_gpu);

/*
 * The re-verify: measure (with user) and the tolerance, a fraction in [0, 1) (negative: the
 * default, SDP_GPU_ROLLBACK_DEFAULT_TOLERANCE). Without it the re-verify step is SKIPPED.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_set_reverify(struct sdp_gpu_rollback *rb,
					   sdp_gpu_rollback_measure_cb measure, void *user,
					   double tolerance);
/*
 * Measure the baseline now (before the GPU part is attached): the callback's answer, kept in
 * the plan (and in *rate_pps when not NULL). BAD_STATE without a re-verify callback.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_baseline(struct sdp_gpu_rollback *rb, double *rate_pps);

/*
 * A step of the caller's own, run once right after a successful drain and before step 3: what
 * must go after the kernel and before the queues (e.g. DOCA Flow rules steering to a GPU
 * queue). fn may be NULL (none). INVALID_VALUE for a NULL plan.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_set_before_stop(struct sdp_gpu_rollback *rb, void (*fn)(void *user),
					      void *user);

/* Or record a baseline measured before the plan existed (rate_pps >= 0). INVALID_VALUE. */
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_set_baseline(struct sdp_gpu_rollback *rb, double rate_pps);

/*
 * Run (or resume) the rollback, filling *report (may be NULL). DOCA_SUCCESS when every step is
 * DONE or SKIPPED; DOCA_ERROR_TIME_OUT when the kernel did not finish by the deadline (nothing
 * else touched); the error of a failing teardown step; DOCA_ERROR_UNEXPECTED when the re-verify
 * failed twice (report->residual_gap); BAD_STATE for a re-verify without a baseline.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_gpu_rollback_run(struct sdp_gpu_rollback *rb,
				  struct sdp_gpu_rollback_report *report);

/* "stop-flag", "drain", "stop-contexts", "unregister", "free-memory", "destroy-gpu",
 * "reverify"; "unknown" otherwise. And "pending", "done", "failed", "skipped". */
DOCA_EXPERIMENTAL
const char *sdp_gpu_rollback_step_name(enum sdp_gpu_rollback_step step);
DOCA_EXPERIMENTAL
const char *sdp_gpu_rollback_state_name(enum sdp_gpu_rollback_state state);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_GPUNETIO_ROLLBACK_H_ */
