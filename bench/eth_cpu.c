/*
 * bench/eth_cpu: packets per second through libdoca_eth's CPU data path (REGULAR receive tasks
 * on a doca_pe, one engine thread per device), each case next to a peer measured in the same
 * invocation.
 *
 *   eth_cpu loop     [-s size] [-t secs] [-n tasks]
 *       a send queue on one loop device (send tasks re-submitted from their callbacks without
 *       DOCA_TASK_SUBMIT_FLAG_FLUSH, so each progress call sends them in one burst) and a
 *       receive queue on its peer (receive tasks re-submitted from their callbacks); frames
 *       received per second. Peer: two threads pumping the same frames through an in-process
 *       ring with memcpy in and memcpy out (the ceiling of a CPU copy path between two threads).
 *       Also (port_pps, port_ratio): the loop wire alone, its port ops driven by two threads in
 *       bursts of 32, i.e. what the backend could give the queues.
 *   eth_cpu gen      [-s size] [-t secs] [-n tasks]
 *       a gen device flat out into a receive queue (sequence numbers checked: no gap, no
 *       duplicate). Peer: the gen provider's own rx_burst through its port ops, one thread,
 *       32 frames a call (the backend alone, what the engine thread calls).
 *   eth_cpu afpacket|afxdp -i iface [-s size] [-t secs] [-n tasks] [-f frames]
 *       an afpacket (or afxdp) device on iface into a receive queue; the traffic comes from
 *       outside (bench/eth_cpu.sh: eth_blast in another namespace); the peer (afpacket_peer,
 *       afxdp_peer) runs in another invocation with the same sender.
 *   -x leaves the peer out (to profile softdpu alone); -w spins: see below.
 *
 * Each measurement warms up for 0.3 s, then counts for secs seconds (default 2). While it
 * measures, the PE is progressed in a loop; after 16 empty calls in a row (-w) the thread
 * sleeps on the PE's notification handle (at most 1 ms), so an idle queue does not spin. The
 * peers' threads poll too (sched_yield on an empty or full ring, poll() on a backend's fd), and
 * only for the measured window.
 *
 * Output: "key=value" lines on stdout (case, size, packets, seconds, pps, peer_pps, ratio and
 * the CPU time of the process's threads during the window: the main thread (the PE) and the
 * others (the engine threads)). Exit 1 when a check failed (wrong frame length, sequence gap,
 * errors), 2 on a setup failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_eth_rxq_cpu_data_path.h"
#include "doca_eth_txq.h"
#include "doca_eth_txq_cpu_data_path.h"
#include "doca_mmap.h"
#include "doca_pe.h"
#include "sdp_gen_payload.h"
#include "bench_util.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"
#include "softdpu/eth.h"

#define SLOT 2048u	/* bytes of one task buffer */
#define WARMUP_S 0.3	/* before each window */
#define RAW_BURST 32	/* frames per rx_burst in the raw gen peer (the engine's burst) */
#define RING_SLOTS 1024 /* memcpy ring peer */

static struct {
	const char *mode;
	const char *iface;
	uint32_t size;
	double secs;
	uint32_t tasks;
	uint32_t frames;
	int no_peer;	    /* -x: softdpu only (for profiling) */
	unsigned int spins; /* -w: empty doca_pe_progress calls before sleeping on the PE */
} g_opt = {.size = 64, .secs = 2.0, .tasks = 512, .frames = 4096, .spins = 16};

static int g_check_failed;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fail_check(const char *what, uint64_t n)
{
	fprintf(stderr, "eth_cpu: check failed: %s (%llu)\n", what, (unsigned long long)n);
	g_check_failed = 1;
}

