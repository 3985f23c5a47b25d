/*
 * Soak (issue 15): mixed UROM load and GPU-less Ethernet traffic for a given duration, with the
 * resources of every process sampled, and pass criteria judged at the end (docs/testing.md,
 * "The soak").
 *
 *   soak PLUGIN_PATH [--seconds S] [--interval I] [--warmup W] [--window M] [--rate PPS]
 *        [--csv FILE]
 *
 * The parent starts a private softdpu-uromd (t_uromd.h: kernel-picked port, temporary run
 * directory and secret), forks 4 rank processes and one Ethernet process, samples every I
 * seconds and stops everything it started at the end (or on SIGINT / SIGTERM).
 * - Each rank: its own service connection, one worker running worker_graph, worker_rma and
 *   worker_coll, a domain of all 4 (softdpu's TCP OOB) into which it exported one buffer, and a
 *   team of all 4. Each round: 8 worker_graph loopbacks (echoed values checked), 2 PUTs to the
 *   next rank and 2 GETs reading them back (bytes checked), 2 fetching atomic adds on the next
 *   rank's word (old values checked), one allreduce (int64 sum, 1024 elements) and one
 *   alltoall (1 KiB blocks), every element checked against a reference. Element 0 of the
 *   allreduce carries "stop seen", so all ranks leave after the same round.
 * - The Ethernet process: a gen device (rate PPS) into a doca_eth_rxq on the CPU data path,
 *   REGULAR receive tasks re-submitted from their callbacks, every frame's length and sequence
 *   number checked (no gap, no duplicate); it sleeps on the PE's notification handle when idle.
 * Counters live in a shared anonymous mapping. Every sample: operations per kind and packets
 * (deltas), errors, VmRSS and the number of open fds of the service, each worker, each rank
 * and the Ethernet process.
 *
 * Criteria (all must hold; exit 0, else 1; 2 on a setup failure):
 *   errors    no check failed, no operation failed, every child exited 0, the service stopped
 *             cleanly with no worker left behind, the set of worker pids never changed;
 *   progress  every operation kind and the packets advanced in every interval after warm-up;
 *   memory    per process: max VmRSS in the last window <= max VmRSS in the first window
 *             + 4096 kB + 2 % (the first window starts after the warm-up);
 *   fds       per process: max fd count in the last window <= max in the first window;
 *   rate      per kind: median of the per-interval rates in the last window >= 0.9 x the
 *             median in the first window (a drop of more than 10 % fails; a rise does not),
 *             unless either other processes took 0.1 CPU seconds per second more in the last
 *             window and the operations per CPU second of the watched processes held (>= 0.9),
 *             or the machine itself got slower: a fixed reference workload timed in thread CPU
 *             time at every sample slowed, the rate per unit of that speed held (>= 0.9) and
 *             the watched processes' own CPU seconds per second held (>= 0.95, no waiting).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_eth_rxq.h"
#include "doca_eth_rxq_cpu_data_path.h"
#include "doca_mmap.h"
#include "sdp_gen_payload.h"
#include "softdpu/urom_mem.h"
#include "softdpu/urom_oob.h"
#include "t_urom.h"
#include "t_uromd.h"
#include "urom_coll.h"
#include "urom_graph.h"
#include "urom_rma.h"

#define NR 4		   /* ranks */
#define NPROC (2 + 2 * NR) /* service, workers, ranks, eth */
#define WAIT_MS 30000	   /* bound of every single operation */
#define NLOOP 8		   /* loopbacks per round */
#define BLK 4096	   /* put / get block */
#define NRED 1024	   /* allreduce elements */
#define A2A 1024	   /* alltoall bytes per member */
#define MAX_SAMPLES 4096
#define RX_TASKS 256
#define RX_SLOT 2048u
#define FRAME 256u
#define RSS_SLACK_KB 4096
#define RSS_SLACK_PCT 2.0
#define RATE_MIN 0.9
#define OTHER_MORE 0.1	     /* CPU seconds per second more for other processes: a busier machine */
#define CPU_HELD 0.95	     /* the watched processes' CPU seconds per second, last / first */
#define REF_BYTES (4u << 20) /* the reference workload's buffer: beyond the caches */
#define REF_STEPS 65536u     /* its dependent steps per sample */

/* Buffer layout of each rank (one exported segment). */
#define OFF_SLOTS 0		   /* NR blocks: written by rank k at k * BLK */
#define OFF_WORDS (NR * BLK)	   /* NR atomic words: rank k's at k * 8 */
#define OFF_SRC (OFF_WORDS + 4096) /* put source */
#define OFF_DST (OFF_SRC + BLK)	   /* get destination */
#define OFF_RS (OFF_DST + BLK)	   /* allreduce send */
#define OFF_RR (OFF_RS + NRED * 8) /* allreduce receive */
#define OFF_AS (OFF_RR + NRED * 8) /* alltoall send */
#define OFF_AR (OFF_AS + NR * A2A) /* alltoall receive */
#define SEG_LEN (OFF_AR + NR * A2A + 4096)

enum kind {
	K_LOOP,
	K_PUT,
	K_GET,
	K_ATOMIC,
	K_ALLREDUCE,
	K_ALLTOALL,
	K_RX,
	NKINDS
};
static const char *const kind_name[NKINDS] = {"loopback",  "put",      "get",	    "atomic",
					      "allreduce", "alltoall", "rx_packets"};

/* Shared between the parent and its children (MAP_SHARED | MAP_ANONYMOUS). */
struct shared {
	atomic_int stop;
	atomic_int ready[NR + 1];
	_Alignas(64) atomic_uint_fast64_t ops[NR + 1][NKINDS]; /* [NR]: the eth process */
	atomic_uint_fast64_t errors[NR + 1];
};

static struct shared *sh;
static struct t_uromd d;
static const char secret[] = "softdpu soak shared secret";
static volatile sig_atomic_t g_signalled;

static struct {
	double seconds, interval, warmup, window;
	unsigned rate;
	const char *csv;
} opt = {.seconds = 300, .interval = 5, .warmup = 30, .window = 60, .rate = 20000};

/* ---- the ranks --------------------------------------------------------------------------- */

