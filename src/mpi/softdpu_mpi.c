/*
 * libsoftdpu_mpi: the non-blocking collectives of an unmodified MPI program progressed by
 * softdpu workers (docs/mpi.md). Loaded with LD_PRELOAD (or linked before the MPI library), it
 * defines MPI_* entry points and reaches the MPI library through its PMPI_* names.
 *
 * At MPI_Init each rank connects to its host's softdpu service, starts a worker running
 * worker_coll, and joins a domain over MPI_COMM_WORLD (the OOB is a private duplicate of it);
 * every rank exports one staging pool, a large reserved range whose pages exist only once used.
 * An offloaded collective copies its input into the pool, submits the collective to the worker
 * (which moves and reduces the data between the ranks' pools while the application computes),
 * and answers with a generalized request (MPI_Grequest_start). The request completes through
 * the interposed MPI_Wait / MPI_Test families: they progress the worker's notifications, copy
 * the result out of the pool into the user's buffer, and complete the generalized request,
 * which the MPI library then frees as usual.
 *
 * Whatever cannot be offloaded passes through to the MPI library unchanged and is counted
 * (SOFTDPU_MPI_STATS=1 prints the counts at MPI_Finalize). Every decision to offload depends
 * only on what MPI requires to be the same on all members of the communicator (datatype, op,
 * counts of the regular collectives, the communicator itself), so the members never disagree;
 * the one exception is Ialltoallv, whose per-rank sizes differ (docs/mpi.md, "Limits").
 *
 * Built once per MPI library from this one source (src/mpi/meson.build): the MPI ABIs differ.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include <doca_ctx.h>
#include <doca_pe.h>
#include <doca_urom.h>

#include "sdp_rcache.h"
#include "softdpu/urom_mem.h"
#include "urom_coll.h"

/* ---- what is counted ---------------------------------------------------------------------- */

enum sdp_mpi_call {
	SDP_MPI_IALLTOALL,
	SDP_MPI_IALLTOALLV,
	SDP_MPI_IALLGATHER,
	SDP_MPI_IALLREDUCE,
	SDP_MPI_IBCAST,
	SDP_MPI_IREDUCE,
	SDP_MPI_IBARRIER,
	SDP_MPI_IREDUCE_SCATTER_BLOCK,
	SDP_MPI_NCALLS,
};

static const char *const sdp_mpi_call_names[SDP_MPI_NCALLS] = {
	"MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Iallgather", "MPI_Iallreduce",
	"MPI_Ibcast",	 "MPI_Ireduce",	   "MPI_Ibarrier",   "MPI_Ireduce_scatter_block",
};

/* Why a call passed through (the counters' columns). */
enum sdp_mpi_why {
	SDP_MPI_OFFLOADED,
	SDP_MPI_PASS_OFF,   /* offload not active (no service, SOFTDPU_MPI=0, after a failure) */
	SDP_MPI_PASS_COMM,  /* a communicator without a team (intercommunicator, not derived) */
	SDP_MPI_PASS_DTYPE, /* datatype not contiguous, or not predefined for a reduction */
	SDP_MPI_PASS_OP,    /* op not predefined SUM/PROD/MIN/MAX/BAND/BOR/BXOR for the type */
	SDP_MPI_PASS_SIZE,  /* larger than a worker collective or than half the pool */
	SDP_MPI_PASS_ARGS,  /* what MPI itself must judge (negative counts, bad root...) */
	SDP_MPI_NWHY,
};

static const char *const sdp_mpi_why_names[SDP_MPI_NWHY] = {
	"offloaded", "pass_off", "pass_comm", "pass_dtype", "pass_op", "pass_size", "pass_args",
};

/* ---- state ---------------------------------------------------------------------------------- */

#define SDP_MPI_WORLD_TAG 0x5344504d57524c44ull /* "SDPMWRLD" */
#define SDP_MPI_TIMEOUT_MS 30000		/* bound on set-up and teardown steps */
#define SDP_MPI_ALIGN 64
#define SDP_MPI_DEFAULT_POOL_MB 1024
#define SDP_MPI_MAX_FIFO 4096		/* pool allocations outstanding at once */
#define SDP_MPI_DEFAULT_ZCOPY_MIN 65536 /* bytes: from here the user's buffers are registered */
#define SDP_MPI_RCACHE_MAX 256		/* registrations cached */
#define SDP_MPI_ZCOPY_CMD_MAX 2048	/* command bytes a zero-copy collective may take */
#define SDP_MPI_ZCOPY_V_RANKS 32	/* Ialltoallv zero copy up to this many ranks (trailer) */

/* A communicator with a worker_coll team. */
struct sdp_mpi_comm {
	struct sdp_mpi_comm *next;
	MPI_Comm comm;
	struct urom_coll_team *team;
	uint64_t tag;
	uint64_t children; /* dup / split calls on it so far (the children's tags) */
	int size, rank;
	int outstanding; /* offloaded collectives not complete */
	int freed;	 /* MPI_Comm_free called: destroy the team once idle */
};

/* One piece of a result to copy out of the pool into the user's buffer. */
struct sdp_mpi_piece {
	size_t pool_off; /* from the op's receive area */
	size_t user_off; /* from the user's receive buffer */
	size_t len;
};

/* One offloaded collective. */
struct sdp_mpi_op {
	struct sdp_mpi_op *next; /* the list of live ops */
	MPI_Request req;	 /* the generalized request handed out */
	int call;
	struct sdp_mpi_comm *c;
	int fifo;	 /* pool allocation (index in the FIFO), -1 = none */
	uint8_t *pool_r; /* receive area in the pool */
	uint8_t *user_r; /* the user's receive buffer */
	struct sdp_mpi_piece one;
	struct sdp_mpi_piece *pieces; /* Ialltoallv: one per block; else &one */
	int npieces;
	struct sdp_rcache_region *rs, *rr; /* zero copy: the user's buffers' registrations */
	int done;			   /* the worker answered (status holds its result) */
	int user_freed; /* MPI_Request_free before it was done: freed on completion */
	int mpi_freed;	/* free_fn ran: the MPI request is gone */
	doca_error_t status;
};

/* The pool's allocations in order: a ring over the pool. */
struct sdp_mpi_fifo_ent {
	size_t off, len;
	int done;
};

static struct {
	pthread_mutex_t lock; /* recursive: MPI may call free_fn from inside our PMPI calls */
	int active;	      /* collectives are offloaded */
	int verbose;
	int stats;
	int rank, size;
	MPI_Comm oob_comm; /* private duplicate of MPI_COMM_WORLD: OOB and agreements */
	struct doca_pe *pe;
	struct doca_urom_service *svc;
	struct doca_urom_worker *worker;
	struct doca_urom_domain *dom;
	struct sdp_urom_mem *mem;
	uint8_t *pool;
	size_t pool_len;
	struct sdp_mpi_fifo_ent fifo[SDP_MPI_MAX_FIFO];
	int fifo_head, fifo_count; /* ring of allocations: oldest at fifo_head */
	size_t pool_next;	   /* where the next allocation goes */
	struct sdp_mpi_comm *comms;
	int nteams;
	struct sdp_mpi_op *ops;
	uint64_t count[SDP_MPI_NCALLS][SDP_MPI_NWHY];
	uint64_t zcopy[SDP_MPI_NCALLS]; /* offloaded without staging */
	struct sdp_rcache *rc;		/* registrations of user buffers; NULL: staging only */
	size_t zcopy_min;		/* bytes; 0: never */
	char why_off[256];		/* why offload is not active */
	int errors_reported;
} g = {.lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, .oob_comm = MPI_COMM_NULL};

