/*
 * The OSU overlap measurement (osu_ialltoall and friends, ../shared/reference/anchors.md
 * §2.1) as a plain MPI program: nothing in it knows softdpu. bench/mpi_overlap.sh runs it
 * twice in one invocation, as it is and with libsoftdpu_mpi preloaded, and prints the ratio.
 *
 * For each collective and size: t_pure, the mean time of start + MPI_Wait; then the same
 * collective started, a dummy compute of t_pure (the slowest rank's) without any MPI call,
 * then MPI_Wait: t_overall, of which t_cpu is the compute.
 *   overlap = max(0, 100 * (1 - (t_overall - t_cpu) / t_pure))
 * The maximum over the ranks of each time is reported. Sizes are per rank and peer (alltoall,
 * allgather: the message to each peer; allreduce, bcast: the buffer).
 *
 *   mpi_overlap [-c ialltoall,iallreduce,iallgather,ibcast] [-m MIN] [-M MAX] [-i ITERS]
 *               [-w WARMUP]
 * SDP_BENCH_RANK_CPUS=a,b,c,...: rank r pins itself to CPU list[r % n] (the launcher may not).
 * Output: one line "row <coll> <size> <t_pure> <t_overall> <t_cpu> <overlap>" per measurement
 * (microseconds, percent), from rank 0.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "overlap_compute.h"

enum coll {
	C_ALLTOALL,
	C_ALLREDUCE,
	C_ALLGATHER,
	C_BCAST,
	C_COUNT
};
static const char *const names[C_COUNT] = {"ialltoall", "iallreduce", "iallgather", "ibcast"};

static int rank, nranks;
static size_t min_size = 1024, max_size = 4u << 20;
static long iters = 50, warm = 5;
static unsigned colls = 0xf;
static char *sbuf, *rbuf;

static double compute(double us)
{
	long n = (long)(us * chunks_per_us + 0.5);
	double t0 = now_us();

	for (long k = 0; k < n; k++)
		chunk();
	return now_us() - t0;
}

static void start(enum coll c, size_t size, MPI_Request *r)
{
	int n = (int)size;

	switch (c) {
	case C_ALLTOALL:
		MPI_Ialltoall(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, MPI_COMM_WORLD, r);
		break;
	case C_ALLREDUCE:
		MPI_Iallreduce(sbuf, rbuf, n / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, r);
		break;
	case C_ALLGATHER:
		MPI_Iallgather(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, MPI_COMM_WORLD, r);
		break;
	default:
		MPI_Ibcast(sbuf, n, MPI_BYTE, 0, MPI_COMM_WORLD, r);
		break;
	}
}

static double pure(enum coll c, size_t size)
{
	double sum = 0;
	MPI_Request r;

	MPI_Barrier(MPI_COMM_WORLD);
	for (long i = 0; i < iters + warm; i++) {
		double t0 = now_us();

		start(c, size, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		if (i >= warm)
			sum += now_us() - t0;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	return sum / (double)iters;
}

static void overlapped(enum coll c, size_t size, double target, double *overall, double *cpu)
{
	MPI_Request r;

	*overall = *cpu = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (long i = 0; i < iters + warm; i++) {
		double t0 = now_us(), tc;

		start(c, size, &r);
		tc = compute(target);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		if (i >= warm) {
			*overall += now_us() - t0;
			*cpu += tc;
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	*overall /= (double)iters;
	*cpu /= (double)iters;
}

static void pin(void)
{
	const char *v = getenv("SDP_BENCH_RANK_CPUS");
	int cpus[1024], n = 0;
	cpu_set_t set;

	if (v == NULL || *v == '\0')
		return;
	while (*v != '\0' && n < 1024) {
		char *end;

		cpus[n++] = (int)strtol(v, &end, 10);
		v = *end == ',' ? end + 1 : end;
		if (end == v && *end != '\0')
			break;
	}
	CPU_ZERO(&set);
	CPU_SET(cpus[rank % n], &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		perror("sched_setaffinity");
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-m") == 0)
			min_size = strtoull(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "-M") == 0)
			max_size = strtoull(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "-i") == 0)
			iters = atol(argv[i + 1]);
		else if (strcmp(argv[i], "-w") == 0)
			warm = atol(argv[i + 1]);
		else if (strcmp(argv[i], "-c") == 0) {
			colls = 0;
			for (int c = 0; c < C_COUNT; c++)
				if (strstr(argv[i + 1], names[c]) != NULL)
					colls |= 1u << c;
		}
	}
	if (min_size < 4)
		min_size = 4;
	if (iters < 1)
		iters = 1;
	pin();
	sbuf = malloc(max_size * (size_t)nranks);
	rbuf = malloc(max_size * (size_t)nranks);
	if (sbuf == NULL || rbuf == NULL) {
		fprintf(stderr, "mpi_overlap: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(sbuf, 1, max_size * (size_t)nranks);
	memset(rbuf, 0, max_size * (size_t)nranks);
	calibrate();
	for (int c = 0; c < C_COUNT; c++) {
		if (!(colls & (1u << c)))
			continue;
		for (size_t size = min_size; size <= max_size; size *= 4) {
			double p = pure((enum coll)c, size), pmax, ov, cpu, v[2], vmax[2], o;

			MPI_Allreduce(&p, &pmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
			overlapped((enum coll)c, size, pmax, &ov, &cpu);
			v[0] = ov;
			v[1] = cpu;
			MPI_Allreduce(v, vmax, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
			o = 100.0 * (1.0 - (vmax[0] - vmax[1]) / pmax);
			if (rank == 0)
				printf("row %s %zu %.1f %.1f %.1f %.1f\n", names[c], size, pmax,
				       vmax[0], vmax[1], o < 0 ? 0 : o);
		}
	}
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