struct rank {
	uint32_t rank;
	struct sdp_urom_oob *oob;
	struct t_svc s;
	struct doca_urom_worker *w;
	struct doca_urom_domain *dom;
	struct sdp_urom_mem *mem;
	uint8_t *seg;
	uint64_t vas[NR];
	uint64_t rma_id, coll_id, coll_version;
	struct urom_coll_team *team;
	int nerr_msgs;
};

static struct rank *cur;

/* A failed check: counted, the first few explained. */
static void rerr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rerr(const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&sh->errors[cur->rank], 1);
	if (cur->nerr_msgs++ >= 10)
		return;
	fprintf(stderr, "soak: rank %u: ", cur->rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define RSETUP(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			rerr("setup failed at line %d: %s", __LINE__, #cond);                      \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

static uint8_t pat(uint64_t a, uint64_t b, size_t k, uint64_t seq)
{
	return (uint8_t)(a * 37 + b * 11 + k * 7 + (k >> 8) * 3 + seq * 13 + 1);
}

static int64_t gen(uint64_t id, size_t i, uint64_t seq)
{
	return (int64_t)((id * 131u + i * 17u + seq * 7u) % 20001u) - 10000;
}

struct loop_slot {
	uint64_t want, got;
	doca_error_t st;
	int done;
};

static void loop_cb(doca_error_t result, union doca_data cookie, uint64_t data)
{
	struct loop_slot *l = cookie.ptr;

	l->st = result;
	l->got = data;
	l->done = 1;
}

static int find_plugins(struct rank *r, uint64_t *graph_id)
{
	const struct doca_urom_service_plugin_info *pl;
	size_t n = 0;

	RSETUP(doca_urom_service_get_plugins_list(r->s.svc, &pl, &n) == DOCA_SUCCESS);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(pl[i].plugin_name, "worker_rma") == 0) {
			r->rma_id = pl[i].id;
			RSETUP(urom_rma_init(pl[i].id, pl[i].version) == DOCA_SUCCESS);
		} else if (strcmp(pl[i].plugin_name, "worker_coll") == 0) {
			r->coll_id = pl[i].id;
			RSETUP(urom_coll_init(pl[i].id, pl[i].version) == DOCA_SUCCESS);
		}
	}
	RSETUP(t_svc_find_graph(&r->s) == DOCA_SUCCESS);
	*graph_id = r->s.graph_id;
	RSETUP(r->rma_id != 0 && r->coll_id != 0);
	return 0;
}

static int rank_open(struct rank *r, uint16_t port)
{
	struct sdp_urom_oob_params op = {.rank = r->rank,
					 .size = NR,
					 .secret = secret,
					 .secret_len = sizeof(secret),
					 .timeout_ms = 30000};
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY, .max_inflight = 64};
	struct doca_urom_domain_oob_coll coll;
	uint64_t id = r->rank, ids[NR], my_va, graph_id = 0;
	char root[64];

	r->seg = aligned_alloc(4096, (SEG_LEN + 4095) / 4096 * 4096);
	RSETUP(r->seg != NULL);
	memset(r->seg, 0, SEG_LEN);
	snprintf(root, sizeof(root), "127.0.0.1:%u", port);
	op.root = root;
	if (r->oob == NULL)
		RSETUP(sdp_urom_oob_create(&op, &r->oob) == DOCA_SUCCESS);
	RSETUP(t_svc_open(&r->s, 0) == DOCA_SUCCESS);
	RSETUP(find_plugins(r, &graph_id) == 0);
	urom_rma_set_local_id(r->rank);
	cfg.plugins = r->rma_id | r->coll_id | graph_id;
	RSETUP(t_worker_start(&r->s, r->s.pe, &cfg, &r->w) == DOCA_SUCCESS);
	sdp_urom_oob_coll(r->oob, &coll);
	RSETUP(doca_urom_domain_create(&r->dom) == DOCA_SUCCESS);
	RSETUP(doca_pe_connect_ctx(r->s.pe, doca_urom_domain_as_ctx(r->dom)) == DOCA_SUCCESS);
	RSETUP(doca_urom_domain_set_oob(r->dom, &coll) == DOCA_SUCCESS);
	RSETUP(doca_urom_domain_set_workers(r->dom, &id, &r->w, 1) == DOCA_SUCCESS);
	RSETUP(doca_urom_domain_set_buffers_count(r->dom, 1) == DOCA_SUCCESS);
	RSETUP(sdp_urom_domain_export_buffer(r->dom, r->seg, SEG_LEN, &r->mem) == DOCA_SUCCESS);
	RSETUP(doca_ctx_start(doca_urom_domain_as_ctx(r->dom)) == DOCA_ERROR_IN_PROGRESS);
	RSETUP(t_ctx_wait_state(doca_urom_domain_as_ctx(r->dom), r->s.pe, NULL,
				DOCA_CTX_STATE_RUNNING, WAIT_MS) == DOCA_CTX_STATE_RUNNING);
	my_va = (uint64_t)(uintptr_t)r->seg;
	RSETUP(sdp_urom_oob_allgather(r->oob, &my_va, r->vas, sizeof(my_va)) == DOCA_SUCCESS);
	for (uint32_t k = 0; k < NR; k++)
		ids[k] = k;
	RSETUP(urom_coll_team_create(r->w, r->s.pe, 0x50a4, r->rank, ids, NR, &r->team) ==
	       DOCA_SUCCESS);
	RSETUP(urom_coll_team_wait_ready(r->team, WAIT_MS) == DOCA_SUCCESS);
	return 0;
}

static void rank_close(struct rank *r)
{
	if (r->team != NULL && urom_coll_team_destroy(r->team, WAIT_MS) != DOCA_SUCCESS)
		rerr("team destroy failed");
	if (r->dom != NULL) {
		(void)doca_ctx_stop(doca_urom_domain_as_ctx(r->dom));
		(void)doca_urom_domain_destroy(r->dom);
	}
	if (r->mem != NULL)
		(void)sdp_urom_mem_unexport(r->mem);
	if (r->w != NULL)
		t_worker_close(&r->s, r->s.pe, r->w);
	if (r->s.svc != NULL)
		t_svc_close(&r->s);
	if (r->oob != NULL)
		(void)sdp_urom_oob_destroy(r->oob);
	free(r->seg);
}