static void sdp_mpi_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sdp_mpi_log(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "softdpu_mpi: rank %d: ", g.rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define sdp_mpi_debug(...)                                                                         \
	do {                                                                                       \
		if (g.verbose)                                                                     \
			sdp_mpi_log(__VA_ARGS__);                                                  \
	} while (0)

static uint64_t sdp_mpi_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sdp_mpi_lock(void)
{
	pthread_mutex_lock(&g.lock);
}

static void sdp_mpi_unlock(void)
{
	pthread_mutex_unlock(&g.lock);
}

/* ---- the staging pool: a ring of allocations ------------------------------------------------ */

/* [off, off + len) of the pool for a new op (aligned), or -1 when it does not fit now. */
static int sdp_mpi_pool_alloc(size_t len, size_t *off_p)
{
	size_t first, off;
	int k;

	len = (len + SDP_MPI_ALIGN - 1) & ~(size_t)(SDP_MPI_ALIGN - 1);
	if (len == 0)
		len = SDP_MPI_ALIGN;
	if (g.fifo_count == SDP_MPI_MAX_FIFO || len > g.pool_len)
		return -1;
	if (g.fifo_count == 0) {
		off = 0;
	} else {
		first = g.fifo[g.fifo_head].off;
		if (g.pool_next > first) {
			/* [next, end) free, then [0, first) */
			if (g.pool_next + len <= g.pool_len)
				off = g.pool_next;
			else if (len <= first)
				off = 0;
			else
				return -1;
		} else {
			/* wrapped: [next, first) free */
			if (g.pool_next + len <= first)
				off = g.pool_next;
			else
				return -1;
		}
	}
	k = (g.fifo_head + g.fifo_count) % SDP_MPI_MAX_FIFO;
	g.fifo[k].off = off;
	g.fifo[k].len = len;
	g.fifo[k].done = 0;
	g.fifo_count++;
	g.pool_next = off + len;
	*off_p = off;
	return k;
}

static void sdp_mpi_pool_free(int k)
{
	if (k < 0)
		return;
	g.fifo[k].done = 1;
	while (g.fifo_count > 0 && g.fifo[g.fifo_head].done) {
		g.fifo_head = (g.fifo_head + 1) % SDP_MPI_MAX_FIFO;
		g.fifo_count--;
	}
	if (g.fifo_count == 0)
		g.pool_next = 0;
}

/* ---- communicators ---------------------------------------------------------------------------- */

static struct sdp_mpi_comm *sdp_mpi_comm_find(MPI_Comm comm)
{
	for (struct sdp_mpi_comm *c = g.comms; c != NULL; c = c->next)
		if (c->comm == comm && !c->freed)
			return c;
	return NULL;
}

static void sdp_mpi_comm_unlink(struct sdp_mpi_comm *c)
{
	for (struct sdp_mpi_comm **pp = &g.comms; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			return;
		}
}

/* Destroy c's team (bounded) and forget c. */
static void sdp_mpi_comm_destroy(struct sdp_mpi_comm *c)
{
	doca_error_t st;

	if (c->team != NULL) {
		st = urom_coll_team_destroy(c->team, SDP_MPI_TIMEOUT_MS);
		if (st != DOCA_SUCCESS)
			sdp_mpi_log("destroying the team of a communicator failed: %s",
				    doca_error_get_name(st));
		g.nteams--;
	}
	sdp_mpi_comm_unlink(c);
	free(c);
}

static uint64_t sdp_mpi_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * A team for comm (a new intracommunicator whose members all call this, in the same order),
 * with the given tag: created when every member can and did, else comm stays without one.
 * Collective over comm (two allreduces), like the MPI call that made comm.
 */
static void sdp_mpi_comm_attach(MPI_Comm comm, uint64_t tag)
{
	struct sdp_mpi_comm *c = NULL;
	uint64_t *members = NULL;
	int ok = 1, all = 0, size = 0, rank = 0, inter = 0, *in = NULL, *out = NULL;
	MPI_Group grp = MPI_GROUP_NULL, wgrp = MPI_GROUP_NULL;
	doca_error_t st = DOCA_SUCCESS;

	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return; /* intercommunicators pass through (same answer on every member) */
	PMPI_Comm_size(comm, &size);
	PMPI_Comm_rank(comm, &rank);
	if (size > UROM_COLL_MAX_MEMBERS || g.nteams >= UROM_COLL_MAX_TEAMS)
		ok = 0;
	if (ok) {
		c = calloc(1, sizeof(*c));
		members = calloc((size_t)size, sizeof(*members));
		in = calloc((size_t)size, sizeof(int));
		out = calloc((size_t)size, sizeof(int));
		ok = c != NULL && members != NULL && in != NULL && out != NULL;
	}
	if (ok && PMPI_Comm_group(comm, &grp) == MPI_SUCCESS &&
	    PMPI_Comm_group(MPI_COMM_WORLD, &wgrp) == MPI_SUCCESS) {
		for (int i = 0; i < size; i++)
			in[i] = i;
		ok = PMPI_Group_translate_ranks(grp, size, in, wgrp, out) == MPI_SUCCESS;
		for (int i = 0; ok && i < size; i++) {
			if (out[i] == MPI_UNDEFINED)
				ok = 0;
			else
				members[i] = (uint64_t)out[i];
		}
	} else {
		ok = 0;
	}
	if (grp != MPI_GROUP_NULL)
		PMPI_Group_free(&grp);
	if (wgrp != MPI_GROUP_NULL)
		PMPI_Group_free(&wgrp);
	/* every member can, or none tries */
	if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
		all = 0;
	if (all) {
		st = urom_coll_team_create(g.worker, g.pe, tag, (uint64_t)g.rank, members,
					   (uint32_t)size, &c->team);
		if (st == DOCA_SUCCESS)
			st = urom_coll_team_wait_ready(c->team, SDP_MPI_TIMEOUT_MS);
		ok = st == DOCA_SUCCESS;
		if (!ok)
			sdp_mpi_log("a team for a communicator of %d failed: %s; its collectives "
				    "pass through",
				    size, doca_error_get_name(st));
		/* and every member has it */
		if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
			all = 0;
		if (!all && c->team != NULL) {
			(void)urom_coll_team_destroy(c->team, SDP_MPI_TIMEOUT_MS);
			c->team = NULL;
		}
	}
	if (all) {
		c->comm = comm;
		c->tag = tag;
		c->size = size;
		c->rank = rank;
		c->next = g.comms;
		g.comms = c;
		g.nteams++;
		c = NULL;
	}
	free(c);
	free(members);
	free(in);
	free(out);
}

/* The tag of parent's next child: the same on every member (they call in the same order). */
static uint64_t sdp_mpi_child_tag(struct sdp_mpi_comm *parent, int color)
{
	uint64_t t = sdp_mpi_mix(parent->tag ^ sdp_mpi_mix(++parent->children));

	t = sdp_mpi_mix(t ^ (uint64_t)(uint32_t)color);
	return t != 0 ? t : 1;
}

/* ---- datatypes and ops ------------------------------------------------------------------------- */

/* Bytes of count elements of dt when dt is contiguous (no gaps, lower bound 0); 0 = not. */
static int sdp_mpi_contig(MPI_Datatype dt, int count, size_t *bytes_p, size_t *esize_p)
{
	MPI_Aint lb, extent, tlb, textent;
	int size;

	if (dt == MPI_DATATYPE_NULL || count < 0)
		return 0;
	if (PMPI_Type_size(dt, &size) != MPI_SUCCESS ||
	    PMPI_Type_get_extent(dt, &lb, &extent) != MPI_SUCCESS ||
	    PMPI_Type_get_true_extent(dt, &tlb, &textent) != MPI_SUCCESS)
		return 0;
	if (size <= 0 || lb != 0 || tlb != 0 || extent != size || textent != size)
		return 0;
	*esize_p = (size_t)size;
	*bytes_p = (size_t)count * (size_t)size;
	return 1;
}

/* The worker's type for a predefined MPI type of a reduction; -1 = none. */
static int sdp_mpi_dtype(MPI_Datatype dt)
{
	int size = 0;

	if (dt == MPI_FLOAT)
		return UROM_COLL_FLOAT;
	if (dt == MPI_DOUBLE)
		return UROM_COLL_DOUBLE;
	if (dt == MPI_INT8_T || dt == MPI_SIGNED_CHAR)
		return UROM_COLL_INT8;
	if (dt == MPI_UINT8_T || dt == MPI_UNSIGNED_CHAR || dt == MPI_BYTE)
		return UROM_COLL_UINT8;
	if (dt == MPI_INT16_T)
		return UROM_COLL_INT16;
	if (dt == MPI_UINT16_T)
		return UROM_COLL_UINT16;
	if (dt == MPI_INT32_T)
		return UROM_COLL_INT32;
	if (dt == MPI_UINT32_T)
		return UROM_COLL_UINT32;
	if (dt == MPI_INT64_T)
		return UROM_COLL_INT64;
	if (dt == MPI_UINT64_T)
		return UROM_COLL_UINT64;
	/* the C integer types, by their size here */
	if (dt == MPI_SHORT || dt == MPI_INT || dt == MPI_LONG || dt == MPI_LONG_LONG_INT ||
	    dt == MPI_LONG_LONG) {
		PMPI_Type_size(dt, &size);
		return size == 2 ? UROM_COLL_INT16 :
		       size == 4 ? UROM_COLL_INT32 :
		       size == 8 ? UROM_COLL_INT64 :
				   -1;
	}
	if (dt == MPI_UNSIGNED_SHORT || dt == MPI_UNSIGNED || dt == MPI_UNSIGNED_LONG ||
	    dt == MPI_UNSIGNED_LONG_LONG) {
		PMPI_Type_size(dt, &size);
		return size == 2 ? UROM_COLL_UINT16 :
		       size == 4 ? UROM_COLL_UINT32 :
		       size == 8 ? UROM_COLL_UINT64 :
				   -1;
	}
	return -1;
}

/* The worker's op for an MPI op on type t; -1 = none (MPI judges it). */
static int sdp_mpi_op(MPI_Op op, int t, MPI_Datatype dt)
{
	int fp = t == UROM_COLL_FLOAT || t == UROM_COLL_DOUBLE;

	if (dt == MPI_BYTE) /* MPI allows only the bitwise ops on MPI_BYTE */
		return op == MPI_BAND ? UROM_COLL_BAND :
		       op == MPI_BOR  ? UROM_COLL_BOR :
		       op == MPI_BXOR ? UROM_COLL_BXOR :
					-1;
	if (op == MPI_SUM)
		return UROM_COLL_SUM;
	if (op == MPI_PROD)
		return UROM_COLL_PROD;
	if (op == MPI_MIN)
		return UROM_COLL_MIN;
	if (op == MPI_MAX)
		return UROM_COLL_MAX;
	if (fp) /* bitwise on floating point: MPI's error to give */
		return -1;
	if (op == MPI_BAND)
		return UROM_COLL_BAND;
	if (op == MPI_BOR)
		return UROM_COLL_BOR;
	if (op == MPI_BXOR)
		return UROM_COLL_BXOR;
	return -1;
}

/* ---- progress and completion ------------------------------------------------------------------ */

static void sdp_mpi_op_complete(struct sdp_mpi_op *op)
{
	if (op->status == DOCA_SUCCESS)
		for (int i = 0; i < op->npieces; i++)
			memcpy(op->user_r + op->pieces[i].user_off,
			       op->pool_r + op->pieces[i].pool_off, op->pieces[i].len);
	else if (g.errors_reported++ < 8)
		sdp_mpi_log("%s failed on the worker: %s", sdp_mpi_call_names[op->call],
			    doca_error_get_name(op->status));
	sdp_mpi_pool_free(op->fifo);
	op->fifo = -1;
	sdp_rcache_put(g.rc, op->rs);
	sdp_rcache_put(g.rc, op->rr);
	op->rs = op->rr = NULL;
	op->c->outstanding--;
	PMPI_Grequest_complete(op->req);
	if (op->user_freed)
		PMPI_Request_free(&op->req); /* the application let it go earlier */
}

/* The worker's answer to a collective (from doca_pe_progress). */
static void sdp_mpi_finished(doca_error_t result, union doca_data cookie)
{
	struct sdp_mpi_op *op = cookie.ptr;

	op->status = result;
	op->done = 1;
	sdp_mpi_op_complete(op);
}

/* Ops whose MPI request is gone and whose collective is done: freed. Teams of freed comms. */
static void sdp_mpi_reap(void)
{
	struct sdp_mpi_op **pp = &g.ops;

	while (*pp != NULL) {
		struct sdp_mpi_op *op = *pp;

		if (op->done && op->mpi_freed) {
			*pp = op->next;
			if (op->pieces != &op->one)
				free(op->pieces);
			free(op);
		} else {
			pp = &op->next;
		}
	}
	for (struct sdp_mpi_comm *c = g.comms, *n; c != NULL; c = n) {
		n = c->next;
		if (c->freed && c->outstanding == 0)
			sdp_mpi_comm_destroy(c);
	}
}

/* Progress the worker's notifications (lock held). */
static void sdp_mpi_progress(void)
{
	for (int i = 0; i < 64 && doca_pe_progress(g.pe) != 0; i++)
		;
	sdp_mpi_reap();
}

/* The live op behind an MPI request, or NULL (lock held). */
static struct sdp_mpi_op *sdp_mpi_op_find(MPI_Request req)
{
	if (req == MPI_REQUEST_NULL)
		return NULL;
	for (struct sdp_mpi_op *op = g.ops; op != NULL; op = op->next)
		if (!op->mpi_freed && op->req == req)
			return op;
	return NULL;
}

/* Generalized request callbacks. */
static int sdp_mpi_query_fn(void *extra, MPI_Status *status)
{
	struct sdp_mpi_op *op = extra;
	int err = op->status == DOCA_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;

	PMPI_Status_set_elements(status, MPI_BYTE, 0);
	PMPI_Status_set_cancelled(status, 0);
	status->MPI_SOURCE = MPI_UNDEFINED;
	status->MPI_TAG = MPI_UNDEFINED;
	status->MPI_ERROR = err;
	return err;
}

static int sdp_mpi_free_fn(void *extra)
{
	struct sdp_mpi_op *op = extra;

	sdp_mpi_lock();
	op->mpi_freed = 1;
	sdp_mpi_unlock();
	return MPI_SUCCESS;
}

static int sdp_mpi_cancel_fn(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS; /* a collective cannot be cancelled: MPI_Test_cancelled says so */
}

/* Drive MPI's own progress while waiting for ours (a peer may need it to reach the call). */
static void sdp_mpi_mpi_progress(void)
{
	int flag = 0;

	if (g.oob_comm != MPI_COMM_NULL)
		PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, g.oob_comm, &flag, MPI_STATUS_IGNORE);
}