#define SETUP(call)                                                                                \
	do {                                                                                       \
		doca_error_t rc_ = (call);                                                         \
		if (rc_ != DOCA_SUCCESS) {                                                         \
			fprintf(stderr, "eth_cpu: %s: %s\n", #call, doca_error_get_name(rc_));     \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

/* ---- CPU time of the process's threads (/proc/self/task/<tid>/schedstat: ns on CPU) -------- */

struct cpu_snap {
	uint64_t main_ns;  /* the main thread: the PE's callbacks and the queues' consumers */
	uint64_t other_ns; /* every other thread: the engine threads (and the peer's threads) */
	int threads;
};

static uint64_t task_cpu_ns(const char *tid)
{
	char path[300]; /* a d_name is at most 255 bytes */

	snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", tid);
	return bench_read_u64(path);
}

static void cpu_snap(struct cpu_snap *s)
{
	char self[32];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");

	memset(s, 0, sizeof(*s));
	if (d == NULL)
		return;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (strcmp(e->d_name, self) == 0)
			s->main_ns += task_cpu_ns(e->d_name);
		else
			s->other_ns += task_cpu_ns(e->d_name);
		s->threads++;
	}
	closedir(d);
}

static void print_cpu(const char *prefix, const struct cpu_snap *a, const struct cpu_snap *b,
		      double secs)
{
	printf("%scpu_main_pct=%.0f\n", prefix, (double)(b->main_ns - a->main_ns) / secs / 1e7);
	printf("%scpu_other_pct=%.0f\n", prefix, (double)(b->other_ns - a->other_ns) / secs / 1e7);
	printf("%sthreads=%d\n", prefix, b->threads);
}

/* ---- devices -------------------------------------------------------------------------------- */

static struct doca_devinfo **g_list;
static uint32_t g_nb_devs;

static void devices_load(const char *decls)
{
	setenv("SOFTDPU_DEVICES", decls, 1);
	SETUP(doca_devinfo_create_list(&g_list, &g_nb_devs));
}

static struct doca_dev *dev_open(const char *name)
{
	char buf[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	struct doca_dev *dev = NULL;

	for (uint32_t i = 0; i < g_nb_devs; i++)
		if (doca_devinfo_get_ibdev_name(g_list[i], buf, sizeof(buf)) == DOCA_SUCCESS &&
		    strcmp(buf, name) == 0) {
			SETUP(doca_dev_open(g_list[i], &dev));
			return dev;
		}
	fprintf(stderr,
		"eth_cpu: device %s is not listed (is its provider on "
		"SOFTDPU_PROVIDER_PATH? see the warnings above)\n",
		name);
	exit(2);
}

/* ---- memory: task buffers ------------------------------------------------------------------- */

static uint8_t *g_mem;
static size_t g_mem_size;
static struct doca_mmap *g_mmap;
static struct doca_buf_inventory *g_inv;

static void mem_init(size_t nb_slots, struct doca_dev *const *devs, int ndevs)
{
	g_mem_size = nb_slots * SLOT;
	g_mem = aligned_alloc(4096, g_mem_size);
	if (g_mem == NULL) {
		fprintf(stderr, "eth_cpu: out of memory\n");
		exit(2);
	}
	memset(g_mem, 0, g_mem_size);
	SETUP(doca_mmap_create(&g_mmap));
	SETUP(doca_mmap_set_memrange(g_mmap, g_mem, g_mem_size));
	for (int i = 0; i < ndevs; i++)
		SETUP(doca_mmap_add_dev(g_mmap, devs[i]));
	SETUP(doca_mmap_start(g_mmap));
	SETUP(doca_buf_inventory_create(nb_slots, &g_inv));
	SETUP(doca_buf_inventory_start(g_inv));
}

static void mem_fini(void)
{
	SETUP(doca_buf_inventory_destroy(g_inv));
	SETUP(doca_mmap_destroy(g_mmap));
	free(g_mem);
}

/* ---- the PE loop ---------------------------------------------------------------------------- */

static struct doca_pe *g_pe;
static doca_notification_handle_t g_pe_fd = (doca_notification_handle_t)-1;

/* Nothing to do for a while: sleep on the PE's handle (at most 1 ms). */
static void pe_idle(void)
{
	if ((int)g_pe_fd >= 0 && doca_pe_request_notification(g_pe) == DOCA_SUCCESS) {
		struct pollfd pfd = {.fd = (int)g_pe_fd, .events = POLLIN};

		if (poll(&pfd, 1, 1) == 1)
			(void)doca_pe_clear_notification(g_pe, g_pe_fd);
	} else {
		struct timespec nap = {0, 50 * 1000};

		nanosleep(&nap, NULL);
	}
}

static void run_until(double end)
{
	unsigned int n = 0, idle = 0;

	for (;;) {
		if ((++n & 63) == 0 && now_s() >= end)
			return;
		if (doca_pe_progress(g_pe)) {
			idle = 0;
			continue;
		}
		if (++idle >= g_opt.spins) {
			idle = 0;
			pe_idle();
		}
	}
}

static void wait_idle(struct doca_ctx *ctx)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	double end = now_s() + 5;

	while (now_s() < end) {
		SETUP(doca_ctx_get_state(ctx, &st));
		if (st == DOCA_CTX_STATE_IDLE)
			return;
		if (!doca_pe_progress(g_pe)) {
			struct timespec nap = {0, 200 * 1000};

			nanosleep(&nap, NULL);
		}
	}
	fprintf(stderr, "eth_cpu: a context did not stop within 5 s (state %d)\n", (int)st);
	exit(2);
}

/* ---- the receive side: REGULAR tasks re-submitted from their callbacks ---------------------- */

static struct {
	struct doca_eth_rxq *rxq;
	struct doca_buf **bufs;
	uint32_t nb;
	uint64_t packets, bytes;
	uint64_t wrong_len, errors;
	int check_seq; /* gen frames: the sequence must go 0, 1, 2, ... */
	uint64_t next_seq, seq_errors;
} g_rx;

static void recv_ok(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
		    union doca_data ctx_user_data)
{
	struct doca_buf *pkt = g_rx.bufs[task_user_data.u64];
	size_t len = 0;

	(void)ctx_user_data;
	(void)doca_buf_get_data_len(pkt, &len);
	g_rx.packets++;
	g_rx.bytes += len;
	if (len != g_opt.size)
		g_rx.wrong_len++;
	if (g_rx.check_seq && len >= SDP_GEN_FRAME_MIN) {
		const uint8_t *p =
			g_mem + task_user_data.u64 * SLOT + SDP_GEN_L2L3L4_LEN + SDP_GEN_OFF_SEQ;
		uint64_t seq = 0;

		for (int i = 0; i < 8; i++)
			seq = seq << 8 | p[i];
		if (seq != g_rx.next_seq)
			g_rx.seq_errors++;
		g_rx.next_seq = seq + 1;
	}
	if (doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(task)) != DOCA_SUCCESS)
		doca_task_free(doca_eth_rxq_task_recv_as_doca_task(task));
}

static void recv_err(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	struct doca_task *t = doca_eth_rxq_task_recv_as_doca_task(task);

	(void)task_user_data;
	(void)ctx_user_data;
	if (doca_task_get_status(t) != DOCA_ERROR_IO_FAILED) /* IO_FAILED: flushed at stop */
		g_rx.errors++;
	doca_task_free(t);
}

/* Slots [first, first + tasks) of the memory are the receive buffers. */
static void rx_start(struct doca_dev *dev, uint32_t first)
{
	g_rx.nb = g_opt.tasks;
	g_rx.bufs = calloc(g_rx.nb, sizeof(*g_rx.bufs));
	if (g_rx.bufs == NULL)
		exit(2);
	SETUP(doca_eth_rxq_create(dev, g_rx.nb, SLOT, &g_rx.rxq));
	SETUP(doca_eth_rxq_set_type(g_rx.rxq, DOCA_ETH_RXQ_TYPE_REGULAR));
	SETUP(doca_eth_rxq_task_recv_set_conf(g_rx.rxq, recv_ok, recv_err, g_rx.nb));
	SETUP(doca_pe_connect_ctx(g_pe, doca_eth_rxq_as_doca_ctx(g_rx.rxq)));
	SETUP(doca_ctx_start(doca_eth_rxq_as_doca_ctx(g_rx.rxq)));
	for (uint32_t i = 0; i < g_rx.nb; i++) {
		struct doca_eth_rxq_task_recv *t = NULL;

		SETUP(doca_buf_inventory_buf_get_by_addr(g_inv, g_mmap, g_mem + (first + i) * SLOT,
							 SLOT, &g_rx.bufs[i]));
		SETUP(doca_eth_rxq_task_recv_allocate_init(g_rx.rxq, g_rx.bufs[i],
							   (union doca_data){.u64 = i}, &t));
		SETUP(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t)));
	}
}

