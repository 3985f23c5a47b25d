/*
 * The receive ring of libdoca_eth's queues on two loop devices: ring-full behaviour in both
 * overflow modes with exact counts (CYCLIC: the newest ring-size frames survive and every other
 * one is counted as overwritten; BACKPRESSURE: the engine holds the wire, nothing is lost, every
 * frame arrives exactly once and in order once the consumer comes back), MANAGED_MEMPOOL batch
 * events over the application's packet buffer (every byte checked, the batch limits kept),
 * event mode (the PE's notification handle wakes for a received frame and stays quiet without
 * one), and the bad arguments and wrong states of the new calls.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <poll.h>
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
#include "softdpu/eth.h"
#include "t_helpers.h"
#include "t_nic.h"

#define NSEND 100    /* frames per scenario */
#define RING 16	     /* receive ring slots */
#define FLEN 64	     /* frame length */
#define NMANAGED 300 /* frames of the managed-mempool scenario */

static uint8_t g_send_mem[NSEND * FLEN];
static uint8_t g_recv_mem[RING * 2048];
static uint8_t g_pkt_mem[1 << 20] __attribute__((aligned(4096)));

static struct doca_pe *g_pe;
static struct doca_dev *g_dev_a, *g_dev_b;
static struct doca_eth_txq *g_txq;
static struct doca_buf_inventory *g_inv;
static struct doca_mmap *g_send_mmap, *g_recv_mmap;
static int g_sent, g_send_err;
static uint32_t g_base; /* sequence number of the scenario's first frame */

/* received sequence numbers, in arrival order */
static uint32_t g_seq[NMANAGED];
static int g_nrecv, g_recv_err;

static void frame_fill(uint8_t *buf, uint32_t seq, uint32_t len)
{
	memcpy(buf, "\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a", 12);
	buf[12] = 0x88; /* local experimental ethertype: no checksum offload applies */
	buf[13] = 0xb5;
	memcpy(buf + 14, &seq, sizeof(seq));
	for (uint32_t k = 18; k < len; k++)
		buf[k] = (uint8_t)(seq * 13 + k);
}

static uint32_t frame_check(const uint8_t *buf, size_t len)
{
	uint8_t want[2048];
	uint32_t seq;

	if (len < 18) {
		t_fail("received a frame of %zu bytes", len);
		return UINT32_MAX;
	}
	memcpy(&seq, buf + 14, sizeof(seq));
	frame_fill(want, seq, (uint32_t)len);
	if (memcmp(want, buf, len) != 0)
		t_fail("frame %u differs from what was sent", seq);
	return seq;
}

static void progress_for(int ms)
{
	struct timespec t = {0, 1000000};

	for (int i = 0; i < ms; i++)
		if (!doca_pe_progress(g_pe))
			nanosleep(&t, NULL);
}

/* Progress until *v reaches want (10 s at most: the caller checks *v). */
static void progress_until(const int *v, int want)
{
	double end = t_now() + 10.0;

	while (*v < want && t_now() < end)
		if (!doca_pe_progress(g_pe))
			usleep(500);
}

/* ---- sending ----------------------------------------------------------------------------- */

static void send_ok(struct doca_eth_txq_task_send *task, union doca_data u, union doca_data c)
{
	struct doca_buf *pkt = NULL;

	(void)u;
	(void)c;
	(void)doca_eth_txq_task_send_get_pkt(task, &pkt);
	(void)doca_buf_dec_refcount(pkt, NULL);
	doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
	g_sent++;
}

static void send_err(struct doca_eth_txq_task_send *task, union doca_data u, union doca_data c)
{
	struct doca_buf *pkt = NULL;

	(void)u;
	(void)c;
	(void)doca_eth_txq_task_send_get_pkt(task, &pkt);
	(void)doca_buf_dec_refcount(pkt, NULL);
	doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
	g_send_err++;
}