/* Until op is done (lock held; dropped between rounds). The worker bounds every collective. */
static void sdp_mpi_wait_op(struct sdp_mpi_op *op)
{
	unsigned spins = 0;

	sdp_mpi_progress();
	while (!op->done) {
		sdp_mpi_unlock();
		sdp_mpi_mpi_progress();
		if (++spins > 1000)
			sched_yield();
		sdp_mpi_lock();
		sdp_mpi_progress();
	}
}

/* ---- starting an offloaded collective ---------------------------------------------------------- */

/* Counted, and the verdict for a call (lock held). */
static int sdp_mpi_count(int call, int why)
{
	g.count[call][why]++;
	return why;
}

/*
 * The checks every collective shares: offload active, a team for comm. SDP_MPI_OFFLOADED or
 * why not (lock held).
 */
static int sdp_mpi_gate(MPI_Comm comm, struct sdp_mpi_comm **c_p)
{
	if (!g.active)
		return SDP_MPI_PASS_OFF;
	*c_p = sdp_mpi_comm_find(comm);
	return *c_p != NULL ? SDP_MPI_OFFLOADED : SDP_MPI_PASS_COMM;
}

/*
 * An op with slen + rlen bytes of pool (send area first), waiting for earlier ops to give back
 * space when the pool is full (bounded). NULL when no space came (lock held).
 */
static struct sdp_mpi_op *sdp_mpi_op_new(int call, struct sdp_mpi_comm *c, size_t slen, size_t rlen,
					 uint8_t **pool_s)
{
	struct sdp_mpi_op *op = calloc(1, sizeof(*op));
	uint64_t deadline = sdp_mpi_now_ms() + SDP_MPI_TIMEOUT_MS;
	size_t off = 0, s_al = (slen + SDP_MPI_ALIGN - 1) & ~(size_t)(SDP_MPI_ALIGN - 1);

	if (op == NULL)
		return NULL;
	op->fifo = sdp_mpi_pool_alloc(s_al + rlen, &off);
	while (op->fifo < 0 && sdp_mpi_now_ms() < deadline) {
		sdp_mpi_unlock();
		sdp_mpi_mpi_progress();
		sched_yield();
		sdp_mpi_lock();
		sdp_mpi_progress();
		op->fifo = sdp_mpi_pool_alloc(s_al + rlen, &off);
	}
	if (op->fifo < 0) {
		sdp_mpi_log("%s: the staging pool (%zu MiB) stayed full for %d ms",
			    sdp_mpi_call_names[call], g.pool_len >> 20, SDP_MPI_TIMEOUT_MS);
		free(op);
		return NULL;
	}
	op->call = call;
	op->c = c;
	*pool_s = g.pool + off;
	op->pool_r = g.pool + off + s_al;
	op->pieces = &op->one;
	return op;
}

/*
 * Submit cmd for op (with the memh of its registered buffers, zero copy); the MPI request in
 * *request. MPI_SUCCESS or an MPI error (lock held).
 */
static int sdp_mpi_op_submit(struct sdp_mpi_op *op, struct urom_worker_coll_cmd *cmd,
			     const uint64_t *trail, MPI_Request *request)
{
	struct urom_coll_memh m = {0}, *mp = NULL;
	uint64_t deadline = sdp_mpi_now_ms() + SDP_MPI_TIMEOUT_MS;
	union doca_data cookie = {.ptr = op};
	doca_error_t st;
	int rc;

	rc = PMPI_Grequest_start(sdp_mpi_query_fn, sdp_mpi_free_fn, sdp_mpi_cancel_fn, op,
				 &op->req);
	if (rc != MPI_SUCCESS) {
		sdp_mpi_pool_free(op->fifo);
		sdp_rcache_put(g.rc, op->rs);
		sdp_rcache_put(g.rc, op->rr);
		if (op->pieces != &op->one)
			free(op->pieces);
		free(op);
		return rc;
	}
	op->c->outstanding++;
	op->next = g.ops;
	g.ops = op;
	if (op->rs != NULL || op->rr != NULL) {
		if (op->rs != NULL)
			(void)sdp_urom_mem_get_memh(sdp_rcache_region_handle(op->rs), &m.s,
						    &m.slen);
		if (op->rr != NULL)
			(void)sdp_urom_mem_get_memh(sdp_rcache_region_handle(op->rr), &m.r,
						    &m.rlen);
		mp = &m;
	}
	for (;;) {
		st = urom_coll_submit_memh(op->c->team, cmd, trail, mp, cookie, sdp_mpi_finished);
		if (st != DOCA_ERROR_AGAIN || sdp_mpi_now_ms() >= deadline)
			break;
		sdp_mpi_progress(); /* the worker has its maximum in flight: let some finish */
	}
	if (st != DOCA_SUCCESS) {
		/* every member still expects this collective: fail it here, loudly */
		op->status = st;
		op->done = 1;
		sdp_mpi_op_complete(op);
	}
	*request = op->req;
	return MPI_SUCCESS;
}

static void sdp_mpi_cmd_init(struct urom_worker_coll_cmd *cmd, uint64_t type, uint64_t count,
			     int dtype, int op, int root)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->type = type;
	cmd->count = count;
	cmd->dtype = (uint64_t)dtype;
	cmd->op = (uint64_t)(op < 0 ? 0 : op);
	cmd->root = (uint64_t)(root < 0 ? 0 : root);
}

/* Whether [a, a + alen) and [b, b + blen) share a byte. */
static int sdp_mpi_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return alen != 0 && blen != 0 && x < y + blen && y < x + alen;
}

/*
 * The op of a zero-copy collective (lock held): [sbuf, +slen) and [rbuf, +rlen) registered
 * through the cache (a length of 0: nothing to register), their memh at most memh_max bytes
 * together (what is left of the command). NULL, with nothing held, when a registration cannot
 * be had, the memh do not fit or memory is short.
 */
static struct sdp_mpi_op *sdp_mpi_zc_op(int call, struct sdp_mpi_comm *c, const void *sbuf,
					size_t slen, const void *rbuf, size_t rlen, size_t memh_max)
{
	struct sdp_rcache_region *rs = NULL, *rr = NULL;
	struct sdp_mpi_op *op = NULL;
	size_t ml = 0, total = 0;
	const void *m;

	if (slen != 0 && (rs = sdp_rcache_get(g.rc, sbuf, slen)) == NULL)
		return NULL;
	if (rlen != 0 && (rr = sdp_rcache_get(g.rc, rbuf, rlen)) == NULL)
		goto out;
	if (rs != NULL && sdp_urom_mem_get_memh(sdp_rcache_region_handle(rs), &m, &ml) == 0)
		total += ml;
	if (rr != NULL && sdp_urom_mem_get_memh(sdp_rcache_region_handle(rr), &m, &ml) == 0)
		total += ml;
	if (total <= memh_max)
		op = calloc(1, sizeof(*op));
out:
	if (op == NULL) {
		sdp_rcache_put(g.rc, rs);
		sdp_rcache_put(g.rc, rr);
		return NULL;
	}
	op->call = call;
	op->c = c;
	op->fifo = -1;
	op->pieces = &op->one;
	op->rs = rs;
	op->rr = rr;
	return op;
}