static void rx_stop(void)
{
	doca_error_t rc = doca_ctx_stop(doca_eth_rxq_as_doca_ctx(g_rx.rxq));

	if (rc != DOCA_SUCCESS && rc != DOCA_ERROR_IN_PROGRESS)
		SETUP(rc);
	wait_idle(doca_eth_rxq_as_doca_ctx(g_rx.rxq));
	SETUP(doca_eth_rxq_destroy(g_rx.rxq));
	for (uint32_t i = 0; i < g_rx.nb; i++)
		SETUP(doca_buf_dec_refcount(g_rx.bufs[i], NULL));
	free(g_rx.bufs);
}

/*
 * Warm up, then count received frames for g_opt.secs; edge (when not NULL) runs right at the
 * window's start (0) and end (1). Prints packets, seconds, pps and the threads' CPU; returns pps.
 */
static double rx_window(void (*edge)(int end))
{
	struct cpu_snap c0, c1;
	uint64_t p0;
	double t0, t1;

	run_until(now_s() + WARMUP_S);
	if (edge != NULL)
		edge(0);
	p0 = g_rx.packets;
	cpu_snap(&c0);
	t0 = now_s();
	run_until(t0 + g_opt.secs);
	t1 = now_s();
	cpu_snap(&c1);
	if (edge != NULL)
		edge(1);
	printf("packets=%llu\n", (unsigned long long)(g_rx.packets - p0));
	printf("seconds=%.3f\n", t1 - t0);
	printf("pps=%.0f\n", (double)(g_rx.packets - p0) / (t1 - t0));
	print_cpu("", &c0, &c1, t1 - t0);
	return (double)(g_rx.packets - p0) / (t1 - t0);
}