static void count(struct rank *r, enum kind k, uint64_t n)
{
	atomic_fetch_add_explicit(&sh->ops[r->rank][k], n, memory_order_relaxed);
}

/* NLOOP loopbacks outstanding at once, each echoed value checked. */
static void do_loopbacks(struct rank *r, uint64_t seq)
{
	struct loop_slot l[NLOOP];
	int64_t deadline = t_now_ms() + WAIT_MS;
	int n = 0, ok = 0;

	for (int i = 0; i < NLOOP; i++) {
		l[i] = (struct loop_slot){.want = t_loop_value(seq * NLOOP + (uint64_t)i)};
		if (urom_graph_task_loopback(r->w, (union doca_data){.ptr = &l[i]}, l[i].want,
					     loop_cb) == DOCA_SUCCESS)
			n++;
		else
			rerr("loopback submit failed");
	}
	for (;;) {
		int done = 0;

		for (int i = 0; i < NLOOP; i++)
			done += l[i].done;
		if (done == n)
			break;
		if (t_now_ms() >= deadline) {
			/* the slots are on this stack: nothing may complete into them later */
			rerr("loopbacks: %d of %d completed within %d ms; giving up", done, n,
			     WAIT_MS);
			_exit(1);
		}
		t_pe_step(r->s.pe, 5);
	}
	for (int i = 0; i < NLOOP; i++) {
		if (!l[i].done)
			continue;
		if (l[i].st != DOCA_SUCCESS)
			rerr("loopback: %s", doca_error_get_name(l[i].st));
		else if (l[i].got != l[i].want)
			rerr("loopback: value %#llx, expected %#llx", (unsigned long long)l[i].got,
			     (unsigned long long)l[i].want);
		else
			ok++;
	}
	count(r, K_LOOP, (uint64_t)ok);
}

/* PUT len bytes into the next rank's block for this rank, GET them back, compare. */
static void do_put_get(struct rank *r, uint64_t seq, size_t len)
{
	uint32_t next = (r->rank + 1) % NR;
	uint8_t *src = r->seg + OFF_SRC, *dst = r->seg + OFF_DST;
	uint64_t remote = r->vas[next] + OFF_SLOTS + (uint64_t)r->rank * BLK;
	doca_error_t st;

	for (size_t k = 0; k < len; k++)
		src[k] = pat(r->rank, len, k, seq);
	memset(dst, 0, len);
	st = urom_rma_put_wait(r->w, r->s.pe, next, (uint64_t)(uintptr_t)src, remote, len, WAIT_MS);
	if (st != DOCA_SUCCESS) {
		rerr("put of %zu bytes: %s", len, doca_error_get_name(st));
		return;
	}
	count(r, K_PUT, 1);
	st = urom_rma_get_wait(r->w, r->s.pe, next, (uint64_t)(uintptr_t)dst, remote, len, WAIT_MS);
	if (st != DOCA_SUCCESS) {
		rerr("get of %zu bytes: %s", len, doca_error_get_name(st));
		return;
	}
	if (memcmp(src, dst, len) != 0) {
		rerr("get of %zu bytes (round %llu): not the bytes put", len,
		     (unsigned long long)seq);
		return;
	}
	count(r, K_GET, 1);
}

/* Fetching add on this rank's word at the next rank: only this rank touches it. */
static void do_atomic(struct rank *r, uint64_t operand, uint64_t *sum)
{
	uint32_t next = (r->rank + 1) % NR;
	uint64_t old = ~0ull;
	doca_error_t st;

	st = urom_rma_atomic_wait(r->w, r->s.pe, UROM_RMA_ATOMIC_FADD, 8, next,
				  r->vas[next] + OFF_WORDS + (uint64_t)r->rank * 8, operand, 0,
				  &old, WAIT_MS);
	if (st != DOCA_SUCCESS) {
		rerr("atomic fadd: %s", doca_error_get_name(st));
		return;
	}
	if (old != *sum)
		rerr("atomic fadd: old value %llu, expected %llu", (unsigned long long)old,
		     (unsigned long long)*sum);
	else
		count(r, K_ATOMIC, 1);
	*sum = old + operand;
}

/* Allreduce (int64 sum); element 0 carries "stop seen". Returns the sum of element 0, -1 on
 * a failure (then the rank leaves: the others time out in their next collective). */
static int64_t do_allreduce(struct rank *r, uint64_t seq, int64_t stop)
{
	int64_t *s = (int64_t *)(void *)(r->seg + OFF_RS),
		*rb = (int64_t *)(void *)(r->seg + OFF_RR);
	struct urom_coll_req *req = NULL;
	doca_error_t st;

	s[0] = stop;
	for (size_t i = 1; i < NRED; i++)
		s[i] = gen(r->rank, i, seq);
	memset(rb, 0xee, NRED * 8);
	st = urom_coll_allreduce(r->team, s, rb, NRED, UROM_COLL_INT64, UROM_COLL_SUM, &req);
	if (st == DOCA_SUCCESS)
		st = urom_coll_wait(req, WAIT_MS);
	if (st != DOCA_SUCCESS) {
		rerr("allreduce: %s", doca_error_get_name(st));
		return -1;
	}
	if (rb[0] < 0 || rb[0] > NR) {
		rerr("allreduce: element 0 is %lld, outside 0..%d", (long long)rb[0], NR);
		return -1;
	}
	for (size_t i = 1; i < NRED; i++) {
		int64_t want = 0;

		for (uint32_t k = 0; k < NR; k++)
			want += gen(k, i, seq);
		if (rb[i] != want) {
			rerr("allreduce round %llu: element %zu is %lld, expected %lld",
			     (unsigned long long)seq, i, (long long)rb[i], (long long)want);
			return -1;
		}
	}
	count(r, K_ALLREDUCE, 1);
	return rb[0];
}