/*
 * The zero-copy form of sdp_mpi_launch's collective (lock held): the worker reads and writes
 * the user's own buffers, registered through the cache (the first use of a buffer registers
 * it, later uses find it), so nothing is copied in or out. An op with cmd pointed at the user's
 * buffers, or NULL where the staging pool must be used instead: zero copy off or below its
 * size, the buffers overlapping in a way no in-place form describes, a registration that
 * cannot be had, or memh too long for a command. Only this rank's data path depends on it:
 * the members need not agree.
 */
static struct sdp_mpi_op *sdp_mpi_zcopy(int call, struct sdp_mpi_comm *c, const void *src,
					size_t slen, void *user_r, size_t rlen, size_t out_len,
					struct urom_worker_coll_cmd *cmd)
{
	struct sdp_mpi_op *op;
	int in_place = 0;

	if (g.rc == NULL || g.zcopy_min == 0 || (slen < g.zcopy_min && rlen < g.zcopy_min) ||
	    out_len != rlen)
		return NULL;
	if (sdp_mpi_overlap(src, slen, user_r, rlen)) {
		/* MPI_IN_PLACE as the worker knows it: the input already in the receive buffer */
		const uint8_t *want = user_r;

		if (call == SDP_MPI_IALLGATHER)
			want += slen * (size_t)c->rank;
		if (call == SDP_MPI_IBCAST || src != want)
			return NULL;
		in_place = 1;
	}
	if (in_place) { /* one registration holds the input too (reduce_scatter's is larger) */
		size_t need = (size_t)((const uint8_t *)src - (const uint8_t *)user_r) + slen;

		rlen = rlen > need ? rlen : need;
	}
	op = sdp_mpi_zc_op(call, c, src, in_place ? 0 : slen, user_r, rlen,
			   SDP_MPI_ZCOPY_CMD_MAX - sizeof(*cmd));
	if (op == NULL)
		return NULL;
	cmd->sbuf_va = (uint64_t)(uintptr_t)src;
	cmd->rbuf_va = (uint64_t)(uintptr_t)user_r;
	if (in_place)
		cmd->flags |= UROM_COLL_FLAG_IN_PLACE;
	if (cmd->type == UROM_WORKER_CMD_COLL_BCAST) /* one buffer on every member */
		cmd->sbuf_va = cmd->rbuf_va = (uint64_t)(uintptr_t)(slen != 0 ? src : user_r);
	if (slen == 0 && rlen == 0)
		cmd->sbuf_va = cmd->rbuf_va = 0;
	return op;
}

/*
 * The common start of a collective (lock held; released here): an op whose send area gets
 * slen bytes from src and whose receive area of rlen bytes goes, its first out_len bytes, to
 * user_r at completion; cmd (type, count, dtype, op, root set) is pointed at the two areas
 * (BCAST: at the one area each member uses) and submitted. MPI_SUCCESS or an MPI error.
 */
static int sdp_mpi_launch(int call, struct sdp_mpi_comm *c, const void *src, size_t slen,
			  void *user_r, size_t rlen, size_t out_len,
			  struct urom_worker_coll_cmd *cmd, MPI_Request *request)
{
	struct sdp_mpi_op *op;
	uint8_t *ps;
	int rc;

	op = sdp_mpi_zcopy(call, c, src, slen, user_r, rlen, out_len, cmd);
	if (op != NULL) {
		g.zcopy[call]++;
		rc = sdp_mpi_op_submit(op, cmd, NULL, request);
		sdp_mpi_unlock();
		return rc;
	}
	op = sdp_mpi_op_new(call, c, slen, rlen, &ps);
	if (op == NULL) {
		sdp_mpi_unlock();
		return MPI_ERR_NO_MEM;
	}
	if (slen != 0)
		memcpy(ps, src, slen);
	op->user_r = user_r;
	op->one.len = out_len;
	op->npieces = out_len != 0;
	cmd->sbuf_va = (uint64_t)(uintptr_t)ps;
	cmd->rbuf_va = (uint64_t)(uintptr_t)op->pool_r;
	if (cmd->type == UROM_WORKER_CMD_COLL_BCAST) {
		if (slen != 0)
			cmd->rbuf_va = cmd->sbuf_va; /* the root: its data stays where it is */
		else
			cmd->sbuf_va = cmd->rbuf_va; /* (unused off the root) */
	}
	rc = sdp_mpi_op_submit(op, cmd, NULL, request);
	sdp_mpi_unlock();
	return rc;
}

/* The largest collective offloaded: a worker's limit, and half the pool. */
static size_t sdp_mpi_max_bytes(void)
{
	size_t half = g.pool_len / 2;

	return half < UROM_COLL_MAX_LEN ? half : (size_t)UROM_COLL_MAX_LEN;
}

/* ---- set-up and teardown ----------------------------------------------------------------------- */