static void rx_report_checks(void)
{
	struct sdp_eth_rxq_counters rc;

	SETUP(sdp_eth_rxq_get_counters(g_rx.rxq, &rc));
	printf("rxq_drops=%llu\n", (unsigned long long)rc.drops);
	printf("rxq_ring_full=%llu\n", (unsigned long long)rc.ring_full);
	if (g_rx.wrong_len != 0)
		fail_check("frames of another length than -s", g_rx.wrong_len);
	if (g_rx.errors != 0)
		fail_check("receive tasks completed with an error", g_rx.errors);
	if (g_rx.seq_errors != 0)
		fail_check("gen sequence gaps or duplicates", g_rx.seq_errors);
}

/* ---- the send side (loop): send tasks re-submitted from their callbacks --------------------- */

static struct {
	struct doca_eth_txq *txq;
	struct doca_buf **bufs;
	uint32_t nb;
	uint64_t sent, errors;
	int stop;
} g_tx;

static void send_ok(struct doca_eth_txq_task_send *task, union doca_data task_user_data,
		    union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	g_tx.sent++;
	/* no flush: the frames re-submitted by one progress call go in one burst at the next */
	if (g_tx.stop || doca_task_submit_ex(doca_eth_txq_task_send_as_doca_task(task),
					     DOCA_TASK_SUBMIT_FLAG_NONE) != DOCA_SUCCESS)
		doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
}

static void send_err(struct doca_eth_txq_task_send *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	if (!g_tx.stop)
		g_tx.errors++;
	doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
}

/* A frame of len bytes: local experimental ethertype, a counter in the payload. */
static void frame_fill(uint8_t *p, uint32_t len, uint32_t i)
{
	static const uint8_t hdr[14] = {0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x88, 0xb5};

	for (uint32_t k = 14; k < len; k++)
		p[k] = (uint8_t)(k + i);
	memcpy(p, hdr, sizeof(hdr));
	memcpy(p + 14, &i, sizeof(i));
}

/* Slots [first, first + tasks) hold the frames to send. */
static void tx_start(struct doca_dev *dev, uint32_t first)
{
	g_tx.nb = g_opt.tasks;
	g_tx.bufs = calloc(g_tx.nb, sizeof(*g_tx.bufs));
	if (g_tx.bufs == NULL)
		exit(2);
	SETUP(doca_eth_txq_create(dev, g_tx.nb, &g_tx.txq));
	SETUP(doca_eth_txq_set_type(g_tx.txq, DOCA_ETH_TXQ_TYPE_REGULAR));
	SETUP(doca_eth_txq_task_send_set_conf(g_tx.txq, send_ok, send_err, g_tx.nb));
	SETUP(doca_pe_connect_ctx(g_pe, doca_eth_txq_as_doca_ctx(g_tx.txq)));
	SETUP(doca_ctx_start(doca_eth_txq_as_doca_ctx(g_tx.txq)));
	for (uint32_t i = 0; i < g_tx.nb; i++) {
		struct doca_eth_txq_task_send *t = NULL;
		uint8_t *p = g_mem + (first + i) * SLOT;

		frame_fill(p, g_opt.size, i);
		SETUP(doca_buf_inventory_buf_get_by_data(g_inv, g_mmap, p, g_opt.size,
							 &g_tx.bufs[i]));
		SETUP(doca_eth_txq_task_send_allocate_init(g_tx.txq, g_tx.bufs[i],
							   (union doca_data){.u64 = i}, &t));
		SETUP(doca_task_submit(doca_eth_txq_task_send_as_doca_task(t)));
	}
}

static void tx_stop(void)
{
	doca_error_t rc;

	g_tx.stop = 1;
	rc = doca_ctx_stop(doca_eth_txq_as_doca_ctx(g_tx.txq));
	if (rc != DOCA_SUCCESS && rc != DOCA_ERROR_IN_PROGRESS)
		SETUP(rc);
	wait_idle(doca_eth_txq_as_doca_ctx(g_tx.txq));
	SETUP(doca_eth_txq_destroy(g_tx.txq));
	for (uint32_t i = 0; i < g_tx.nb; i++)
		SETUP(doca_buf_dec_refcount(g_tx.bufs[i], NULL));
	free(g_tx.bufs);
	if (g_tx.errors != 0)
		fail_check("send tasks completed with an error", g_tx.errors);
}

/* ---- peer: a memcpy ring between two threads ------------------------------------------------ */