/* Send n frames with sequence numbers g_base, g_base + 1, ... and wait until all are sent. */
static void send_frames(int n)
{
	int before = g_sent;

	for (int i = 0; i < n; i++) {
		struct doca_eth_txq_task_send *t = NULL;
		struct doca_buf *b = NULL;
		uint8_t *mem = g_send_mem + (size_t)i * FLEN;

		frame_fill(mem, g_base + (uint32_t)i, FLEN);
		T_OK(doca_buf_inventory_buf_get_by_data(g_inv, g_send_mmap, mem, FLEN, &b));
		T_OK(doca_eth_txq_task_send_allocate_init(g_txq, b, (union doca_data){0}, &t));
		T_OK(doca_task_submit(doca_eth_txq_task_send_as_doca_task(t)));
	}
	progress_until(&g_sent, before + n);
	T_EQ_INT(g_sent, before + n);
	T_EQ_INT(g_send_err, 0);
}

/* ---- REGULAR receive ------------------------------------------------------------------------ */

static void recv_ok(struct doca_eth_rxq_task_recv *task, union doca_data u, union doca_data c)
{
	struct doca_buf *pkt = NULL;
	void *data = NULL;
	size_t len = 0;

	(void)u;
	(void)c;
	T_OK(doca_eth_rxq_task_recv_get_pkt(task, &pkt));
	T_OK(doca_buf_get_data(pkt, &data));
	T_OK(doca_buf_get_data_len(pkt, &len));
	T_EQ_INT(len, FLEN);
	if (g_nrecv < NMANAGED)
		g_seq[g_nrecv] = frame_check(data, len);
	g_nrecv++;
	/* post it again */
	T_OK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(task)));
}

static void recv_err(struct doca_eth_rxq_task_recv *task, union doca_data u, union doca_data c)
{
	struct doca_buf *pkt = NULL;

	(void)u;
	(void)c;
	(void)doca_eth_rxq_task_recv_get_pkt(task, &pkt);
	(void)doca_buf_dec_refcount(pkt, NULL);
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(task));
	g_recv_err++;
}

static struct doca_eth_rxq *regular_rxq(enum sdp_eth_overflow mode)
{
	struct doca_eth_rxq *rxq = NULL;

	T_OK(doca_eth_rxq_create(g_dev_b, RING, 2048, &rxq));
	T_OK(doca_eth_rxq_task_recv_set_conf(rxq, recv_ok, recv_err, RING));
	T_STATUS(sdp_eth_rxq_set_ring_size(rxq, 24), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_eth_rxq_set_ring_size(rxq, 0), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_eth_rxq_set_ring_size(rxq, RING));
	T_STATUS(sdp_eth_rxq_set_overflow(rxq, (enum sdp_eth_overflow)9), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_eth_rxq_set_overflow(rxq, mode));
	T_OK(doca_pe_connect_ctx(g_pe, doca_eth_rxq_as_doca_ctx(rxq)));
	T_OK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rxq)));
	T_STATUS(sdp_eth_rxq_set_overflow(rxq, mode), DOCA_ERROR_BAD_STATE);
	T_STATUS(sdp_eth_rxq_set_ring_size(rxq, RING), DOCA_ERROR_BAD_STATE);
	return rxq;
}

static void post_tasks(struct doca_eth_rxq *rxq)
{
	for (int i = 0; i < RING; i++) {
		struct doca_eth_rxq_task_recv *t = NULL;
		struct doca_buf *b = NULL;

		T_OK(doca_buf_inventory_buf_get_by_addr(g_inv, g_recv_mmap, g_recv_mem + i * 2048,
							2048, &b));
		T_OK(doca_eth_rxq_task_recv_allocate_init(rxq, b, (union doca_data){0}, &t));
		T_OK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t)));
	}
}

static void stop_rxq(struct doca_eth_rxq *rxq)
{
	int err_before = g_recv_err;
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	doca_error_t status = doca_ctx_stop(doca_eth_rxq_as_doca_ctx(rxq));

	/* the posted tasks come back through the error callback, then the queue is IDLE */
	T_TRUE(status == DOCA_SUCCESS || status == DOCA_ERROR_IN_PROGRESS);
	progress_until(&g_recv_err, err_before + RING);
	T_EQ_INT(g_recv_err, err_before + RING);
	for (double end = t_now() + 10.0; st != DOCA_CTX_STATE_IDLE && t_now() < end;) {
		progress_for(1);
		T_OK(doca_ctx_get_state(doca_eth_rxq_as_doca_ctx(rxq), &st));
	}
	T_EQ_INT(st, DOCA_CTX_STATE_IDLE);
	T_OK(doca_eth_rxq_destroy(rxq));
}