static doca_error_t sdp_mpi_oob_allgather(void *s, void *r, size_t len, void *info, void **req)
{
	MPI_Request *mr = calloc(1, sizeof(*mr));

	(void)info;
	if (mr == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (len > (size_t)INT32_MAX || PMPI_Iallgather(s, (int)len, MPI_BYTE, r, (int)len, MPI_BYTE,
						       g.oob_comm, mr) != MPI_SUCCESS) {
		free(mr);
		return DOCA_ERROR_IO_FAILED;
	}
	*req = mr;
	return DOCA_SUCCESS;
}

static doca_error_t sdp_mpi_oob_test(void *req)
{
	int flag = 0;

	if (PMPI_Test(req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return DOCA_ERROR_IO_FAILED;
	return flag ? DOCA_SUCCESS : DOCA_ERROR_IN_PROGRESS;
}

static doca_error_t sdp_mpi_oob_free(void *req)
{
	free(req);
	return DOCA_SUCCESS;
}

/* Wait (bounded) for ctx to reach want. */
static doca_error_t sdp_mpi_wait_state(struct doca_ctx *ctx, enum doca_ctx_states want)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;
	uint64_t deadline = sdp_mpi_now_ms() + SDP_MPI_TIMEOUT_MS;

	while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != want &&
	       sdp_mpi_now_ms() < deadline) {
		if (doca_pe_progress(g.pe) == 0)
			sched_yield();
	}
	return st == want ? DOCA_SUCCESS : DOCA_ERROR_TIME_OUT;
}

/* Start ctx and wait for RUNNING. */
static doca_error_t sdp_mpi_start(struct doca_ctx *ctx)
{
	doca_error_t st = doca_ctx_start(ctx);

	if (st != DOCA_SUCCESS && st != DOCA_ERROR_IN_PROGRESS)
		return st;
	return sdp_mpi_wait_state(ctx, DOCA_CTX_STATE_RUNNING);
}

/* Stop ctx (bounded), unless it is idle already. */
static void sdp_mpi_stop(struct doca_ctx *ctx)
{
	enum doca_ctx_states state = DOCA_CTX_STATE_IDLE;
	doca_error_t st;

	if (doca_ctx_get_state(ctx, &state) != DOCA_SUCCESS || state == DOCA_CTX_STATE_IDLE)
		return;
	st = doca_ctx_stop(ctx);

	if (st == DOCA_SUCCESS || st == DOCA_ERROR_IN_PROGRESS)
		(void)sdp_mpi_wait_state(ctx, DOCA_CTX_STATE_IDLE);
}

#define SDP_MPI_TRY(call, what)                                                                    \
	do {                                                                                       \
		st = (call);                                                                       \
		if (st != DOCA_SUCCESS) {                                                          \
			snprintf(g.why_off, sizeof(g.why_off), "%s: %s", what,                     \
				 doca_error_get_name(st));                                         \
			return st;                                                                 \
		}                                                                                  \
	} while (0)

/* This rank's half before the domain: service, worker_coll, worker, pool. */
static doca_error_t sdp_mpi_setup_local(void)
{
	const struct doca_urom_service_plugin_info *plugins = NULL;
	const char *v;
	uint64_t plugin = 0;
	size_t n = 0, mb = SDP_MPI_DEFAULT_POOL_MB;
	doca_error_t st;

	v = getenv("SOFTDPU_MPI_POOL_MB");
	if (v != NULL && *v != '\0') {
		char *end = NULL;
		unsigned long long x = strtoull(v, &end, 10);

		if (end == v || *end != '\0' || x < 1 || x > (1ull << 20)) {
			snprintf(g.why_off, sizeof(g.why_off),
				 "SOFTDPU_MPI_POOL_MB=%s is not a size in MiB (1 .. 1048576)", v);
			return DOCA_ERROR_INVALID_VALUE;
		}
		mb = (size_t)x;
	}
	g.pool_len = mb << 20;
	g.pool = mmap(NULL, g.pool_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (g.pool == MAP_FAILED) {
		g.pool = NULL;
		snprintf(g.why_off, sizeof(g.why_off), "no %zu MiB of address space for the pool",
			 mb);
		return DOCA_ERROR_NO_MEMORY;
	}
	SDP_MPI_TRY(doca_pe_create(&g.pe), "doca_pe_create");
	SDP_MPI_TRY(doca_urom_service_create(&g.svc), "doca_urom_service_create");
	SDP_MPI_TRY(doca_pe_connect_ctx(g.pe, doca_urom_service_as_ctx(g.svc)),
		    "doca_pe_connect_ctx(service)");
	SDP_MPI_TRY(doca_ctx_start(doca_urom_service_as_ctx(g.svc)),
		    "no softdpu service answered (doca_ctx_start of the service context)");
	SDP_MPI_TRY(doca_urom_service_get_plugins_list(g.svc, &plugins, &n), "plugin list");
	for (size_t i = 0; i < n; i++)
		if (strcmp(plugins[i].plugin_name, "worker_coll") == 0) {
			plugin = plugins[i].id;
			SDP_MPI_TRY(urom_coll_init(plugins[i].id, plugins[i].version),
				    "worker_coll's version");
		}
	if (plugin == 0) {
		snprintf(g.why_off, sizeof(g.why_off),
			 "the softdpu service has no worker_coll plugin");
		return DOCA_ERROR_NOT_FOUND;
	}
	SDP_MPI_TRY(doca_urom_worker_create(&g.worker), "doca_urom_worker_create");
	SDP_MPI_TRY(doca_urom_worker_set_service(g.worker, g.svc), "worker service");
	SDP_MPI_TRY(doca_pe_connect_ctx(g.pe, doca_urom_worker_as_ctx(g.worker)), "worker pe");
	SDP_MPI_TRY(doca_urom_worker_set_id(g.worker, DOCA_UROM_WORKER_ID_ANY), "worker id");
	SDP_MPI_TRY(doca_urom_worker_set_max_inflight_tasks(g.worker, 256), "worker inflight");
	SDP_MPI_TRY(doca_urom_worker_set_plugins(g.worker, plugin), "worker plugins");
	v = getenv("SOFTDPU_MPI_WORKER_CPUS");
	if (v != NULL && *v != '\0') {
		int cpus[256], ncpu = 0;
		const char *p = v;
		doca_cpu_set_t set;

		while (*p != '\0' && ncpu < 256) {
			char *end = NULL;
			long cpu = strtol(p, &end, 10);

			if (end == p || cpu < 0 || cpu >= 1024 || (*end != ',' && *end != '\0')) {
				snprintf(g.why_off, sizeof(g.why_off),
					 "SOFTDPU_MPI_WORKER_CPUS=%s is not a list of CPUs", v);
				return DOCA_ERROR_INVALID_VALUE;
			}
			cpus[ncpu++] = (int)cpu;
			p = *end == ',' ? end + 1 : end;
		}
		DOCA_CPU_ZERO(&set);
		DOCA_CPU_SET(cpus[g.rank % ncpu], &set);
		SDP_MPI_TRY(doca_urom_worker_set_cpuset(g.worker, set), "worker cpuset");
	}
	SDP_MPI_TRY(sdp_mpi_start(doca_urom_worker_as_ctx(g.worker)), "the worker's start");
	return DOCA_SUCCESS;
}

/* The domain over the world (every rank calls it). */
static doca_error_t sdp_mpi_setup_domain(void)
{
	struct doca_urom_domain_oob_coll oob = {.allgather = sdp_mpi_oob_allgather,
						.req_test = sdp_mpi_oob_test,
						.req_free = sdp_mpi_oob_free,
						.coll_info = NULL,
						.n_oob_indexes = (uint32_t)g.size,
						.oob_index = (uint32_t)g.rank};
	uint64_t id = (uint64_t)g.rank;
	doca_error_t st;

	SDP_MPI_TRY(doca_urom_domain_create(&g.dom), "doca_urom_domain_create");
	SDP_MPI_TRY(doca_pe_connect_ctx(g.pe, doca_urom_domain_as_ctx(g.dom)), "domain pe");
	SDP_MPI_TRY(doca_urom_domain_set_oob(g.dom, &oob), "domain oob");
	SDP_MPI_TRY(doca_urom_domain_set_workers(g.dom, &id, &g.worker, 1), "domain workers");
	SDP_MPI_TRY(doca_urom_domain_set_buffers_count(g.dom, 1), "domain buffers");
	SDP_MPI_TRY(sdp_urom_domain_export_buffer(g.dom, g.pool, g.pool_len, &g.mem),
		    "exporting the staging pool");
	SDP_MPI_TRY(sdp_mpi_start(doca_urom_domain_as_ctx(g.dom)), "the domain's start");
	return DOCA_SUCCESS;
}

/* Everything of this rank's set-up taken down again (any state; lock held). */
static void sdp_mpi_teardown(void)
{
	if (g.dom != NULL) {
		sdp_mpi_stop(doca_urom_domain_as_ctx(g.dom));
		(void)doca_urom_domain_destroy(g.dom);
		g.dom = NULL;
	}
	if (g.mem != NULL) {
		(void)sdp_urom_mem_unexport(g.mem);
		g.mem = NULL;
	}
	/* the user buffers' registrations: no worker reaches them once the domain is gone */
	sdp_rcache_destroy(g.rc);
	g.rc = NULL;
	if (g.worker != NULL) {
		sdp_mpi_stop(doca_urom_worker_as_ctx(g.worker));
		(void)doca_urom_worker_destroy(g.worker);
		g.worker = NULL;
	}
	if (g.svc != NULL) {
		sdp_mpi_stop(doca_urom_service_as_ctx(g.svc));
		(void)doca_urom_service_destroy(g.svc);
		g.svc = NULL;
	}
	if (g.pe != NULL) {
		(void)doca_pe_destroy(g.pe);
		g.pe = NULL;
	}
	if (g.pool != NULL) {
		munmap(g.pool, g.pool_len);
		g.pool = NULL;
	}
}

/* All ranks agree on ok (MIN over the OOB communicator). */
static int sdp_mpi_agree(int ok)
{
	int all = 0;

	if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, g.oob_comm) != MPI_SUCCESS)
		return 0;
	return all;
}

/* Registrations of user buffers (zero copy), where SOFTDPU_MPI_ZCOPY_MIN allows them. */
static int sdp_mpi_rc_reg(void *arg, void *addr, size_t len, void **handle)
{
	struct sdp_urom_mem *mem = NULL;

	(void)arg;
	if (sdp_urom_mem_export(addr, len, &mem) != DOCA_SUCCESS)
		return -1;
	*handle = mem;
	return 0;
}

static void sdp_mpi_rc_dereg(void *arg, void *handle)
{
	(void)arg;
	(void)sdp_urom_mem_unexport(handle);
}

static void sdp_mpi_zcopy_setup(void)
{
	static const struct sdp_rcache_ops ops = {sdp_mpi_rc_reg, sdp_mpi_rc_dereg};
	const char *v = getenv("SOFTDPU_MPI_ZCOPY_MIN");
	char why[256];

	g.zcopy_min = SDP_MPI_DEFAULT_ZCOPY_MIN;
	if (v != NULL && *v != '\0') {
		char *end = NULL;
		unsigned long long x = strtoull(v, &end, 10);

		if (end == v || *end != '\0' || x > UROM_COLL_MAX_LEN) {
			sdp_mpi_log("SOFTDPU_MPI_ZCOPY_MIN=%s is not a byte count (0 .. %llu): "
				    "staging everything",
				    v, (unsigned long long)UROM_COLL_MAX_LEN);
			x = 0;
		}
		g.zcopy_min = (size_t)x;
	}
	if (g.zcopy_min == 0)
		return;
	if (sdp_rcache_create(&ops, NULL, SDP_MPI_RCACHE_MAX, &g.rc, why, sizeof(why)) != 0) {
		g.rc = NULL;
		sdp_mpi_debug("zero copy off, every collective is staged: %s", why);
	}
}

static void sdp_mpi_init_offload(void)
{
	const char *v = getenv("SOFTDPU_MPI");
	int ok;

	g.verbose = getenv("SOFTDPU_MPI_VERBOSE") != NULL && *getenv("SOFTDPU_MPI_VERBOSE") != '0';
	g.stats = getenv("SOFTDPU_MPI_STATS") != NULL && *getenv("SOFTDPU_MPI_STATS") != '0';
	PMPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &g.size);
	if (PMPI_Comm_dup(MPI_COMM_WORLD, &g.oob_comm) != MPI_SUCCESS) {
		g.oob_comm = MPI_COMM_NULL;
		return;
	}
	if (v != NULL && strcmp(v, "0") == 0) {
		snprintf(g.why_off, sizeof(g.why_off), "SOFTDPU_MPI=0");
		ok = 0;
	} else if (g.size > UROM_COLL_MAX_MEMBERS) {
		snprintf(g.why_off, sizeof(g.why_off), "%d ranks, a team holds at most %d", g.size,
			 UROM_COLL_MAX_MEMBERS);
		ok = 0;
	} else {
		ok = sdp_mpi_setup_local() == DOCA_SUCCESS;
		if (!ok)
			sdp_mpi_debug("%s", g.why_off);
	}
	/* the domain only when every rank has its worker: else nobody waits in its OOB */
	if (sdp_mpi_agree(ok)) {
		ok = sdp_mpi_setup_domain() == DOCA_SUCCESS;
		if (!ok)
			sdp_mpi_log("%s", g.why_off);
		if (sdp_mpi_agree(ok)) {
			g.active = 1;
			sdp_mpi_comm_attach(MPI_COMM_WORLD, SDP_MPI_WORLD_TAG);
			if (sdp_mpi_comm_find(MPI_COMM_WORLD) == NULL) {
				g.active = 0;
				snprintf(g.why_off, sizeof(g.why_off),
					 "the team of MPI_COMM_WORLD could not be made");
			}
		} else if (ok) {
			snprintf(g.why_off, sizeof(g.why_off),
				 "another rank's domain start failed");
		}
	} else if (ok) {
		snprintf(g.why_off, sizeof(g.why_off), "another rank found no softdpu service");
	}
	if (!g.active) {
		sdp_mpi_teardown();
		if (g.rank == 0)
			sdp_mpi_log("collectives pass through to the MPI library: %s",
				    g.why_off[0] ? g.why_off : "offload not available");
	} else {
		sdp_mpi_zcopy_setup();
		sdp_mpi_debug("offload active: %d ranks, pool %zu MiB, zero copy %s", g.size,
			      g.pool_len >> 20, g.rc != NULL ? "on" : "off");
	}
}