struct copy_ring {
	_Alignas(64) atomic_uint_fast64_t head; /* written by the producer */
	_Alignas(64) atomic_uint_fast64_t tail; /* written by the consumer */
	_Alignas(64) atomic_int stop;
	uint64_t consumed;
	uint32_t lens[RING_SLOTS];
	uint8_t *slots; /* RING_SLOTS * SLOT */
	uint8_t *src;	/* frames to copy in (like the send tasks' buffers) */
	uint8_t *dst;	/* buffers to copy out into (like the receive tasks' buffers) */
};

static void *copy_producer(void *arg)
{
	struct copy_ring *r = arg;
	uint64_t head = 0, tail = 0;
	uint32_t i = 0;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		if (head - tail == RING_SLOTS) {
			tail = atomic_load_explicit(&r->tail, memory_order_acquire);
			if (head - tail == RING_SLOTS) {
				sched_yield();
				continue;
			}
		}
		memcpy(r->slots + (head % RING_SLOTS) * SLOT, r->src + (size_t)i * SLOT,
		       g_opt.size);
		r->lens[head % RING_SLOTS] = g_opt.size;
		atomic_store_explicit(&r->head, ++head, memory_order_release);
		i = (i + 1) % g_opt.tasks;
	}
	return NULL;
}

static void *copy_consumer(void *arg)
{
	struct copy_ring *r = arg;
	uint64_t head = 0, tail = 0;
	uint32_t i = 0;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		if (tail == head) {
			head = atomic_load_explicit(&r->head, memory_order_acquire);
			if (tail == head) {
				sched_yield();
				continue;
			}
		}
		memcpy(r->dst + (size_t)i * SLOT, r->slots + (tail % RING_SLOTS) * SLOT,
		       r->lens[tail % RING_SLOTS]);
		atomic_store_explicit(&r->tail, ++tail, memory_order_release);
		__atomic_store_n(&r->consumed, tail, __ATOMIC_RELAXED);
		i = (i + 1) % g_opt.tasks;
	}
	return NULL;
}

static double peer_memcpy_ring(void)
{
	struct copy_ring *r = aligned_alloc(64, sizeof(*r));
	pthread_t prod, cons;
	struct cpu_snap c0, c1;
	struct timespec warm = {0, (long)(WARMUP_S * 1e9)};
	uint64_t n0, n1;
	double t0, t1;
	size_t bytes = (size_t)SLOT * (RING_SLOTS + 2 * g_opt.tasks);

	if (r == NULL)
		exit(2);
	memset(r, 0, sizeof(*r));
	r->slots = aligned_alloc(4096, bytes);
	if (r->slots == NULL)
		exit(2);
	memset(r->slots, 0, bytes);
	r->src = r->slots + (size_t)SLOT * RING_SLOTS;
	r->dst = r->src + (size_t)SLOT * g_opt.tasks;
	for (uint32_t i = 0; i < g_opt.tasks; i++)
		frame_fill(r->src + (size_t)i * SLOT, g_opt.size, i);
	if (pthread_create(&prod, NULL, copy_producer, r) != 0 ||
	    pthread_create(&cons, NULL, copy_consumer, r) != 0) {
		fprintf(stderr, "eth_cpu: pthread_create failed\n");
		exit(2);
	}
	nanosleep(&warm, NULL);
	n0 = __atomic_load_n(&r->consumed, __ATOMIC_RELAXED);
	cpu_snap(&c0);
	t0 = now_s();
	for (double t = t0; t < t0 + g_opt.secs; t = now_s()) {
		struct timespec nap = {0, 10 * 1000 * 1000};

		nanosleep(&nap, NULL);
	}
	n1 = __atomic_load_n(&r->consumed, __ATOMIC_RELAXED);
	t1 = now_s();
	cpu_snap(&c1);
	atomic_store(&r->stop, 1);
	pthread_join(prod, NULL);
	pthread_join(cons, NULL);
	if (memcmp(r->dst, r->src, g_opt.size) != 0)
		fail_check("memcpy ring: frame 0 arrived changed", 0);
	printf("peer=memcpy_ring\n");
	printf("peer_packets=%llu\n", (unsigned long long)(n1 - n0));
	printf("peer_seconds=%.3f\n", t1 - t0);
	printf("peer_pps=%.0f\n", (double)(n1 - n0) / (t1 - t0));
	print_cpu("peer_", &c0, &c1, t1 - t0);
	free(r->slots);
	free(r);
	return (double)(n1 - n0) / (t1 - t0);
}

/* ---- peer: the gen provider's rx_burst, one thread ------------------------------------------ */