/*
 * Wait until the engine (on its own thread) has dealt with want frames: each one is either
 * published into the ring (ring_packets, which counts a frame that a later one overwrote as
 * well: overwrites is a subset of it, not an outcome of its own) or dropped. 10 s at most;
 * running out of time is a failure of its own.
 */
static void wait_ring(struct doca_eth_rxq *rxq, uint64_t want, struct sdp_eth_rxq_counters *c)
{
	double end = t_now() + 10.0;

	for (;;) {
		T_OK(sdp_eth_rxq_get_counters(rxq, c));
		if (c->ring_packets + c->drops >= want)
			return;
		if (t_now() >= end)
			break;
		progress_for(1);
	}
	t_fail("the ring saw %llu published + %llu dropped frames in 10 s, expected %llu",
	       (unsigned long long)c->ring_packets, (unsigned long long)c->drops,
	       (unsigned long long)want);
}

/* Wait until the device's engine holds its wire for a full ring (10 s at most). */
static void wait_held(struct doca_dev *dev, struct sdp_eth_port_counters *pc)
{
	double end = t_now() + 10.0;

	for (;;) {
		T_OK(sdp_eth_dev_get_port_counters(dev, pc));
		if (pc->rx_wait >= 1)
			return;
		if (t_now() >= end)
			break;
		progress_for(1);
	}
	t_fail("the engine did not hold the wire for the full ring within 10 s");
}

/*
 * CYCLIC: nobody consumes while NSEND frames arrive; the engine never waits, so the ring ends
 * up with the newest RING frames and the other NSEND - RING were overwritten, each counted.
 */
static void test_cyclic(void)
{
	struct doca_eth_rxq *rxq = regular_rxq(SDP_ETH_OVERFLOW_CYCLIC);
	struct sdp_eth_rxq_counters c;

	g_base = 1000;
	g_nrecv = 0;
	send_frames(NSEND);
	wait_ring(rxq, NSEND, &c);
	T_EQ_INT(c.ring_packets, NSEND);
	T_EQ_INT(c.overwrites, NSEND - RING);
	T_EQ_INT(c.drops, 0);
	T_EQ_INT(c.ring_full, 1);
	T_EQ_INT(c.packets, 0);
	post_tasks(rxq);
	progress_until(&g_nrecv, RING);
	progress_for(20);
	T_EQ_INT(g_nrecv, RING);
	for (int i = 0; i < RING && i < g_nrecv; i++)
		T_EQ_INT(g_seq[i], g_base + NSEND - RING + (uint32_t)i);
	T_OK(sdp_eth_rxq_get_counters(rxq, &c));
	T_EQ_INT(c.packets, RING);
	T_EQ_INT(c.bytes, RING * FLEN);
	stop_rxq(rxq);
}

/*
 * BACKPRESSURE: nobody consumes; the engine fills the ring, marks it full once and then leaves
 * the wire alone (the loop wire and the sender hold the rest). When tasks are posted, every
 * frame arrives exactly once, in order, and nothing was dropped or overwritten.
 */