static void sdp_mpi_print_stats(void)
{
	for (int c = 0; c < SDP_MPI_NCALLS; c++) {
		uint64_t total = 0;
		char line[512];
		int len;

		for (int w = 0; w < SDP_MPI_NWHY; w++)
			total += g.count[c][w];
		if (total == 0)
			continue;
		len = snprintf(line, sizeof(line),
			       "softdpu_mpi_stats rank=%d call=%s offloaded=%" PRIu64
			       " passthrough=%" PRIu64,
			       g.rank, sdp_mpi_call_names[c], g.count[c][SDP_MPI_OFFLOADED],
			       total - g.count[c][SDP_MPI_OFFLOADED]);
		for (int w = 1; w < SDP_MPI_NWHY && len < (int)sizeof(line); w++)
			if (g.count[c][w] != 0)
				len += snprintf(line + len, sizeof(line) - (size_t)len,
						" %s=%" PRIu64, sdp_mpi_why_names[w],
						g.count[c][w]);
		if (g.zcopy[c] != 0 && len < (int)sizeof(line))
			snprintf(line + len, sizeof(line) - (size_t)len, " zero_copy=%" PRIu64,
				 g.zcopy[c]);
		fprintf(stderr, "%s\n", line);
	}
	if (g.rc != NULL) {
		struct sdp_rcache_stats st;

		sdp_rcache_stats(g.rc, &st);
		fprintf(stderr,
			"softdpu_mpi_rcache rank=%d hits=%" PRIu64 " misses=%" PRIu64
			" invalidated=%" PRIu64 " evicted=%" PRIu64 " failed=%" PRIu64
			" overflows=%" PRIu64 " regions=%" PRIu64 "\n",
			g.rank, st.hits, st.misses, st.invalidated, st.evicted, st.failed,
			st.overflows, st.regions);
	}
}

static void sdp_mpi_finalize_offload(void)
{
	uint64_t deadline = sdp_mpi_now_ms() + SDP_MPI_TIMEOUT_MS;

	sdp_mpi_lock();
	if (g.stats)
		sdp_mpi_print_stats();
	if (g.active) {
		/* what is still running finishes (bounded); requests never waited for included */
		for (;;) {
			int busy = 0;

			sdp_mpi_progress();
			for (struct sdp_mpi_op *op = g.ops; op != NULL; op = op->next)
				busy |= !op->done;
			if (!busy || sdp_mpi_now_ms() >= deadline)
				break;
			sdp_mpi_unlock();
			sdp_mpi_mpi_progress();
			sched_yield();
			sdp_mpi_lock();
		}
		/* teams: every member destroys its own; MPI_COMM_WORLD's last */
		PMPI_Barrier(g.oob_comm);
		while (g.comms != NULL) {
			struct sdp_mpi_comm *last = g.comms;

			while (last->next != NULL)
				last = last->next;
			sdp_mpi_comm_destroy(g.comms != last ? g.comms : last);
		}
		/* no worker reads any pool once every team is gone */
		PMPI_Barrier(g.oob_comm);
		g.active = 0;
	}
	sdp_mpi_teardown();
	for (struct sdp_mpi_op *op = g.ops, *n; op != NULL; op = n) {
		n = op->next;
		if (op->pieces != &op->one)
			free(op->pieces);
		free(op);
	}
	g.ops = NULL;
	if (g.oob_comm != MPI_COMM_NULL)
		PMPI_Comm_free(&g.oob_comm);
	sdp_mpi_unlock();
}

/* ---- MPI entry points: start and end ------------------------------------------------------------ */

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);

	if (rc == MPI_SUCCESS)
		sdp_mpi_init_offload();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		sdp_mpi_init_offload();
	return rc;
}

int MPI_Finalize(void)
{
	sdp_mpi_finalize_offload();
	return PMPI_Finalize();
}

/* ---- MPI_Pcontrol: the profiling library's own hook ---------------------------------------------- */

/*
 * MPI_Pcontrol (MPI 4.0 §15.2) is how a program talks to the profiling library it runs under.
 * Level SOFTDPU_MPI_PCONTROL_RCACHE (0x53445001, "SD" 1) answers with this rank's registration
 * cache counters in a uint64_t[8] passed as the next argument: hits, misses, invalidated,
 * evicted, failed, overflows, regions cached, collectives run zero copy (all zeros when zero
 * copy is off; an MPI without softdpu leaves the array as it was). Every other level goes to
 * the MPI library. docs/mpi.md, "Zero copy".
 */
#define SDP_MPI_PCONTROL_RCACHE 0x53445001

int MPI_Pcontrol(const int level, ...)
{
	if (level == SDP_MPI_PCONTROL_RCACHE) {
		struct sdp_rcache_stats st;
		uint64_t *out, zc = 0;
		va_list ap;

		va_start(ap, level);
		out = va_arg(ap, uint64_t *);
		va_end(ap);
		if (out == NULL)
			return MPI_ERR_ARG;
		sdp_mpi_lock();
		sdp_rcache_drain(g.rc);
		sdp_rcache_stats(g.rc, &st);
		for (int c = 0; c < SDP_MPI_NCALLS; c++)
			zc += g.zcopy[c];
		sdp_mpi_unlock();
		out[0] = st.hits;
		out[1] = st.misses;
		out[2] = st.invalidated;
		out[3] = st.evicted;
		out[4] = st.failed;
		out[5] = st.overflows;
		out[6] = st.regions;
		out[7] = zc;
		return MPI_SUCCESS;
	}
	return PMPI_Pcontrol(level);
}

/* ---- communicators --------------------------------------------------------------------------- */

/* After parent made newcomm (collectively): a team for it too, where parent has one. */
static void sdp_mpi_comm_child(MPI_Comm parent, MPI_Comm newcomm, int color, int any)
{
	struct sdp_mpi_comm *p;
	uint64_t tag = 0;

	sdp_mpi_lock();
	p = g.active ? sdp_mpi_comm_find(parent) : NULL;
	if (p != NULL)
		tag = sdp_mpi_child_tag(p, color);
	sdp_mpi_unlock();
	/* every member of parent took a tag above; those with a new communicator go on */
	if (p == NULL || !any || newcomm == MPI_COMM_NULL)
		return;
	sdp_mpi_lock();
	sdp_mpi_comm_attach(newcomm, tag);
	sdp_mpi_unlock();
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	int rc = PMPI_Comm_dup(comm, newcomm);

	if (rc == MPI_SUCCESS)
		sdp_mpi_comm_child(comm, *newcomm, 0, 1);
	return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	int rc = PMPI_Comm_split(comm, color, key, newcomm);

	if (rc == MPI_SUCCESS)
		sdp_mpi_comm_child(comm, *newcomm, color, color != MPI_UNDEFINED);
	return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	int rc = PMPI_Comm_split_type(comm, split_type, key, info, newcomm);

	if (rc == MPI_SUCCESS)
		sdp_mpi_comm_child(comm, *newcomm, split_type, split_type != MPI_UNDEFINED);
	return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
	struct sdp_mpi_comm *c;

	if (comm != NULL) {
		sdp_mpi_lock();
		c = g.active ? sdp_mpi_comm_find(*comm) : NULL;
		if (c != NULL) {
			/* its collectives finish first (MPI's rule); then its team goes */
			c->freed = 1;
			sdp_mpi_reap();
		}
		sdp_mpi_unlock();
	}
	return PMPI_Comm_free(comm);
}

/*
 * The checks of the block collectives (alltoall, allgather: one block per member): the same
 * contiguous block size on both sides (MPI_IN_PLACE: the receive side's), and room for size
 * blocks. SDP_MPI_OFFLOADED with *blk, or why not.
 */
static int sdp_mpi_block_gate(int why, const struct sdp_mpi_comm *c, const void *sendbuf,
			      int sendcount, MPI_Datatype sendtype, int recvcount,
			      MPI_Datatype recvtype, size_t *blk)
{
	size_t rblk, es, res;

	if (why != SDP_MPI_OFFLOADED)
		return why;
	if (sendbuf == MPI_IN_PLACE) {
		sendcount = recvcount;
		sendtype = recvtype;
	}
	if (!sdp_mpi_contig(sendtype, sendcount, blk, &es) ||
	    !sdp_mpi_contig(recvtype, recvcount, &rblk, &res) || *blk != rblk)
		return SDP_MPI_PASS_DTYPE;
	if (*blk * (size_t)c->size > sdp_mpi_max_bytes())
		return SDP_MPI_PASS_SIZE;
	return SDP_MPI_OFFLOADED;
}