static int do_alltoall(struct rank *r, uint64_t seq)
{
	uint8_t *s = r->seg + OFF_AS, *rb = r->seg + OFF_AR;
	struct urom_coll_req *req = NULL;
	doca_error_t st;

	for (uint32_t j = 0; j < NR; j++)
		for (size_t k = 0; k < A2A; k++)
			s[j * A2A + k] = pat(r->rank, j, k, seq);
	memset(rb, 0xee, NR * A2A);
	st = urom_coll_alltoall(r->team, s, rb, A2A, UROM_COLL_UINT8, &req);
	if (st == DOCA_SUCCESS)
		st = urom_coll_wait(req, WAIT_MS);
	if (st != DOCA_SUCCESS) {
		rerr("alltoall: %s", doca_error_get_name(st));
		return -1;
	}
	for (uint32_t j = 0; j < NR; j++)
		for (size_t k = 0; k < A2A; k++)
			if (rb[j * A2A + k] != pat(j, r->rank, k, seq)) {
				rerr("alltoall round %llu: byte %zu of the block from %u wrong",
				     (unsigned long long)seq, k, j);
				return -1;
			}
	count(r, K_ALLTOALL, 1);
	return 0;
}

static int rank_main(uint32_t rank, uint16_t port, struct sdp_urom_oob *oob)
{
	struct rank r;
	uint64_t seq = 0, sum = 0;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	cur = &r;
	r.rank = rank;
	r.oob = oob;
	if (rank_open(&r, port) != 0) {
		rank_close(&r);
		return 1;
	}
	atomic_store(&sh->ready[rank], 1);
	for (;; seq++) {
		int64_t stops;

		do_loopbacks(&r, seq);
		do_put_get(&r, seq, BLK);
		do_put_get(&r, seq, 64);
		do_atomic(&r, seq * 2 + 1, &sum);
		do_atomic(&r, seq * 2 + 2, &sum);
		stops = do_allreduce(&r, seq, atomic_load(&sh->stop) ? 1 : 0);
		if (stops < 0 || do_alltoall(&r, seq) != 0) {
			rc = 1;
			break;
		}
		if (stops > 0)
			break;
	}
	fprintf(stderr, "soak: rank %u: %llu rounds\n", rank, (unsigned long long)seq + 1);
	rank_close(&r);
	return rc != 0 || atomic_load(&sh->errors[rank]) != 0 || t_failures != 0;
}

/* ---- the Ethernet process ---------------------------------------------------------------- */

static struct {
	struct doca_pe *pe;
	struct doca_eth_rxq *rxq;
	struct doca_buf *bufs[RX_TASKS];
	uint8_t *mem;
	uint64_t next_seq;
	int nerr_msgs;
} e;

static void eerr(const char *what, uint64_t v)
{
	atomic_fetch_add(&sh->errors[NR], 1);
	if (e.nerr_msgs++ < 10)
		fprintf(stderr, "soak: eth: %s (%llu)\n", what, (unsigned long long)v);
}

static void recv_ok(struct doca_eth_rxq_task_recv *task, union doca_data ud, union doca_data cd)
{
	const uint8_t *p = e.mem + ud.u64 * RX_SLOT + SDP_GEN_L2L3L4_LEN + SDP_GEN_OFF_SEQ;
	size_t len = 0;
	uint64_t seq = 0;

	(void)cd;
	(void)doca_buf_get_data_len(e.bufs[ud.u64], &len);
	if (len != FRAME) {
		eerr("frame of another length", len);
	} else {
		for (int i = 0; i < 8; i++)
			seq = seq << 8 | p[i];
		if (seq != e.next_seq)
			eerr("sequence gap or duplicate at", seq);
		e.next_seq = seq + 1;
		atomic_fetch_add_explicit(&sh->ops[NR][K_RX], 1, memory_order_relaxed);
	}
	if (doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(task)) != DOCA_SUCCESS) {
		if (!atomic_load(&sh->stop))
			eerr("receive task re-submit failed", ud.u64);
		doca_task_free(doca_eth_rxq_task_recv_as_doca_task(task));
	}
}

static void recv_err(struct doca_eth_rxq_task_recv *task, union doca_data ud, union doca_data cd)
{
	struct doca_task *t = doca_eth_rxq_task_recv_as_doca_task(task);

	(void)cd;
	if (doca_task_get_status(t) != DOCA_ERROR_IO_FAILED || !atomic_load(&sh->stop))
		eerr("receive task failed", ud.u64);
	doca_task_free(t);
}

