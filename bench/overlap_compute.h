/*
 * The OSU-style overlap benchmarks' clock and dummy compute (urom_overlap.c, mpi_overlap.c):
 * busy arithmetic in L1 without library calls, calibrated in chunks per microsecond (the best
 * of five 20 ms runs). Header-only, one translation unit per benchmark.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_BENCH_OVERLAP_COMPUTE_H_
#define SDP_BENCH_OVERLAP_COMPUTE_H_

#include <time.h>

static double chunks_per_us;
static double work[64];

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static inline void chunk(void)
{
	for (int r = 0; r < 8; r++)
		for (int i = 0; i < 64; i++)
			work[i] = work[i] * 0.9999999 + 1e-7;
	__asm__ __volatile__("" : : "r"(work) : "memory");
}

static void calibrate(void)
{
	double best = 0;

	for (int k = 0; k < 64; k++)
		work[k] = 1.0 + k;
	for (int run = 0; run < 5; run++) {
		double t0 = now_us(), t;
		long n = 0;

		do {
			for (int j = 0; j < 64; j++)
				chunk();
			n += 64;
			t = now_us() - t0;
		} while (t < 20000);
		if ((double)n / t > best)
			best = (double)n / t;
	}
	chunks_per_us = best;
}

#endif /* SDP_BENCH_OVERLAP_COMPUTE_H_ */