/* ---- the offloaded collectives ------------------------------------------------------------------ */

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	struct urom_worker_coll_cmd cmd;
	struct sdp_mpi_comm *c = NULL;
	size_t blk = 0;
	int why;

	sdp_mpi_lock();
	why = sdp_mpi_gate(comm, &c); /* (sets c: a statement of its own) */
	why = sdp_mpi_block_gate(why, c, sendbuf, sendcount, sendtype, recvcount, recvtype, &blk);
	if (sdp_mpi_count(SDP_MPI_IALLTOALL, why) != SDP_MPI_OFFLOADED) {
		sdp_mpi_unlock();
		return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
				      comm, request);
	}
	sdp_mpi_cmd_init(&cmd, UROM_WORKER_CMD_COLL_ALLTOALL, blk, UROM_COLL_UINT8, -1, -1);
	return sdp_mpi_launch(SDP_MPI_IALLTOALL, c, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
			      blk * (size_t)c->size, recvbuf, blk * (size_t)c->size,
			      blk * (size_t)c->size, &cmd, request);
}

/*
 * The zero-copy form of Ialltoallv (lock held): the workers read the send blocks and write the
 * receive blocks where the application's displacements put them (the trailer carries them in
 * bytes), both buffers registered through the cache over their extents (the end of the last
 * block). NULL where the pool must be used: zero copy off or below its size on both sides, the
 * buffers overlapping (other than MPI_IN_PLACE, whose send blocks are in the receive buffer),
 * an extent past what a worker collective may span, no registration, or a command that would
 * not fit. trail (4 * size values) and cmd are filled for the submission.
 */
static struct sdp_mpi_op *sdp_mpi_zcopy_v(struct sdp_mpi_comm *c, const void *sendbuf,
					  const int sendcounts[], const int sdispls[],
					  void *recvbuf, const int recvcounts[],
					  const int rdispls[], size_t es, size_t sbytes,
					  size_t rbytes, uint64_t *trail,
					  struct urom_worker_coll_cmd *cmd)
{
	int n = c->size, in_place = sendbuf == MPI_IN_PLACE;
	size_t send_end = 0, recv_end = 0;
	struct sdp_mpi_op *op;

	if (g.rc == NULL || g.zcopy_min == 0 || (sbytes < g.zcopy_min && rbytes < g.zcopy_min))
		return NULL;
	for (int i = 0; i < n; i++) {
		size_t se = ((size_t)sdispls[i] + (size_t)sendcounts[i]) * es;
		size_t re = ((size_t)rdispls[i] + (size_t)recvcounts[i]) * es;

		if (sendcounts[i] != 0 && se > send_end)
			send_end = se;
		if (recvcounts[i] != 0 && re > recv_end)
			recv_end = re;
	}
	if (send_end > UROM_COLL_MAX_LEN || recv_end > UROM_COLL_MAX_LEN ||
	    n > SDP_MPI_ZCOPY_V_RANKS)
		return NULL;
	if (in_place) {
		recv_end = recv_end > send_end ? recv_end : send_end;
		send_end = 0;
	} else if (sdp_mpi_overlap(sendbuf, send_end, recvbuf, recv_end)) {
		return NULL;
	}
	/* the trailer takes 32 bytes a rank, the memh what is left of the command */
	op = sdp_mpi_zc_op(SDP_MPI_IALLTOALLV, c, sendbuf, send_end, recvbuf, recv_end,
			   SDP_MPI_ZCOPY_CMD_MAX - sizeof(*cmd) +
				   4 * sizeof(uint64_t) * (size_t)(SDP_MPI_ZCOPY_V_RANKS - n));
	if (op == NULL)
		return NULL;
	for (int i = 0; i < n; i++) {
		trail[i] = (uint64_t)sendcounts[i] * es;
		trail[n + i] = (uint64_t)sdispls[i] * es;
		trail[2 * n + i] = (uint64_t)recvcounts[i] * es;
		trail[3 * n + i] = (uint64_t)rdispls[i] * es;
	}
	sdp_mpi_cmd_init(cmd, UROM_WORKER_CMD_COLL_ALLTOALLV, 0, UROM_COLL_UINT8, -1, -1);
	cmd->rbuf_va = (uint64_t)(uintptr_t)recvbuf;
	cmd->sbuf_va = in_place ? cmd->rbuf_va : (uint64_t)(uintptr_t)sendbuf;
	if (in_place)
		cmd->flags |= UROM_COLL_FLAG_IN_PLACE;
	cmd->ntrail = 4 * (uint64_t)n;
	return op;
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
		   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	struct urom_worker_coll_cmd cmd;
	struct sdp_mpi_comm *c = NULL;
	struct sdp_mpi_op *op;
	uint64_t *trail = NULL;
	size_t es = 0, res = 0, stot = 0, rtot = 0, b;
	const uint8_t *src;
	uint8_t *ps;
	int why, rc, n;

	sdp_mpi_lock();
	why = sdp_mpi_gate(comm, &c);
	if (why == SDP_MPI_OFFLOADED && sendbuf == MPI_IN_PLACE) {
		sendcounts = recvcounts;
		sdispls = rdispls;
		sendtype = recvtype;
	}
	if (why == SDP_MPI_OFFLOADED && (!sdp_mpi_contig(sendtype, 1, &b, &es) ||
					 !sdp_mpi_contig(recvtype, 1, &b, &res) || es != res))
		why = SDP_MPI_PASS_DTYPE;
	if (why == SDP_MPI_OFFLOADED) {
		n = c->size;
		for (int i = 0; i < n; i++) {
			if (sendcounts[i] < 0 || recvcounts[i] < 0 || sdispls[i] < 0 ||
			    rdispls[i] < 0)
				why = SDP_MPI_PASS_ARGS;
			else {
				stot += (size_t)sendcounts[i];
				rtot += (size_t)recvcounts[i];
			}
		}
		/* (per-rank sizes: docs/mpi.md "Limits" says what happens past the bound) */
		if (why == SDP_MPI_OFFLOADED &&
		    (stot * es > sdp_mpi_max_bytes() || rtot * es > sdp_mpi_max_bytes()))
			why = SDP_MPI_PASS_SIZE;
	}
	if (why == SDP_MPI_OFFLOADED) {
		trail = malloc(4 * sizeof(uint64_t) * (size_t)c->size);
		if (trail == NULL)
			why = SDP_MPI_PASS_ARGS;
	}
	if (sdp_mpi_count(SDP_MPI_IALLTOALLV, why) != SDP_MPI_OFFLOADED) {
		sdp_mpi_unlock();
		return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
				       rdispls, recvtype, comm, request);
	}
	n = c->size;
	op = sdp_mpi_zcopy_v(c, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, es,
			     stot * es, rtot * es, trail, &cmd);
	if (op != NULL) {
		g.zcopy[SDP_MPI_IALLTOALLV]++;
		rc = sdp_mpi_op_submit(op, &cmd, trail, request);
		free(trail);
		sdp_mpi_unlock();
		return rc;
	}
	op = sdp_mpi_op_new(SDP_MPI_IALLTOALLV, c, stot * es, rtot * es, &ps);
	if (op != NULL) {
		op->pieces = calloc((size_t)n, sizeof(*op->pieces));
		if (op->pieces == NULL) {
			sdp_mpi_pool_free(op->fifo);
			free(op);
			op = NULL;
		}
	}
	if (op == NULL) {
		free(trail);
		sdp_mpi_unlock();
		return MPI_ERR_NO_MEM;
	}
	/* the pool's blocks are packed: displacements are prefix sums (elements = bytes) */
	src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
	stot = rtot = 0;
	for (int i = 0; i < n; i++) {
		size_t sl = (size_t)sendcounts[i] * es, rl = (size_t)recvcounts[i] * es;

		memcpy(ps + stot, src + (size_t)sdispls[i] * es, sl);
		trail[i] = sl;
		trail[n + i] = stot;
		trail[2 * n + i] = rl;
		trail[3 * n + i] = rtot;
		op->pieces[i].pool_off = rtot;
		op->pieces[i].user_off = (size_t)rdispls[i] * es;
		op->pieces[i].len = rl;
		stot += sl;
		rtot += rl;
	}
	op->npieces = n;
	op->user_r = recvbuf;
	sdp_mpi_cmd_init(&cmd, UROM_WORKER_CMD_COLL_ALLTOALLV, 0, UROM_COLL_UINT8, -1, -1);
	cmd.sbuf_va = (uint64_t)(uintptr_t)ps;
	cmd.rbuf_va = (uint64_t)(uintptr_t)op->pool_r;
	cmd.ntrail = 4 * (uint64_t)n;
	rc = sdp_mpi_op_submit(op, &cmd, trail, request);
	free(trail);
	sdp_mpi_unlock();
	return rc;
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	struct urom_worker_coll_cmd cmd;
	struct sdp_mpi_comm *c = NULL;
	size_t blk = 0;
	int why;

	sdp_mpi_lock();
	why = sdp_mpi_gate(comm, &c); /* (sets c: a statement of its own) */
	why = sdp_mpi_block_gate(why, c, sendbuf, sendcount, sendtype, recvcount, recvtype, &blk);
	if (sdp_mpi_count(SDP_MPI_IALLGATHER, why) != SDP_MPI_OFFLOADED) {
		sdp_mpi_unlock();
		return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
				       comm, request);
	}
	sdp_mpi_cmd_init(&cmd, UROM_WORKER_CMD_COLL_ALLGATHER, blk, UROM_COLL_UINT8, -1, -1);
	return sdp_mpi_launch(
		SDP_MPI_IALLGATHER, c,
		sendbuf == MPI_IN_PLACE ? (const uint8_t *)recvbuf + blk * (size_t)c->rank :
					  (const uint8_t *)sendbuf,
		blk, recvbuf, blk * (size_t)c->size, blk * (size_t)c->size, &cmd, request);
}