static void test_backpressure(void)
{
	struct doca_eth_rxq *rxq = regular_rxq(SDP_ETH_OVERFLOW_BACKPRESSURE);
	struct sdp_eth_rxq_counters c;
	struct sdp_eth_port_counters pc;

	g_base = 5000;
	g_nrecv = 0;
	send_frames(NSEND);
	wait_ring(rxq, RING, &c);
	/* the engine says it holds the wire (rx_wait): from then on it pushes nothing more */
	wait_held(g_dev_b, &pc);
	T_OK(sdp_eth_rxq_get_counters(rxq, &c));
	T_EQ_INT(c.ring_packets, RING);
	T_EQ_INT(c.ring_full, 1);
	T_EQ_INT(c.drops, 0);
	T_EQ_INT(c.overwrites, 0);
	T_OK(sdp_eth_dev_get_port_counters(g_dev_b, &pc));
	T_TRUE(pc.rx_wait >= 1);
	T_EQ_INT(pc.rx_packets, RING);
	post_tasks(rxq);
	progress_until(&g_nrecv, NSEND);
	progress_for(20);
	T_EQ_INT(g_nrecv, NSEND);
	for (int i = 0; i < NSEND && i < g_nrecv; i++)
		T_EQ_INT(g_seq[i], g_base + (uint32_t)i);
	T_OK(sdp_eth_rxq_get_counters(rxq, &c));
	T_EQ_INT(c.packets, NSEND);
	T_EQ_INT(c.ring_packets, NSEND);
	T_EQ_INT(c.drops, 0);
	T_EQ_INT(c.overwrites, 0);
	T_OK(sdp_eth_dev_get_port_counters(g_dev_b, &pc));
	T_EQ_INT(pc.rx_packets, NSEND);
	T_EQ_INT(pc.rx_unsteered, 0);
	stop_rxq(rxq);
	/* no queue of the device runs any more: its port is closed */
	T_STATUS(sdp_eth_dev_get_port_counters(g_dev_b, &pc), DOCA_ERROR_BAD_STATE);
	T_STATUS(sdp_eth_dev_get_port_counters(NULL, &pc), DOCA_ERROR_INVALID_VALUE);
}

/* ---- MANAGED_MEMPOOL ------------------------------------------------------------------------ */

static struct doca_eth_rxq *g_mrxq;
static int g_batches, g_batch_max_seen, g_batch_bad;

static void batch_ok(struct doca_eth_rxq_event_batch_managed_recv *ev, uint16_t n,
		     union doca_data user_data, doca_error_t status, struct doca_buf **pkts)
{
	T_EQ_INT(status, DOCA_SUCCESS);
	T_TRUE(user_data.u64 == 0xfeed);
	T_TRUE(doca_eth_rxq_event_batch_managed_recv_get_ctx(ev) ==
	       doca_eth_rxq_as_doca_ctx(g_mrxq));
	if (n == 0 || n > 32)
		g_batch_bad++;
	if (n > g_batch_max_seen)
		g_batch_max_seen = n;
	for (uint16_t i = 0; i < n; i++) {
		void *data = NULL;
		size_t len = 0;

		T_OK(doca_buf_get_data(pkts[i], &data));
		T_OK(doca_buf_get_data_len(pkts[i], &len));
		/* the packet lies in the application's packet buffer */
		T_TRUE((uint8_t *)data >= g_pkt_mem &&
		       (uint8_t *)data + len <= g_pkt_mem + sizeof(g_pkt_mem));
		T_EQ_INT(len, FLEN);
		if (g_nrecv < NMANAGED)
			g_seq[g_nrecv] = frame_check(data, len);
		g_nrecv++;
	}
	g_batches++;
	doca_eth_rxq_event_batch_managed_recv_pkt_array_free(pkts);
}

static void batch_err(struct doca_eth_rxq_event_batch_managed_recv *ev, uint16_t n,
		      union doca_data user_data, doca_error_t status, struct doca_buf **pkts)
{
	(void)ev;
	(void)n;
	(void)user_data;
	t_fail("batch error handler: %s", doca_error_get_name(status));
	doca_eth_rxq_event_batch_managed_recv_pkt_array_free(pkts);
}