#define ESETUP(call)                                                                               \
	do {                                                                                       \
		doca_error_t rc_ = (call);                                                         \
		if (rc_ != DOCA_SUCCESS) {                                                         \
			fprintf(stderr, "soak: eth: %s: %s\n", #call, doca_error_get_name(rc_));   \
			atomic_fetch_add(&sh->errors[NR], 1);                                      \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

static int eth_main(void)
{
	char decls[128], name[32], buf[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	struct doca_mmap *mmap = NULL;
	struct doca_buf_inventory *inv = NULL;
	doca_notification_handle_t h;
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	uint32_t n = 0;
	int64_t deadline;
	doca_error_t rc;

	snprintf(name, sizeof(name), "soakg%d", (int)getpid());
	snprintf(decls, sizeof(decls), "gen:name=%s,size=%u,rate=%u", name, FRAME, opt.rate);
	setenv("SOFTDPU_DEVICES", decls, 1);
	ESETUP(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_devinfo_get_ibdev_name(list[i], buf, sizeof(buf)) == DOCA_SUCCESS &&
		    strcmp(buf, name) == 0)
			ESETUP(doca_dev_open(list[i], &dev));
	doca_devinfo_destroy_list(list);
	if (dev == NULL) {
		eerr("the gen device is not listed (gen provider on SOFTDPU_PROVIDER_PATH?)", 0);
		return 1;
	}
	e.mem = aligned_alloc(4096, RX_TASKS * RX_SLOT);
	if (e.mem == NULL)
		return 1;
	memset(e.mem, 0, RX_TASKS * RX_SLOT);
	ESETUP(doca_mmap_create(&mmap));
	ESETUP(doca_mmap_set_memrange(mmap, e.mem, RX_TASKS * RX_SLOT));
	ESETUP(doca_mmap_add_dev(mmap, dev));
	ESETUP(doca_mmap_start(mmap));
	ESETUP(doca_buf_inventory_create(RX_TASKS, &inv));
	ESETUP(doca_buf_inventory_start(inv));
	ESETUP(doca_pe_create(&e.pe));
	ESETUP(doca_eth_rxq_create(dev, RX_TASKS, RX_SLOT, &e.rxq));
	ESETUP(doca_eth_rxq_set_type(e.rxq, DOCA_ETH_RXQ_TYPE_REGULAR));
	ESETUP(doca_eth_rxq_task_recv_set_conf(e.rxq, recv_ok, recv_err, RX_TASKS));
	ESETUP(doca_pe_connect_ctx(e.pe, doca_eth_rxq_as_doca_ctx(e.rxq)));
	ESETUP(doca_ctx_start(doca_eth_rxq_as_doca_ctx(e.rxq)));
	for (uint32_t i = 0; i < RX_TASKS; i++) {
		struct doca_eth_rxq_task_recv *t = NULL;

		ESETUP(doca_buf_inventory_buf_get_by_addr(inv, mmap, e.mem + i * RX_SLOT, RX_SLOT,
							  &e.bufs[i]));
		ESETUP(doca_eth_rxq_task_recv_allocate_init(e.rxq, e.bufs[i],
							    (union doca_data){.u64 = i}, &t));
		ESETUP(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t)));
	}
	ESETUP(doca_pe_get_notification_handle(e.pe, &h));
	atomic_store(&sh->ready[NR], 1);
	while (!atomic_load(&sh->stop)) {
		if (doca_pe_progress(e.pe))
			continue;
		/* idle: sleep on the PE (the gen port's timerfd wakes it), at most 100 ms */
		if (doca_pe_request_notification(e.pe) == DOCA_SUCCESS) {
			struct pollfd p = {.fd = (int)h, .events = POLLIN};

			if (poll(&p, 1, 100) > 0)
				(void)doca_pe_clear_notification(e.pe, h);
		}
	}
	rc = doca_ctx_stop(doca_eth_rxq_as_doca_ctx(e.rxq));
	if (rc != DOCA_SUCCESS && rc != DOCA_ERROR_IN_PROGRESS)
		ESETUP(rc);
	deadline = t_now_ms() + 10000;
	while (doca_ctx_get_state(doca_eth_rxq_as_doca_ctx(e.rxq), &st) == DOCA_SUCCESS &&
	       st != DOCA_CTX_STATE_IDLE && t_now_ms() < deadline)
		if (!doca_pe_progress(e.pe))
			t_sleep_ms(1);
	if (st != DOCA_CTX_STATE_IDLE) {
		eerr("the receive queue did not stop within 10 s", (uint64_t)st);
		return 1;
	}
	ESETUP(doca_eth_rxq_destroy(e.rxq));
	for (uint32_t i = 0; i < RX_TASKS; i++)
		ESETUP(doca_buf_dec_refcount(e.bufs[i], NULL));
	ESETUP(doca_pe_destroy(e.pe));
	ESETUP(doca_buf_inventory_destroy(inv));
	ESETUP(doca_mmap_destroy(mmap));
	ESETUP(doca_dev_close(dev));
	free(e.mem);
	fprintf(stderr, "soak: eth: %llu frames received\n",
		(unsigned long long)atomic_load(&sh->ops[NR][K_RX]));
	return atomic_load(&sh->errors[NR]) != 0;
}

/* ---- the parent: samples and criteria ---------------------------------------------------- */

struct proc {
	char name[16];
	pid_t pid;
};

struct sample {
	double t;	      /* seconds since the load started */
	uint64_t ops[NKINDS]; /* totals at t */
	uint64_t errors;
	uint64_t cpu_ticks;  /* user + system time of all watched processes */
	uint64_t busy_ticks; /* the machine's busy time, all CPUs (/proc/stat) */
	double ref_ns;	     /* this thread's CPU time for the reference workload */
	long rss_kb[NPROC];  /* -1: unreadable */
	int fds[NPROC];
};

static struct sample samples[MAX_SAMPLES];
static volatile uint32_t g_ref_sink; /* keeps the reference workload from being optimised away */
static int nsamples;
static struct proc procs[NPROC];
static int nprocs;

static double now_s(void)
{
	return (double)t_now_ms() / 1000.0;
}

static long proc_rss_kb(pid_t pid)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (t_read_file(path, buf, sizeof(buf)) <= 0 || (p = strstr(buf, "VmRSS:")) == NULL)
		return -1;
	return strtol(p + 6, NULL, 10);
}

static int proc_fds(pid_t pid)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (dir == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/*
 * The machine's speed per CPU second, measured independently of the load: the thread CPU time
 * of a fixed workload (REF_STEPS dependent reads at pseudo-random lines of a REF_BYTES buffer,
 * each mixed into the next index), so neither preemption nor the load's own state counts, but a
 * host that got slower for everyone (frequency, caches, memory bandwidth) does. 0 if the clock
 * fails.
 */
static double reference_work_ns(void)
{
	static uint32_t *buf;
	struct timespec a, b;
	uint32_t idx = 1, n = REF_BYTES / sizeof(*buf);

	if (buf == NULL) {
		buf = malloc(REF_BYTES);
		if (buf == NULL)
			return 0;
		for (uint32_t i = 0; i < n; i++)
			buf[i] = i * 2654435761u;
	}
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a) != 0)
		return 0;
	for (uint32_t i = 0; i < REF_STEPS; i++)
		idx = (buf[idx & (n - 1)] ^ (idx * 2654435761u)) + i;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b) != 0)
		return 0;
	g_ref_sink ^= idx;
	return (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
}

