/*
 * worker_rmabench: the bench-only UROM plugin behind bench/urom_rma. One command runs a whole
 * measurement inside the worker: `iters` puts or gets of `size` bytes between a worker buffer
 * and the memory domain member `dest` exported at `va` (found through the domain lookups and
 * sdp_plugin_mem), at most `window` in flight, then a flush; the notification carries the
 * worker-side elapsed time. Not installed.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef RMABENCH_H_
#define RMABENCH_H_

#include <stdint.h>

enum rmabench_op {
	RMABENCH_PUT = 0, /* worker buffer -> host memory; the last put's bytes are `seed`'s */
	RMABENCH_GET = 1, /* host memory -> worker buffer; the worker checks them against `seed` */
};

struct rmabench_cmd {
	uint64_t op;
	uint64_t dest; /* domain id of the member whose memory is the target */
	uint64_t va;   /* first byte; [va, va + size) must be in one of its segments */
	uint64_t size;
	uint64_t iters;
	uint64_t window;
	uint64_t seed; /* byte i of the data is (uint8_t)(seed + i * 7) */
};

struct rmabench_notify {
	uint64_t op;
	int64_t status; /* doca_error_t of the run */
	uint64_t ns;	/* first issue to flush completion, CLOCK_MONOTONIC */
	uint64_t done;	/* operations completed */
	uint64_t bad;	/* GET: bytes that differed from the pattern */
};

static inline uint8_t rmabench_byte(uint64_t seed, uint64_t i)
{
	return (uint8_t)(seed + i * 7);
}

#endif /* RMABENCH_H_ */