static double peer_gen_raw(struct doca_dev *dev)
{
	const struct sdp_eth_port_ops *ops = sdp_dev_get_eth_ops(dev);
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 1, .nb_txq = 1, .ring_size = 1024};
	struct sdp_eth_port_info info;
	struct sdp_eth_port *port = NULL;
	struct sdp_pkt pkts[RAW_BURST];
	struct cpu_snap c0, c1;
	uint8_t *bufs = aligned_alloc(4096, (size_t)RAW_BURST * SLOT);
	uint64_t n = 0, n0 = 0, next = 0, bad = 0;
	double t0 = 0, t1, start, end;
	int counting = 0;

	if (ops == NULL || bufs == NULL) {
		fprintf(stderr, "eth_cpu: no port ops for the gen device\n");
		exit(2);
	}
	SETUP(ops->port_open(sdp_dev_get_priv(dev), &cfg, &port, &info));
	start = now_s();
	end = start + WARMUP_S + g_opt.secs;
	for (unsigned int it = 0;; it++) {
		uint16_t got;

		if ((it & 15) == 0) {
			double t = now_s();

			if (!counting && t >= start + WARMUP_S) {
				counting = 1;
				n0 = n;
				cpu_snap(&c0);
				t0 = t;
			}
			if (t >= end)
				break;
		}
		for (int k = 0; k < RAW_BURST; k++)
			pkts[k] = (struct sdp_pkt){.data = bufs + (size_t)k * SLOT, .cap = SLOT};
		got = ops->rx_burst(port, 0, pkts, RAW_BURST);
		for (uint16_t k = 0; k < got; k++) {
			const uint8_t *p = (const uint8_t *)pkts[k].data + SDP_GEN_L2L3L4_LEN +
					   SDP_GEN_OFF_SEQ;
			uint64_t seq = 0;

			for (int b = 0; b < 8; b++)
				seq = seq << 8 | p[b];
			bad += seq != next || pkts[k].len != g_opt.size;
			next = seq + 1;
		}
		n += got;
	}
	t1 = now_s();
	cpu_snap(&c1);
	ops->port_close(port);
	free(bufs);
	if (bad != 0)
		fail_check("gen rx_burst: sequence gaps or wrong lengths", bad);
	printf("peer=gen_rx_burst\n");
	printf("peer_packets=%llu\n", (unsigned long long)(n - n0));
	printf("peer_seconds=%.3f\n", t1 - t0);
	printf("peer_pps=%.0f\n", (double)(n - n0) / (t1 - t0));
	print_cpu("peer_", &c0, &c1, t1 - t0);
	return (double)(n - n0) / (t1 - t0);
}

/* ---- reference: the loop wire alone, driven through its port ops by two threads --------- */

struct loop_raw {
	const struct sdp_eth_port_ops *ops;
	struct sdp_eth_port *tx, *rx;
	atomic_int stop;
	uint64_t sent, received, wrong; /* written by one thread each, read with __atomic loads */
	uint8_t *mem; /* RAW_BURST frames to send, then RAW_BURST receive buffers */
};

/* Sleep until fd is readable, at most 1 ms (no fd: 50 us). */
static void fd_wait(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	struct timespec nap = {0, 50 * 1000};

	if (fd < 0 || poll(&pfd, 1, 1) < 0)
		nanosleep(&nap, NULL);
}

static void *loop_raw_tx(void *arg)
{
	struct loop_raw *r = arg;
	struct sdp_pkt pkts[RAW_BURST];
	uint64_t sent = 0;

	for (int k = 0; k < RAW_BURST; k++)
		pkts[k] = (struct sdp_pkt){.data = r->mem + (size_t)k * SLOT, .len = g_opt.size};
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		uint16_t n = r->ops->tx_burst(r->tx, 0, pkts, RAW_BURST);

		sent += n;
		__atomic_store_n(&r->sent, sent, __ATOMIC_RELAXED);
		if (n < RAW_BURST)
			fd_wait(r->ops->tx_fd(r->tx, 0));
	}
	return NULL;
}

static void *loop_raw_rx(void *arg)
{
	struct loop_raw *r = arg;
	struct sdp_pkt pkts[RAW_BURST];
	uint64_t got = 0, wrong = 0;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		uint16_t n;

		for (int k = 0; k < RAW_BURST; k++)
			pkts[k] = (struct sdp_pkt){.data = r->mem + (size_t)(RAW_BURST + k) * SLOT,
						   .cap = SLOT};
		n = r->ops->rx_burst(r->rx, 0, pkts, RAW_BURST);
		for (uint16_t k = 0; k < n; k++)
			wrong += pkts[k].len != g_opt.size;
		got += n;
		__atomic_store_n(&r->received, got, __ATOMIC_RELAXED);
		if (n == 0)
			fd_wait(r->ops->rx_fd(r->rx, 0));
	}
	r->wrong = wrong;
	return NULL;
}