/* Busy ticks of the whole machine: user nice system irq softirq steal of /proc/stat's "cpu". */
static uint64_t machine_busy_ticks(void)
{
	char buf[512];
	unsigned long long v[8] = {0};

	if (t_read_file("/proc/stat", buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) < 7)
		return 0;
	return v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

/* utime + stime of pid in clock ticks (/proc/<pid>/stat fields 14 and 15); 0 when unreadable. */
static uint64_t proc_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (t_read_file(path, buf, sizeof(buf)) <= 0 || (p = strrchr(buf, ')')) == NULL)
		return 0;
	/* after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return ut + st;
}

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Sorted worker pids of the service; their count. */
static int worker_pids(pid_t *w)
{
	int n = t_uromd_worker_pids(&d, w, T_UROMD_MAX_PIDS);

	n = n > T_UROMD_MAX_PIDS ? T_UROMD_MAX_PIDS : n;
	qsort(w, (size_t)n, sizeof(*w), pid_cmp);
	return n;
}

static int take_sample(double t0)
{
	struct sample *s = &samples[nsamples];

	if (nsamples >= MAX_SAMPLES)
		return -1;
	s->t = now_s() - t0;
	for (int k = 0; k < NKINDS; k++) {
		s->ops[k] = 0;
		for (int r = 0; r <= NR; r++)
			s->ops[k] += atomic_load_explicit(&sh->ops[r][k], memory_order_relaxed);
	}
	s->errors = 0;
	for (int r = 0; r <= NR; r++)
		s->errors += atomic_load(&sh->errors[r]);
	s->cpu_ticks = 0;
	s->busy_ticks = machine_busy_ticks();
	s->ref_ns = reference_work_ns();
	for (int i = 0; i < nprocs; i++) {
		s->cpu_ticks += proc_cpu_ticks(procs[i].pid);
		s->rss_kb[i] = proc_rss_kb(procs[i].pid);
		s->fds[i] = proc_fds(procs[i].pid);
	}
	nsamples++;
	return 0;
}

static void print_sample(FILE *f, const struct sample *s, const struct sample *prev, int csv)
{
	double dt = s->t - prev->t;

	fprintf(f, csv ? "%.1f" : "soak: t=%.0f", s->t);
	for (int k = 0; k < NKINDS; k++) {
		double rate = dt > 0 ? (double)(s->ops[k] - prev->ops[k]) / dt : 0;

		if (csv)
			fprintf(f, ",%llu,%.1f", (unsigned long long)s->ops[k], rate);
		else
			fprintf(f, " %s=%llu(%.0f/s)", kind_name[k], (unsigned long long)s->ops[k],
				rate);
	}
	fprintf(f, csv ? ",%llu" : " errors=%llu", (unsigned long long)s->errors);
	if (!csv)
		fprintf(f, " rss_kb/fds:");
	for (int i = 0; i < nprocs; i++) {
		if (csv)
			fprintf(f, ",%ld,%d", s->rss_kb[i], s->fds[i]);
		else
			fprintf(f, " %s=%ld/%d", procs[i].name, s->rss_kb[i], s->fds[i]);
	}
	fputc('\n', f);
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Median over the intervals within [from, to] of kind k's operations per second of wall time
 * (per_cpu 0) or per CPU second of the watched processes (per_cpu 1); for k == -1, of the
 * watched processes' CPU seconds per wall second; k == -2, of everything else's on the machine.
 */
static double median_rate(int k, int per_cpu, double from, double to, int *n_p)
{
	static double v[MAX_SAMPLES];
	double tck = (double)sysconf(_SC_CLK_TCK), tol = opt.interval / 2;
	int n = 0;

	for (int i = 1; i < nsamples; i++) {
		const struct sample *a = &samples[i - 1], *b = &samples[i];
		double wall = b->t - a->t, cpu = (double)(b->cpu_ticks - a->cpu_ticks) / tck;
		double busy = (double)(b->busy_ticks - a->busy_ticks) / tck;
		double ops = k == -1 ? cpu :
			     k == -2 ? fmax(0.0, busy - cpu) :
				       (double)(b->ops[k] - a->ops[k]);
		double per = per_cpu ? cpu : wall;

		if (a->t >= from - tol && b->t <= to + tol && wall > 0 && per > 0)
			v[n++] = ops / per;
	}
	*n_p = n;
	if (n == 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median of the reference workload's time over the samples taken in [from, to]; 0: none. */
static double median_ref_ns(double from, double to)
{
	static double v[MAX_SAMPLES];
	double tol = opt.interval / 2;
	int n = 0;

	for (int i = 0; i < nsamples; i++)
		if (samples[i].t >= from - tol && samples[i].t <= to + tol && samples[i].ref_ns > 0)
			v[n++] = samples[i].ref_ns;
	if (n == 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void on_signal(int sig)
{
	(void)sig;
	g_signalled = 1;
	if (sh != NULL)
		atomic_store(&sh->stop, 1);
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s PLUGIN_PATH [--seconds S] [--interval I] [--warmup W] [--window M]"
		" [--rate PPS] [--csv FILE]\n",
		argv0);
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {{"seconds", 1, NULL, 's'}, {"interval", 1, NULL, 'i'},
					   {"warmup", 1, NULL, 'w'},  {"window", 1, NULL, 'm'},
					   {"rate", 1, NULL, 'r'},    {"csv", 1, NULL, 'c'},
					   {NULL, 0, NULL, 0}};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char *end = NULL;
		double v = optarg != NULL ? strtod(optarg, &end) : 0;

		if (c != 'c' && (end == NULL || *end != '\0' || !(v > 0)))
			usage(argv[0]);
		switch (c) {
		case 's':
			opt.seconds = v;
			break;
		case 'i':
			opt.interval = v;
			break;
		case 'w':
			opt.warmup = v;
			break;
		case 'm':
			opt.window = v;
			break;
		case 'r':
			opt.rate = (unsigned)v;
			break;
		case 'c':
			opt.csv = optarg;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc - 1)
		usage(argv[0]);
	if (opt.warmup + 2 * opt.window > opt.seconds + 1e-9 || opt.interval * 3 > opt.window) {
		fprintf(stderr,
			"soak: --seconds must be at least --warmup + 2 x --window, and --window at "
			"least 3 x --interval\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct sdp_urom_oob_params op = {.root = "127.0.0.1:0",
					 .rank = 0,
					 .size = NR,
					 .secret = secret,
					 .secret_len = sizeof(secret),
					 .timeout_ms = 30000};
	struct sdp_urom_oob *root = NULL;
	pid_t kids[NR + 1] = {0}, w0[T_UROMD_MAX_PIDS], w1[T_UROMD_MAX_PIDS];
	int nw0 = 0, fails = 0, kids_ok = 1, stopped_ok;
	double t0, t_end, first_to, last_from;
	struct sigaction sa;
	FILE *csv = NULL;

	parse(argc, argv);
	setenv("UROM_PLUGIN_PATH", argv[optind], 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	memset(sh, 0, sizeof(*sh));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (t_uromd_start(&d, NULL) != 0)
		return 2;
	if (sdp_urom_oob_create(&op, &root) != DOCA_SUCCESS) {
		t_uromd_stop(&d);
		return 2;
	}
	for (uint32_t k = 0; k <= NR; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			signal(SIGINT, SIG_IGN); /* the parent stops them through sh->stop */
			signal(SIGTERM, SIG_DFL);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (k == NR)
				_exit(eth_main());
			_exit(rank_main(k, sdp_urom_oob_port(root), k == 0 ? root : NULL));
		}
		if (kids[k] < 0) {
			/* the others leave through their bounded OOB and collective waits */
			fprintf(stderr, "soak: fork failed\n");
			kids[k] = 0;
			fails++;
			atomic_store(&sh->stop, 1);
		}
	}
	(void)sdp_urom_oob_destroy(root);

	/* everyone set up (bounded), then the processes to watch */
	{
		int64_t deadline = t_now_ms() + 60000;
		int ready = 0;

		while (!g_signalled && t_now_ms() < deadline) {
			ready = 0;
			for (int k = 0; k <= NR; k++)
				ready += atomic_load(&sh->ready[k]);
			if (ready == NR + 1)
				break;
			for (int k = 0; k <= NR; k++)
				if (kids[k] > 0 && waitpid(kids[k], NULL, WNOHANG) == kids[k]) {
					fprintf(stderr, "soak: child %d exited during setup\n", k);
					kids[k] = 0;
					deadline = 0;
				}
			t_sleep_ms(50);
		}
		if (ready != NR + 1) {
			fprintf(stderr, "soak: setup did not finish within 60 s (%d of %d ready)\n",
				ready, NR + 1);
			fails++;
			atomic_store(&sh->stop, 1);
		}
	}
	nw0 = worker_pids(w0);
	if (fails == 0 && nw0 != NR) {
		fprintf(stderr, "soak: %d worker processes, expected %d\n", nw0, NR);
		fails++;
		atomic_store(&sh->stop, 1);
	}
	snprintf(procs[nprocs].name, sizeof(procs[0].name), "service");
	procs[nprocs++].pid = d.pid;
	for (int i = 0; i < nw0 && i < NR; i++) {
		snprintf(procs[nprocs].name, sizeof(procs[0].name), "worker%d", i);
		procs[nprocs++].pid = w0[i];
	}
	for (int k = 0; k < NR; k++) {
		snprintf(procs[nprocs].name, sizeof(procs[0].name), "rank%d", k);
		procs[nprocs++].pid = kids[k];
	}
	snprintf(procs[nprocs].name, sizeof(procs[0].name), "eth");
	procs[nprocs++].pid = kids[NR];
	if (opt.csv != NULL && (csv = fopen(opt.csv, "w")) != NULL) {
		fprintf(csv, "t");
		for (int k = 0; k < NKINDS; k++)
			fprintf(csv, ",%s,%s_per_s", kind_name[k], kind_name[k]);
		fprintf(csv, ",errors");
		for (int i = 0; i < nprocs; i++)
			fprintf(csv, ",%s_rss_kb,%s_fds", procs[i].name, procs[i].name);
		fputc('\n', csv);
	}
	printf("soak: %.0f s, sample every %.0f s, warm-up %.0f s, windows of %.0f s, gen %u "
	       "pps of %u B; processes:",
	       opt.seconds, opt.interval, opt.warmup, opt.window, opt.rate, FRAME);
	for (int i = 0; i < nprocs; i++)
		printf(" %s=%d", procs[i].name, (int)procs[i].pid);
	printf("\n");

	/* the load runs; sample every interval, on time, until the end or a signal */
	t0 = now_s();
	t_end = t0 + opt.seconds;
	if (fails == 0)
		take_sample(t0);
	for (int i = 1; fails == 0 && !g_signalled; i++) {
		double next = t0 + i * opt.interval;
		int nw;

		if (next > t_end + 1e-6)
			break;
		while (!g_signalled && now_s() < next)
			t_sleep_ms((int)fmin(200.0, (next - now_s()) * 1000.0 + 1));
		if (g_signalled || take_sample(t0) != 0)
			break;
		print_sample(stdout, &samples[nsamples - 1], &samples[nsamples - 2], 0);
		if (csv != NULL)
			print_sample(csv, &samples[nsamples - 1], &samples[nsamples - 2], 1);
		nw = worker_pids(w1);
		if (nw != nw0 || memcmp(w0, w1, (size_t)nw * sizeof(*w1)) != 0) {
			fprintf(stderr, "soak: the worker processes changed (%d now)\n", nw);
			fails++;
		}
		for (int k = 0; k <= NR; k++)
			if (kids[k] > 0 && waitpid(kids[k], NULL, WNOHANG) == kids[k]) {
				fprintf(stderr, "soak: %s exited during the load\n",
					k == NR ? "eth" : procs[1 + NR + k].name);
				kids[k] = 0;
				kids_ok = 0;
				fails++;
			}
		if (samples[nsamples - 1].errors != 0)
			break;
	}
	if (csv != NULL)
		fclose(csv);

	/* stop: the ranks agree through their allreduce, the eth process sees the flag */
	atomic_store(&sh->stop, 1);
	for (int k = 0; k <= NR; k++) {
		int st = -1;

		if (kids[k] <= 0)
			continue;
		if (!t_wait_child(kids[k], 120000, &st)) {
			fprintf(stderr, "soak: child %d did not exit within 120 s; killed\n", k);
			kill(kids[k], SIGKILL);
			(void)t_wait_child(kids[k], 10000, &st);
			kids_ok = 0;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "soak: child %d exit status %d\n", k,
				WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			kids_ok = 0;
		}
	}
	stopped_ok = t_uromd_stop(&d) == 0;
	fails += t_failures;

	/* ---- the verdict ---- */
	{
		const struct sample *last = nsamples > 0 ? &samples[nsamples - 1] : NULL;
		uint64_t errors = 0;
		double t_last = last != NULL ? last->t : 0;

		for (int r = 0; r <= NR; r++)
			errors += atomic_load(&sh->errors[r]);
		first_to = opt.warmup + opt.window;
		last_from = t_last - opt.window;
		printf("soak: duration=%.0f s samples=%d errors=%llu children=%s service_stop=%s\n",
		       t_last, nsamples, (unsigned long long)errors, kids_ok ? "ok" : "FAILED",
		       stopped_ok ? "clean" : "FAILED");
		if (errors != 0 || !kids_ok || !stopped_ok)
			fails++;
		if (g_signalled) {
			printf("soak: interrupted\n");
			fails++;
		}
		if (t_last + 1e-6 < opt.seconds - opt.interval) {
			printf("soak: ran %.0f s of %.0f s\n", t_last, opt.seconds);
			fails++;
		}
		if (fails != 0 || nsamples < 2) {
			printf("soak: FAIL\n");
			return 1;
		}
		/* progress in every interval after warm-up */
		for (int i = 1; i < nsamples; i++) {
			if (samples[i - 1].t < opt.warmup - 1e-6)
				continue;
			for (int k = 0; k < NKINDS; k++)
				if (samples[i].ops[k] == samples[i - 1].ops[k]) {
					printf("soak: no %s between t=%.0f and t=%.0f s\n",
					       kind_name[k], samples[i - 1].t, samples[i].t);
					fails++;
				}
		}
		/*
		 * rates: medians of the per-interval rates, first window against last. A drop of
		 * the wall rate is excused only when other processes on the machine took more
		 * CPU in the last window (OTHER_MORE CPU seconds per second or more) while what
		 * the watched processes did per CPU second of their own held.
		 */
		int n1, n2;
		double c1 = median_rate(-1, 0, opt.warmup, first_to, &n1);
		double c2 = median_rate(-1, 0, last_from, t_last, &n2);
		double o1 = median_rate(-2, 0, opt.warmup, first_to, &n1);
		double o2 = median_rate(-2, 0, last_from, t_last, &n2);
		int busier = o2 - o1 >= OTHER_MORE;
		int cpu_held = c1 > 0 && c2 / c1 >= CPU_HELD;
		/* the machine's speed, last window / first (a slower host reads below 1) */
		double r1 = median_ref_ns(opt.warmup, first_to),
		       r2 = median_ref_ns(last_from, t_last);
		double speed = r1 > 0 && r2 > 0 ? r1 / r2 : 0;

		printf("soak: cpu soak first=%.2f last=%.2f, others first=%.2f last=%.2f (CPU "
		       "seconds per second, medians)%s\n",
		       c1, c2, o1, o2, busier ? ": the machine was busier in the last window" : "");
		printf("soak: reference workload first=%.0f ns last=%.0f ns (medians): machine "
		       "speed %.3f\n",
		       r1, r2, speed);
		for (int k = 0; k < NKINDS; k++) {
			double m1 = median_rate(k, 0, opt.warmup, first_to, &n1);
			double m2 = median_rate(k, 0, last_from, t_last, &n2);
			double e1 = median_rate(k, 1, opt.warmup, first_to, &n1);
			double e2 = median_rate(k, 1, last_from, t_last, &n2);
			double ratio = m1 > 0 ? m2 / m1 : 0, eratio = e1 > 0 ? e2 / e1 : 0;
			int wall_ok = ratio >= RATE_MIN;
			int excused_busy = !wall_ok && busier && eratio >= RATE_MIN;
			int excused_slow =
				!wall_ok && cpu_held && speed > 0 && ratio / speed >= RATE_MIN;
			int ok = n1 >= 3 && n2 >= 3 && (wall_ok || excused_busy || excused_slow);
			const char *how =
				!ok	     ? "FAIL" :
				excused_busy ? "ok (excused: busier machine)" :
				excused_slow ? "ok (excused: slower machine, the same rate "
					       "per unit of its speed)" :
					       "ok";

			printf("soak: rate %s total=%llu first=%.1f/s last=%.1f/s ratio=%.3f "
			       "per_cpu_ratio=%.3f (intervals %d, %d) %s\n",
			       kind_name[k], (unsigned long long)last->ops[k], m1, m2, ratio,
			       eratio, n1, n2, how);
			fails += !ok;
		}
		/* memory and fds per process: last window's max against the first window's */
		for (int i = 0; i < nprocs; i++) {
			long r1 = -1, r2 = -1;
			int f1 = -1, f2 = -1, ok;
			double slack, tol = opt.interval / 2;

			for (int j = 0; j < nsamples; j++) {
				const struct sample *s = &samples[j];

				if (s->t >= opt.warmup - tol && s->t <= first_to + tol) {
					r1 = s->rss_kb[i] > r1 ? s->rss_kb[i] : r1;
					f1 = s->fds[i] > f1 ? s->fds[i] : f1;
				}
				if (s->t >= last_from - tol) {
					r2 = s->rss_kb[i] > r2 ? s->rss_kb[i] : r2;
					f2 = s->fds[i] > f2 ? s->fds[i] : f2;
				}
			}
			slack = RSS_SLACK_KB + (double)r1 * RSS_SLACK_PCT / 100.0;
			ok = r1 > 0 && r2 > 0 && f1 > 0 && f2 > 0 &&
			     (double)r2 <= (double)r1 + slack && f2 <= f1;
			printf("soak: resources %s rss_kb first=%ld last=%ld drift=%+ld (slack %.0f) "
			       "fds first=%d last=%d drift=%+d %s\n",
			       procs[i].name, r1, r2, r2 - r1, slack, f1, f2, f2 - f1,
			       ok ? "ok" : "FAIL");
			fails += !ok;
		}
		printf("soak: %s\n", fails == 0 ? "PASS" : "FAIL");
	}
	return fails == 0 ? 0 : 1;
}