static void test_managed(void)
{
	struct doca_mmap *pkt_mmap = NULL;
	struct sdp_eth_rxq_counters c;
	union doca_data ud = {.u64 = 0xfeed};
	uint32_t est = 0;
	int sent = 0;

	T_OK(doca_mmap_create(&pkt_mmap));
	T_OK(doca_mmap_set_memrange(pkt_mmap, g_pkt_mem, sizeof(g_pkt_mem)));
	T_OK(doca_mmap_add_dev(pkt_mmap, g_dev_b));
	T_OK(doca_mmap_start(pkt_mmap));
	T_OK(doca_eth_rxq_create(g_dev_b, 256, 2048, &g_mrxq));
	T_OK(doca_eth_rxq_set_type(g_mrxq, DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL));
	/* bad registrations */
	T_STATUS(doca_eth_rxq_event_batch_managed_recv_register(
			 g_mrxq, DOCA_EVENT_BATCH_EVENTS_NUMBER_1, DOCA_EVENT_BATCH_EVENTS_NUMBER_4,
			 ud, batch_ok, batch_err),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_event_batch_managed_recv_register(
			 g_mrxq, DOCA_EVENT_BATCH_EVENTS_NUMBER_32,
			 DOCA_EVENT_BATCH_EVENTS_NUMBER_1, ud, NULL, batch_err),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_event_batch_managed_recv_register(
			 NULL, DOCA_EVENT_BATCH_EVENTS_NUMBER_32, DOCA_EVENT_BATCH_EVENTS_NUMBER_1,
			 ud, batch_ok, batch_err),
		 DOCA_ERROR_INVALID_VALUE);
	T_TRUE(doca_eth_rxq_event_batch_managed_recv_get_ctx(NULL) == NULL);
	doca_eth_rxq_event_batch_managed_recv_pkt_array_free(NULL);
	T_OK(doca_eth_rxq_event_batch_managed_recv_register(
		g_mrxq, DOCA_EVENT_BATCH_EVENTS_NUMBER_32, DOCA_EVENT_BATCH_EVENTS_NUMBER_1, ud,
		batch_ok, batch_err));
	T_OK(doca_pe_connect_ctx(g_pe, doca_eth_rxq_as_doca_ctx(g_mrxq)));
	/* no packet buffer yet */
	T_STATUS(doca_ctx_start(doca_eth_rxq_as_doca_ctx(g_mrxq)), DOCA_ERROR_BAD_STATE);
	/* a packet buffer too small for one ring of one packet */
	T_OK(doca_eth_rxq_set_pkt_buf(g_mrxq, pkt_mmap, 0, 512));
	T_STATUS(doca_ctx_start(doca_eth_rxq_as_doca_ctx(g_mrxq)), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL, 0, 0, 2048,
						   256, 0, 0, 0, &est));
	T_TRUE(est > 0 && est <= sizeof(g_pkt_mem));
	T_OK(doca_eth_rxq_set_pkt_buf(g_mrxq, pkt_mmap, 0, sizeof(g_pkt_mem)));
	T_OK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(g_mrxq)));

	g_base = 20000;
	g_nrecv = 0;
	for (sent = 0; sent < NMANAGED; sent += NSEND) {
		send_frames(NSEND);
		g_base += NSEND;
	}
	progress_until(&g_nrecv, NMANAGED);
	progress_for(20);
	T_EQ_INT(g_nrecv, NMANAGED);
	T_EQ_INT(g_batch_bad, 0);
	T_TRUE(g_batches >= NMANAGED / 32);
	for (int i = 0; i < NMANAGED && i < g_nrecv; i++)
		T_EQ_INT(g_seq[i], 20000u + (uint32_t)i);
	T_OK(sdp_eth_rxq_get_counters(g_mrxq, &c));
	T_EQ_INT(c.packets, NMANAGED);
	T_EQ_INT(c.drops, 0);
	T_EQ_INT(c.overwrites, 0);
	T_OK(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(g_mrxq)));
	T_OK(doca_eth_rxq_destroy(g_mrxq));
	T_OK(doca_mmap_destroy(pkt_mmap));
}

/* ---- event mode ----------------------------------------------------------------------------- */