/* Bursts of RAW_BURST through the loop ports of a (tx) and b (rx); prints port_* lines. */
static double loop_port_raw(struct doca_dev *a, struct doca_dev *b)
{
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 1, .nb_txq = 1, .ring_size = 1024};
	struct sdp_eth_port_info info;
	struct loop_raw r;
	struct timespec warm = {0, (long)(WARMUP_S * 1e9)};
	pthread_t tt, rt;
	uint64_t n0, n1;
	double t0, t1;

	memset(&r, 0, sizeof(r));
	r.ops = sdp_dev_get_eth_ops(a);
	r.mem = aligned_alloc(4096, (size_t)2 * RAW_BURST * SLOT);
	if (r.ops == NULL || r.mem == NULL) {
		fprintf(stderr, "eth_cpu: no port ops for the loop device\n");
		exit(2);
	}
	for (int k = 0; k < RAW_BURST; k++)
		frame_fill(r.mem + (size_t)k * SLOT, g_opt.size, (uint32_t)k);
	SETUP(r.ops->port_open(sdp_dev_get_priv(b), &cfg, &r.rx, &info));
	SETUP(r.ops->port_open(sdp_dev_get_priv(a), &cfg, &r.tx, &info));
	if (pthread_create(&rt, NULL, loop_raw_rx, &r) != 0 ||
	    pthread_create(&tt, NULL, loop_raw_tx, &r) != 0) {
		fprintf(stderr, "eth_cpu: pthread_create failed\n");
		exit(2);
	}
	nanosleep(&warm, NULL);
	n0 = __atomic_load_n(&r.received, __ATOMIC_RELAXED);
	t0 = now_s();
	for (double t = t0; t < t0 + g_opt.secs; t = now_s()) {
		struct timespec nap = {0, 10 * 1000 * 1000};

		nanosleep(&nap, NULL);
	}
	n1 = __atomic_load_n(&r.received, __ATOMIC_RELAXED);
	t1 = now_s();
	atomic_store(&r.stop, 1);
	pthread_join(tt, NULL);
	pthread_join(rt, NULL);
	r.ops->port_close(r.tx);
	r.ops->port_close(r.rx);
	free(r.mem);
	if (r.wrong != 0)
		fail_check("loop ports: frames of another length", r.wrong);
	if (r.received > r.sent)
		fail_check("loop ports: more frames received than sent", r.received - r.sent);
	printf("port_packets=%llu\n", (unsigned long long)(n1 - n0));
	printf("port_pps=%.0f\n", (double)(n1 - n0) / (t1 - t0));
	return (double)(n1 - n0) / (t1 - t0);
}

/* ---- the cases ------------------------------------------------------------------------------ */

static void pe_init(void)
{
	SETUP(doca_pe_create(&g_pe));
	if (doca_pe_get_notification_handle(g_pe, &g_pe_fd) != DOCA_SUCCESS)
		g_pe_fd = (doca_notification_handle_t)-1;
}

static void print_ratio(double pps, double peer)
{
	printf("ratio=%.3f\n", peer > 0 ? pps / peer : 0.0);
}

static void case_loop(void)
{
	char decls[256], na[32], nb[32];
	struct doca_dev *devs[2];
	double pps, peer, port;

	snprintf(na, sizeof(na), "bla%d", (int)getpid());
	snprintf(nb, sizeof(nb), "blb%d", (int)getpid());
	snprintf(decls, sizeof(decls),
		 "loop:name=%s,peer=%s,depth=1024;loop:name=%s,peer=%s,depth=1024", na, nb, nb, na);
	devices_load(decls);
	devs[0] = dev_open(na);
	devs[1] = dev_open(nb);
	printf("case=loop\nsize=%u\n", g_opt.size);
	/* the wire alone first: the engine opens the same ports when the queues start */
	port = g_opt.no_peer ? 0 : loop_port_raw(devs[0], devs[1]);
	mem_init(2 * (size_t)g_opt.tasks, devs, 2);
	pe_init();
	rx_start(devs[1], 0);
	tx_start(devs[0], g_opt.tasks);
	pps = rx_window(NULL);
	tx_stop();
	run_until(now_s() + 0.05); /* frames still on the wire */
	printf("sent=%llu\nreceived=%llu\n", (unsigned long long)g_tx.sent,
	       (unsigned long long)g_rx.packets);
	if (g_rx.packets > g_tx.sent)
		fail_check("more frames received than sent", g_rx.packets - g_tx.sent);
	rx_report_checks();
	rx_stop();
	SETUP(doca_pe_destroy(g_pe));
	mem_fini();
	SETUP(doca_dev_close(devs[1]));
	SETUP(doca_dev_close(devs[0]));
	peer = g_opt.no_peer ? 0 : peer_memcpy_ring();
	print_ratio(pps, peer);
	printf("port_ratio=%.3f\n", port > 0 ? pps / port : 0.0);
}

