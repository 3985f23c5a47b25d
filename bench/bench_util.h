/*
 * Small helpers the bench programs share: monotonic wall time and process CPU time in seconds,
 * a counter read from a file, and an interface's rx_packets counter (the offered load the
 * receivers report).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef BENCH_UTIL_H_
#define BENCH_UTIL_H_

#include <stdint.h>
#include <stdio.h>
#include <time.h>

static inline double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double bench_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The first number of a file (a sysfs or procfs counter), or 0 when it cannot be read. */
static inline uint64_t bench_read_u64(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* /sys/class/net/<iface>/statistics/rx_packets, or 0 when it cannot be read. */
static inline uint64_t bench_iface_rx_packets(const char *iface)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", iface);
	return bench_read_u64(path);
}

#endif /* BENCH_UTIL_H_ */