static void test_event_mode(void)
{
	struct doca_eth_rxq *rxq = regular_rxq(SDP_ETH_OVERFLOW_BACKPRESSURE);
	doca_notification_handle_t h;

	post_tasks(rxq);
	g_nrecv = 0;
	g_base = 90000;
	T_OK(doca_pe_get_notification_handle(g_pe, &h));
	progress_for(5);
	T_OK(doca_pe_request_notification(g_pe));
	/* nothing arrives: the handle stays quiet */
	T_EQ_INT(t_readable(h, 100), 0);
	T_OK(doca_pe_clear_notification(g_pe, h));
	T_EQ_INT(g_nrecv, 0);

	/* a frame arrives while the application sleeps on the handle: it wakes */
	T_OK(doca_pe_request_notification(g_pe));
	{
		struct doca_eth_txq_task_send *t = NULL;
		struct doca_buf *b = NULL;

		frame_fill(g_send_mem, g_base, FLEN);
		T_OK(doca_buf_inventory_buf_get_by_data(g_inv, g_send_mmap, g_send_mem, FLEN, &b));
		T_OK(doca_eth_txq_task_send_allocate_init(g_txq, b, (union doca_data){0}, &t));
		T_OK(doca_task_submit(doca_eth_txq_task_send_as_doca_task(t)));
	}
	T_EQ_INT(t_readable(h, 2000), 1);
	T_OK(doca_pe_clear_notification(g_pe, h));
	progress_until(&g_nrecv, 1);
	T_EQ_INT(g_nrecv, 1);
	T_EQ_INT(g_seq[0], g_base);
	progress_until(&g_sent, g_sent + 0);
	stop_rxq(rxq);
}

int main(void)
{
	struct doca_devinfo **list = NULL, *da, *db;
	char decls[256], na[32], nb[32];
	uint32_t n = 0;

	snprintf(na, sizeof(na), "oa%d", (int)getpid());
	snprintf(nb, sizeof(nb), "ob%d", (int)getpid());
	snprintf(decls, sizeof(decls), "loop:name=%s,peer=%s;loop:name=%s,peer=%s", na, nb, nb, na);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	t_log_capture();

	T_OK(doca_devinfo_create_list(&list, &n));
	if (list == NULL)
		T_DONE();
	da = t_find_dev(list, n, na);
	db = t_find_dev(list, n, nb);
	if (da == NULL || db == NULL) {
		t_fail("loop devices %s/%s are not listed", na, nb);
		T_DONE();
	}
	T_OK(doca_dev_open(da, &g_dev_a));
	T_OK(doca_dev_open(db, &g_dev_b));
	T_OK(doca_pe_create(&g_pe));

	T_OK(doca_mmap_create(&g_send_mmap));
	T_OK(doca_mmap_set_memrange(g_send_mmap, g_send_mem, sizeof(g_send_mem)));
	T_OK(doca_mmap_add_dev(g_send_mmap, g_dev_a));
	T_OK(doca_mmap_start(g_send_mmap));
	T_OK(doca_mmap_create(&g_recv_mmap));
	T_OK(doca_mmap_set_memrange(g_recv_mmap, g_recv_mem, sizeof(g_recv_mem)));
	T_OK(doca_mmap_add_dev(g_recv_mmap, g_dev_b));
	T_OK(doca_mmap_start(g_recv_mmap));
	T_OK(doca_buf_inventory_create(4 * NSEND, &g_inv));
	T_OK(doca_buf_inventory_start(g_inv));

	T_OK(doca_eth_txq_create(g_dev_a, NSEND, &g_txq));
	T_OK(doca_eth_txq_task_send_set_conf(g_txq, send_ok, send_err, NSEND));
	T_OK(doca_pe_connect_ctx(g_pe, doca_eth_txq_as_doca_ctx(g_txq)));
	T_OK(doca_ctx_start(doca_eth_txq_as_doca_ctx(g_txq)));

	test_cyclic();
	test_backpressure();
	test_managed();
	test_event_mode();

	T_OK(doca_ctx_stop(doca_eth_txq_as_doca_ctx(g_txq)));
	progress_for(5);
	T_OK(doca_eth_txq_destroy(g_txq));
	T_OK(doca_buf_inventory_stop(g_inv));
	T_OK(doca_buf_inventory_destroy(g_inv));
	T_OK(doca_mmap_destroy(g_recv_mmap));
	T_OK(doca_mmap_destroy(g_send_mmap));
	T_OK(doca_pe_destroy(g_pe));
	T_OK(doca_dev_close(g_dev_a));
	T_OK(doca_dev_close(g_dev_b));
	T_OK(doca_devinfo_destroy_list(list));
	T_DONE();
}