/* The reduction checks: type and op, in elements; why. */
static int sdp_mpi_red_gate(int why, MPI_Datatype dt, MPI_Op mop, int count, int *t, int *o,
			    size_t *bytes)
{
	size_t es;

	if (why != SDP_MPI_OFFLOADED)
		return why;
	if (count < 0)
		return SDP_MPI_PASS_ARGS;
	*t = sdp_mpi_dtype(dt);
	if (*t < 0 || !sdp_mpi_contig(dt, count, bytes, &es))
		return SDP_MPI_PASS_DTYPE;
	*o = sdp_mpi_op(mop, *t, dt);
	if (*o < 0)
		return SDP_MPI_PASS_OP;
	return SDP_MPI_OFFLOADED;
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op_,
		   MPI_Comm comm, MPI_Request *request)
{
	struct urom_worker_coll_cmd cmd;
	struct sdp_mpi_comm *c = NULL;
	size_t bytes = 0;
	int why, t = 0, o = 0;

	sdp_mpi_lock();
	why = sdp_mpi_red_gate(sdp_mpi_gate(comm, &c), datatype, op_, count, &t, &o, &bytes);
	if (why == SDP_MPI_OFFLOADED && bytes > sdp_mpi_max_bytes())
		why = SDP_MPI_PASS_SIZE;
	if (sdp_mpi_count(SDP_MPI_IALLREDUCE, why) != SDP_MPI_OFFLOADED) {
		sdp_mpi_unlock();
		return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op_, comm, request);
	}
	sdp_mpi_cmd_init(&cmd, UROM_WORKER_CMD_COLL_ALLREDUCE, (uint64_t)count, t, o, -1);
	return sdp_mpi_launch(SDP_MPI_IALLREDUCE, c, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
			      bytes, recvbuf, bytes, bytes, &cmd, request);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op_,
		int root, MPI_Comm comm, MPI_Request *request)
{
	struct urom_worker_coll_cmd cmd;
	struct sdp_mpi_comm *c = NULL;
	size_t bytes = 0;
	int why, t = 0, o = 0, me;

	sdp_mpi_lock();
	why = sdp_mpi_red_gate(sdp_mpi_gate(comm, &c), datatype, op_, count, &t, &o, &bytes);
	if (why == SDP_MPI_OFFLOADED && (root < 0 || root >= c->size))
		why = SDP_MPI_PASS_ARGS;
	if (why == SDP_MPI_OFFLOADED && bytes > sdp_mpi_max_bytes())
		why = SDP_MPI_PASS_SIZE;
	if (sdp_mpi_count(SDP_MPI_IREDUCE, why) != SDP_MPI_OFFLOADED) {
		sdp_mpi_unlock();
		return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op_, root, comm, request);
	}
	me = c->rank == root;
	sdp_mpi_cmd_init(&cmd, UROM_WORKER_CMD_COLL_REDUCE, (uint64_t)count, t, o, root);
	return sdp_mpi_launch(SDP_MPI_IREDUCE, c, me && sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
			      bytes, recvbuf, me ? bytes : 0, me ? bytes : 0, &cmd, request);
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
			      MPI_Datatype datatype, MPI_Op op_, MPI_Comm comm,
			      MPI_Request *request)
{
	struct urom_worker_coll_cmd cmd;
	struct sdp_mpi_comm *c = NULL;
	size_t bytes = 0;
	int why, t = 0, o = 0;

	sdp_mpi_lock();
	why = sdp_mpi_red_gate(sdp_mpi_gate(comm, &c), datatype, op_, recvcount, &t, &o, &bytes);
	if (why == SDP_MPI_OFFLOADED && bytes * (size_t)c->size > sdp_mpi_max_bytes())
		why = SDP_MPI_PASS_SIZE;
	if (sdp_mpi_count(SDP_MPI_IREDUCE_SCATTER_BLOCK, why) != SDP_MPI_OFFLOADED) {
		sdp_mpi_unlock();
		return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op_, comm,
						  request);
	}
	sdp_mpi_cmd_init(&cmd, UROM_WORKER_CMD_COLL_REDUCE_SCATTER, (uint64_t)recvcount, t, o, -1);
	return sdp_mpi_launch(SDP_MPI_IREDUCE_SCATTER_BLOCK, c,
			      sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, bytes * (size_t)c->size,
			      recvbuf, bytes, bytes, &cmd, request);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
	       MPI_Request *request)
{
	struct urom_worker_coll_cmd cmd;
	struct sdp_mpi_comm *c = NULL;
	size_t bytes = 0, es;
	int why, me;

	sdp_mpi_lock();
	why = sdp_mpi_gate(comm, &c);
	if (why == SDP_MPI_OFFLOADED && !sdp_mpi_contig(datatype, count, &bytes, &es))
		why = count < 0 ? SDP_MPI_PASS_ARGS : SDP_MPI_PASS_DTYPE;
	if (why == SDP_MPI_OFFLOADED && (root < 0 || root >= c->size))
		why = SDP_MPI_PASS_ARGS;
	if (why == SDP_MPI_OFFLOADED && bytes > sdp_mpi_max_bytes())
		why = SDP_MPI_PASS_SIZE;
	if (sdp_mpi_count(SDP_MPI_IBCAST, why) != SDP_MPI_OFFLOADED) {
		sdp_mpi_unlock();
		return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
	}
	me = c->rank == root;
	/* the root's data in the send area; the others receive into theirs (one area each) */
	sdp_mpi_cmd_init(&cmd, UROM_WORKER_CMD_COLL_BCAST, bytes, UROM_COLL_UINT8, -1, root);
	return sdp_mpi_launch(SDP_MPI_IBCAST, c, buffer, me ? bytes : 0, buffer, me ? 0 : bytes,
			      me ? 0 : bytes, &cmd, request);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	struct urom_worker_coll_cmd cmd;
	struct sdp_mpi_comm *c = NULL;
	int why;

	sdp_mpi_lock();
	why = sdp_mpi_gate(comm, &c);
	if (sdp_mpi_count(SDP_MPI_IBARRIER, why) != SDP_MPI_OFFLOADED) {
		sdp_mpi_unlock();
		return PMPI_Ibarrier(comm, request);
	}
	sdp_mpi_cmd_init(&cmd, UROM_WORKER_CMD_COLL_BARRIER, 0, UROM_COLL_UINT8, -1, -1);
	return sdp_mpi_launch(SDP_MPI_IBARRIER, c, NULL, 0, NULL, 0, 0, &cmd, request);
}

/* ---- completion: the Wait and Test families ------------------------------------------------------ */

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	struct sdp_mpi_op *op;

	if (request != NULL && g.active) {
		sdp_mpi_lock();
		op = sdp_mpi_op_find(*request);
		if (op != NULL)
			sdp_mpi_wait_op(op);
		sdp_mpi_unlock();
	}
	return PMPI_Wait(request, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	if (requests != NULL && g.active && count > 0) {
		sdp_mpi_lock();
		for (int i = 0; i < count; i++) {
			struct sdp_mpi_op *op = sdp_mpi_op_find(requests[i]);

			if (op != NULL)
				sdp_mpi_wait_op(op);
		}
		sdp_mpi_unlock();
	}
	return PMPI_Waitall(count, requests, statuses);
}

/* Whether any of the requests is one of ours (lock held). */
static int sdp_mpi_any_ours(int count, const MPI_Request requests[])
{
	for (int i = 0; i < count; i++)
		if (sdp_mpi_op_find(requests[i]) != NULL)
			return 1;
	return 0;
}

static void sdp_mpi_progress_locked(void)
{
	if (!g.active)
		return;
	sdp_mpi_lock();
	sdp_mpi_progress();
	sdp_mpi_unlock();
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	unsigned spins = 0;
	int ours, flag = 0, rc;

	if (!g.active || requests == NULL || count <= 0)
		return PMPI_Waitany(count, requests, index, status);
	sdp_mpi_lock();
	ours = sdp_mpi_any_ours(count, requests);
	sdp_mpi_unlock();
	if (!ours)
		return PMPI_Waitany(count, requests, index, status);
	/* ours complete only through progress here: test until one of them all is done */
	for (;;) {
		sdp_mpi_progress_locked();
		rc = PMPI_Testany(count, requests, index, &flag, status);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		if (++spins > 1000)
			sched_yield();
	}
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		 MPI_Status statuses[])
{
	unsigned spins = 0;
	int ours, rc;

	if (!g.active || requests == NULL || incount <= 0)
		return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
	sdp_mpi_lock();
	ours = sdp_mpi_any_ours(incount, requests);
	sdp_mpi_unlock();
	if (!ours)
		return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
	for (;;) {
		sdp_mpi_progress_locked();
		rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
		if (rc != MPI_SUCCESS || *outcount != 0)
			return rc;
		if (++spins > 1000)
			sched_yield();
	}
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	sdp_mpi_progress_locked();
	return PMPI_Test(request, flag, status);
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	sdp_mpi_progress_locked();
	return PMPI_Testall(count, requests, flag, statuses);
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
	sdp_mpi_progress_locked();
	return PMPI_Testany(count, requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
		 MPI_Status statuses[])
{
	sdp_mpi_progress_locked();
	return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

int MPI_Request_free(MPI_Request *request)
{
	struct sdp_mpi_op *op;

	if (request != NULL && g.active) {
		sdp_mpi_lock();
		op = sdp_mpi_op_find(*request);
		if (op != NULL && !op->done) {
			/*
			 * The collective goes on (MPI's rule); its generalized request can only
			 * be freed once complete, which happens in sdp_mpi_op_complete.
			 */
			op->user_freed = 1;
			*request = MPI_REQUEST_NULL;
			sdp_mpi_unlock();
			return MPI_SUCCESS;
		}
		sdp_mpi_unlock();
	}
	return PMPI_Request_free(request);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
	sdp_mpi_progress_locked();
	return PMPI_Request_get_status(request, flag, status);
}