static void case_gen(void)
{
	char decls[256], name[32];
	struct doca_dev *dev;
	double pps, peer;

	snprintf(name, sizeof(name), "bg%d", (int)getpid());
	snprintf(decls, sizeof(decls), "gen:name=%s,size=%u", name, g_opt.size);
	devices_load(decls);
	dev = dev_open(name);
	printf("case=gen\nsize=%u\n", g_opt.size);
	/* the peer first: the device has one port at a time */
	peer = g_opt.no_peer ? 0 : peer_gen_raw(dev);
	mem_init(g_opt.tasks, &dev, 1);
	pe_init();
	g_rx.check_seq = 1;
	rx_start(dev, 0);
	pps = rx_window(NULL);
	rx_report_checks();
	rx_stop();
	SETUP(doca_pe_destroy(g_pe));
	mem_fini();
	SETUP(doca_dev_close(dev));
	print_ratio(pps, peer);
}

static struct doca_dev *g_afp_dev;
static struct sdp_eth_port_counters g_afp_pc[2];
static uint64_t g_afp_offered[2];
static double g_afp_t[2];

/* The offered load (the interface's counter) and the kernel's drops around the window. */
static void afpacket_edge(int end)
{
	SETUP(sdp_eth_dev_get_port_counters(g_afp_dev, &g_afp_pc[end]));
	g_afp_offered[end] = bench_iface_rx_packets(g_opt.iface);
	g_afp_t[end] = now_s();
}

/* A device on a Linux interface (afpacket or afxdp: kind) into a receive queue. */
static void case_iface(const char *kind)
{
	char decls[256], name[32];
	uint32_t frames = g_opt.frames;

	if (g_opt.iface == NULL) {
		fprintf(stderr, "eth_cpu: %s needs -i iface\n", kind);
		exit(2);
	}
	if (strcmp(kind, "afxdp") == 0) {
		/* AF_XDP rings are powers of two, 32768 at most */
		uint32_t p = 64;

		while (p < frames && p < 32768)
			p <<= 1;
		frames = p;
	}
	snprintf(name, sizeof(name), "b%s%d", kind, (int)getpid());
	snprintf(decls, sizeof(decls), "%s:iface=%s,name=%s,frames=%u", kind, g_opt.iface, name,
		 frames);
	devices_load(decls);
	g_afp_dev = dev_open(name);
	mem_init(g_opt.tasks, &g_afp_dev, 1);
	pe_init();
	rx_start(g_afp_dev, 0);
	printf("case=%s\nsize=%u\n", kind, g_opt.size);
	rx_window(afpacket_edge);
	printf("offered_pps=%.0f\n",
	       (double)(g_afp_offered[1] - g_afp_offered[0]) / (g_afp_t[1] - g_afp_t[0]));
	printf("port_drops=%llu\n",
	       (unsigned long long)(g_afp_pc[1].rx_port_drops - g_afp_pc[0].rx_port_drops));
	rx_report_checks();
	rx_stop();
	SETUP(doca_pe_destroy(g_pe));
	mem_fini();
	SETUP(doca_dev_close(g_afp_dev));
}

static void usage(void)
{
	fprintf(stderr, "usage: eth_cpu loop|gen|afpacket|afxdp [-s size] [-t secs] [-n tasks] "
			"[-i iface] [-f frames] [-w spins] [-x]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c;

	if (argc < 2)
		usage();
	g_opt.mode = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "s:t:n:i:f:xw:")) != -1) {
		switch (c) {
		case 's':
			g_opt.size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			g_opt.secs = strtod(optarg, NULL);
			break;
		case 'n':
			g_opt.tasks = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'i':
			g_opt.iface = optarg;
			break;
		case 'f':
			g_opt.frames = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'x':
			g_opt.no_peer = 1;
			break;
		case 'w':
			g_opt.spins = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (g_opt.size < 60 || g_opt.size > 1514 || g_opt.secs <= 0 || g_opt.secs > 60 ||
	    g_opt.tasks < 1 || g_opt.tasks > 4096) {
		fprintf(stderr, "eth_cpu: size 60-1514, secs (0, 60], tasks 1-4096\n");
		return 2;
	}
	if (getenv("SOFTDPU_DEVICE_CONFIG") == NULL)
		setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	if (strcmp(g_opt.mode, "loop") == 0)
		case_loop();
	else if (strcmp(g_opt.mode, "gen") == 0)
		case_gen();
	else if (strcmp(g_opt.mode, "afpacket") == 0 || strcmp(g_opt.mode, "afxdp") == 0)
		case_iface(g_opt.mode);
	else
		usage();
	if (g_list != NULL)
		SETUP(doca_devinfo_destroy_list(g_list));
	fflush(stdout);
	return g_check_failed ? 1 : 0;
}
