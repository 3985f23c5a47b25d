/*
 * libdoca_eth on two loop devices joined by a wire: send tasks on one device's txq, receive
 * tasks on the other's rxq, every frame checked byte for byte (and the software checksums of
 * a UDP/IPv4 frame); the capability answers; bad arguments and wrong states (setters after
 * start, set_pkt_buf with an unstarted mmap, a GPU-only type on a CPU queue, task limits);
 * DOCA Flow steering UDP to a second queue by its applied id while the rest goes to the
 * default queue; stop flushing waiting receive tasks through the error callback.
 * SPDX-License-Identifier: BSD-3-Clause
 */
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
#include "doca_flow.h"
#include "doca_mmap.h"
#include "doca_pe.h"
#include "sdp_provider.h"
#include "softdpu/eth.h"
#include "t_helpers.h"
#include "t_nic.h"

#define NFRAMES 64
#define SLOT 2048
#define UDP_IDX 5 /* this frame is a UDP/IPv4 frame with its checksums left zero */

/* [0, NFRAMES) send, [NFRAMES, 2 NFRAMES) receive, then a few more receive slots */
static uint8_t g_mem[(2 * NFRAMES + 8) * SLOT];
static int g_recv_ok, g_recv_err, g_send_ok, g_send_err;
static doca_error_t g_last_err;
static struct doca_buf *g_recv_bufs[NFRAMES + 8];
static int g_recv_order[NFRAMES * 2];
static uint8_t g_l3_ok[NFRAMES * 2], g_l4_ok[NFRAMES * 2];

static uint32_t frame_len(uint32_t i)
{
	return 60 + (i * 131) % (1514 - 60 + 1);
}

/* Frame i: i at offset 14 (frame UDP_IDX: an Ethernet/IPv4/UDP frame). */
static void frame_fill(uint8_t *buf, uint32_t i)
{
	t_frame_fill(buf, frame_len(i), i, i == UDP_IDX);
	if (i != UDP_IDX)
		memcpy(buf + 14, &i, sizeof(i));
}

/* the header checksum and the UDP checksum were filled in; everything else is as sent */
static void check_udp_frame(const uint8_t *got, uint32_t len)
{
	uint8_t want[SLOT];

	frame_fill(want, UDP_IDX);
	if (!t_udp_offload_ok(got, want, len))
		t_fail("UDP frame: checksums wrong or bytes other than the checksums changed");
}

static void recv_ok(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
		    union doca_data ctx_user_data)
{
	struct doca_buf *pkt = NULL;
	int slot = (int)task_user_data.u64;

	(void)ctx_user_data;
	T_OK(doca_eth_rxq_task_recv_get_pkt(task, &pkt));
	T_TRUE(pkt == g_recv_bufs[slot]);
	T_OK(doca_eth_rxq_task_recv_get_l3_ok(task, &g_l3_ok[g_recv_ok]));
	T_OK(doca_eth_rxq_task_recv_get_l4_ok(task, &g_l4_ok[g_recv_ok]));
	g_recv_order[g_recv_ok++] = slot;
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(task));
}

static void recv_err(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	g_recv_err++;
	g_last_err = doca_task_get_status(doca_eth_rxq_task_recv_as_doca_task(task));
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(task));
}

static void send_ok(struct doca_eth_txq_task_send *task, union doca_data task_user_data,
		    union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	g_send_ok++;
	doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
}

static void send_err(struct doca_eth_txq_task_send *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	g_send_err++;
	doca_task_free(doca_eth_txq_task_send_as_doca_task(task));
}

/* Progress pe until *counter reaches want or 5 s pass; sleeps 1 ms when idle. */
static void progress_until(struct doca_pe *pe, const int *counter, int want)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (*counter < want) {
		if (!doca_pe_progress(pe)) {
			struct timespec ms = {0, 1000000};

			nanosleep(&ms, NULL);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 5)
			break;
	}
}

static void wait_idle(struct doca_pe *pe, struct doca_ctx *ctx)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

	for (int k = 0; k < 5000; k++) {
		T_OK(doca_ctx_get_state(ctx, &st));
		if (st == DOCA_CTX_STATE_IDLE)
			return;
		if (!doca_pe_progress(pe))
			usleep(1000);
	}
	t_fail("context did not reach IDLE (state %d)", (int)st);
}

static int g_recv7;
static struct doca_buf *g_recv7_buf;

static void recv7_ok(struct doca_eth_rxq_task_recv *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	T_OK(doca_eth_rxq_task_recv_get_pkt(task, &g_recv7_buf));
	g_recv7++;
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(task));
}

/*
 * A flow port on the receiving device: a root basic pipe sends IPv4/UDP to queue id 7 and
 * has no miss action, so everything else goes to the default queue (the first started, rxq).
 */
static void test_steering(struct doca_pe *pe, struct doca_dev *dev_b, struct doca_eth_rxq *rxq,
			  struct doca_eth_txq *txq, struct doca_buf_inventory *inv,
			  struct doca_mmap *mmap, struct doca_buf **send_bufs)
{
	uint16_t q7 = 7;
	struct doca_flow_match udp = {.parser_meta = {.outer_l3_type = DOCA_FLOW_L3_META_IPV4,
						      .outer_l4_type = DOCA_FLOW_L4_META_UDP}};
	struct doca_flow_fwd fwd = {.type = DOCA_FLOW_FWD_RSS,
				    .rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED,
				    .rss = {.queues_array = &q7, .nr_queues = 1}};
	struct doca_flow_cfg *cfg = NULL;
	struct doca_flow_port_cfg *pcfg = NULL;
	struct doca_flow_pipe_cfg *pipe_cfg = NULL;
	struct doca_flow_port *port = NULL;
	struct doca_flow_pipe *pipe = NULL;
	struct doca_flow_pipe_entry *entry = NULL;
	struct doca_eth_rxq *rxq7 = NULL;
	struct doca_eth_rxq_task_recv *rt = NULL;
	struct doca_eth_txq_task_send *st = NULL;
	struct doca_buf *buf7 = NULL;
	int sent_before = g_send_ok, recv_before = g_recv_ok;
	const int idx[2] = {UDP_IDX, 1};

	T_OK(doca_flow_cfg_create(&cfg));
	T_OK(doca_flow_cfg_set_pipe_queues(cfg, 1));
	T_OK(doca_flow_cfg_set_mode_args(cfg, "vnf,hws"));
	T_OK(doca_flow_init(cfg));
	T_OK(doca_flow_cfg_destroy(cfg));
	T_OK(doca_flow_port_cfg_create(&pcfg));
	T_OK(doca_flow_port_cfg_set_port_id(pcfg, 0));
	T_OK(doca_flow_port_cfg_set_dev(pcfg, dev_b));
	T_OK(doca_flow_port_start(pcfg, &port));
	T_OK(doca_flow_port_cfg_destroy(pcfg));
	if (port == NULL)
		goto out_flow;
	T_OK(doca_flow_pipe_cfg_create(&pipe_cfg, port));
	T_OK(doca_flow_pipe_cfg_set_name(pipe_cfg, "UDP_TO_7"));
	T_OK(doca_flow_pipe_cfg_set_type(pipe_cfg, DOCA_FLOW_PIPE_BASIC));
	T_OK(doca_flow_pipe_cfg_set_is_root(pipe_cfg, true));
	T_OK(doca_flow_pipe_cfg_set_match(pipe_cfg, &udp, NULL));
	T_OK(doca_flow_pipe_create(pipe_cfg, &fwd, NULL, &pipe));
	T_OK(doca_flow_pipe_cfg_destroy(pipe_cfg));
	T_OK(doca_flow_pipe_basic_add_entry(0, pipe, NULL, 0, NULL, NULL, NULL, 0, NULL, &entry));
	T_OK(doca_flow_entries_process(port, 0, 0, 0));

	T_OK(doca_eth_rxq_create(dev_b, 8, 2048, &rxq7));
	T_OK(doca_eth_rxq_task_recv_set_conf(rxq7, recv7_ok, recv_err, 1));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_rxq_as_doca_ctx(rxq7)));
	T_OK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rxq7)));
	T_OK(doca_eth_rxq_apply_queue_id(rxq7, 7));

	T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem + (2 * NFRAMES + 3) * SLOT, SLOT,
						&buf7));
	T_OK(doca_eth_rxq_task_recv_allocate_init(rxq7, buf7, (union doca_data){0}, &rt));
	T_OK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(rt)));
	T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem + (2 * NFRAMES + 2) * SLOT, SLOT,
						&g_recv_bufs[NFRAMES + 2]));
	T_OK(doca_eth_rxq_task_recv_allocate_init(rxq, g_recv_bufs[NFRAMES + 2],
						  (union doca_data){.u64 = NFRAMES + 2}, &rt));
	T_OK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(rt)));
	for (int i = 0; i < 2; i++) {
		T_OK(doca_eth_txq_task_send_allocate_init(txq, send_bufs[idx[i]],
							  (union doca_data){0}, &st));
		T_OK(doca_task_submit(doca_eth_txq_task_send_as_doca_task(st)));
	}
	progress_until(pe, &g_send_ok, sent_before + 2);
	progress_until(pe, &g_recv7, 1);
	progress_until(pe, &g_recv_ok, recv_before + 1);
	T_EQ_INT(g_recv7, 1);
	T_EQ_INT(g_recv_ok, recv_before + 1);
	if (g_recv7 == 1) {
		void *data = NULL;
		size_t len = 0;

		T_TRUE(g_recv7_buf == buf7);
		T_OK(doca_buf_get_data(buf7, &data));
		T_OK(doca_buf_get_data_len(buf7, &len));
		T_EQ_INT(len, frame_len(UDP_IDX));
		if (len == frame_len(UDP_IDX))
			check_udp_frame(data, (uint32_t)len);
	}
	if (g_recv_ok == recv_before + 1) {
		uint8_t want[SLOT];
		void *data = NULL;
		size_t len = 0;

		T_EQ_INT(g_recv_order[recv_before], NFRAMES + 2);
		T_OK(doca_buf_get_data(g_recv_bufs[NFRAMES + 2], &data));
		T_OK(doca_buf_get_data_len(g_recv_bufs[NFRAMES + 2], &len));
		frame_fill(want, 1);
		T_EQ_INT(len, frame_len(1));
		if (len == frame_len(1) && memcmp(data, want, len) != 0)
			t_fail("the non-UDP frame differs from what was sent");
	}
	T_OK(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(rxq7)));
	wait_idle(pe, doca_eth_rxq_as_doca_ctx(rxq7));
	T_OK(doca_eth_rxq_destroy(rxq7));
	T_OK(doca_buf_dec_refcount(buf7, NULL));
	doca_flow_pipe_destroy(pipe);
	T_OK(doca_flow_port_stop(port));
out_flow:
	doca_flow_destroy();
}

/*
 * Send tasks submitted without DOCA_TASK_SUBMIT_FLAG_FLUSH wait for doca_ctx_flush_tasks(), the
 * next flushing submission or the next progress call, then go in one burst, in order; the PE's
 * notification is not armed while they wait.
 */
static void test_unflushed(struct doca_pe *pe, struct doca_eth_rxq *rxq, struct doca_eth_txq *txq,
			   struct doca_buf **send_bufs)
{
	struct sdp_eth_txq_counters tc;
	struct doca_eth_rxq_task_recv *rt = NULL;
	struct doca_eth_txq_task_send *st[5] = {NULL};
	doca_notification_handle_t fd = -1;
	int sent0 = g_send_ok, recv0 = g_recv_ok;
	uint64_t pk0;

	for (int i = 0; i < 5; i++) {
		T_OK(doca_eth_rxq_task_recv_allocate_init(
			rxq, g_recv_bufs[i], (union doca_data){.u64 = (uint64_t)i}, &rt));
		T_OK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(rt)));
		T_OK(doca_eth_txq_task_send_allocate_init(txq, send_bufs[10 + i],
							  (union doca_data){0}, &st[i]));
	}
	T_OK(sdp_eth_txq_get_counters(txq, &tc));
	pk0 = tc.packets;
	T_STATUS(doca_task_submit_ex(doca_eth_txq_task_send_as_doca_task(st[0]), 1u << 7),
		 DOCA_ERROR_INVALID_VALUE);
	/* two without a flush: the backend has seen nothing */
	T_OK(doca_task_submit_ex(doca_eth_txq_task_send_as_doca_task(st[0]),
				 DOCA_TASK_SUBMIT_FLAG_NONE));
	T_OK(doca_task_submit_ex(doca_eth_txq_task_send_as_doca_task(st[1]),
				 DOCA_TASK_SUBMIT_FLAG_OPTIMIZE_REPORTS));
	T_OK(sdp_eth_txq_get_counters(txq, &tc));
	T_EQ_INT(tc.packets, pk0);
	/* work waits: arming the notification signals the handle at once */
	T_OK(doca_pe_get_notification_handle(pe, &fd));
	T_OK(doca_pe_request_notification(pe));
	T_EQ_INT(t_readable(fd, 0), 1);
	T_OK(doca_pe_clear_notification(pe, fd));
	doca_ctx_flush_tasks(doca_eth_txq_as_doca_ctx(txq));
	T_OK(sdp_eth_txq_get_counters(txq, &tc));
	T_EQ_INT(tc.packets, pk0 + 2);
	/* one without, then one with: both go with the second */
	T_OK(doca_task_submit_ex(doca_eth_txq_task_send_as_doca_task(st[2]),
				 DOCA_TASK_SUBMIT_FLAG_NONE));
	T_OK(sdp_eth_txq_get_counters(txq, &tc));
	T_EQ_INT(tc.packets, pk0 + 2);
	T_OK(doca_task_submit(doca_eth_txq_task_send_as_doca_task(st[3])));
	T_OK(sdp_eth_txq_get_counters(txq, &tc));
	T_EQ_INT(tc.packets, pk0 + 4);
	/* one without: the next progress call sends it */
	T_OK(doca_task_submit_ex(doca_eth_txq_task_send_as_doca_task(st[4]),
				 DOCA_TASK_SUBMIT_FLAG_NONE));
	progress_until(pe, &g_send_ok, sent0 + 5);
	progress_until(pe, &g_recv_ok, recv0 + 5);
	T_EQ_INT(g_send_ok, sent0 + 5);
	T_EQ_INT(g_recv_ok, recv0 + 5);
	T_OK(sdp_eth_txq_get_counters(txq, &tc));
	T_EQ_INT(tc.packets, pk0 + 5);
	for (int k = 0; k < 5 && g_recv_ok == recv0 + 5; k++) {
		uint8_t want[SLOT];
		void *data = NULL;
		size_t len = 0;

		/* in submission order, each frame as sent */
		T_EQ_INT(g_recv_order[recv0 + k], k);
		T_OK(doca_buf_get_data(g_recv_bufs[k], &data));
		T_OK(doca_buf_get_data_len(g_recv_bufs[k], &len));
		frame_fill(want, (uint32_t)(10 + k));
		T_EQ_INT(len, frame_len((uint32_t)(10 + k)));
		if (len == frame_len((uint32_t)(10 + k)) && memcmp(data, want, len) != 0)
			t_fail("unflushed frame %d differs from what was sent", 10 + k);
	}
	/* a frame cut below an Ethernet header after submission fails alone, nothing is sent */
	{
		struct doca_eth_txq_task_send *bad = NULL;
		void *data = NULL;
		int err0 = g_send_err;

		T_OK(doca_eth_txq_task_send_allocate_init(txq, send_bufs[15], (union doca_data){0},
							  &bad));
		T_OK(doca_task_submit_ex(doca_eth_txq_task_send_as_doca_task(bad),
					 DOCA_TASK_SUBMIT_FLAG_NONE));
		T_OK(doca_buf_get_data(send_bufs[15], &data));
		T_OK(doca_buf_set_data(send_bufs[15], data, 10));
		doca_ctx_flush_tasks(doca_eth_txq_as_doca_ctx(txq));
		progress_until(pe, &g_send_err, err0 + 1);
		T_EQ_INT(g_send_err, err0 + 1);
		T_OK(sdp_eth_txq_get_counters(txq, &tc));
		T_EQ_INT(tc.packets, pk0 + 5);
		T_OK(doca_buf_set_data(send_bufs[15], data, frame_len(15)));
	}
}

static void test_caps(struct doca_devinfo *loop, struct doca_devinfo *host)
{
	uint32_t v = 0;

	T_OK(doca_eth_rxq_cap_is_type_supported(loop, DOCA_ETH_RXQ_TYPE_REGULAR,
						DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU));
	T_STATUS(doca_eth_rxq_cap_is_type_supported(loop, DOCA_ETH_RXQ_TYPE_CYCLIC,
						    DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU),
		 DOCA_ERROR_NOT_SUPPORTED);
	T_STATUS(doca_eth_rxq_cap_is_type_supported(loop, DOCA_ETH_RXQ_TYPE_REGULAR,
						    DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU),
		 DOCA_ERROR_NOT_SUPPORTED);
	/* as DOCA: MANAGED_MEMPOOL on the CPU, CYCLIC on the GPU only */
	T_OK(doca_eth_rxq_cap_is_type_supported(loop, DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL,
						DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU));
	T_STATUS(doca_eth_rxq_cap_is_type_supported(loop, DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL,
						    DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU),
		 DOCA_ERROR_NOT_SUPPORTED);
	T_OK(doca_eth_rxq_cap_is_type_supported(loop, DOCA_ETH_RXQ_TYPE_CYCLIC,
						DOCA_ETH_RXQ_DATA_PATH_TYPE_GPU));
	T_STATUS(doca_eth_rxq_cap_is_type_supported(NULL, DOCA_ETH_RXQ_TYPE_REGULAR,
						    DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_cap_is_type_supported(loop, DOCA_ETH_RXQ_TYPE_REGULAR,
						    (enum doca_eth_rxq_data_path_type)7),
		 DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_eth_txq_cap_is_type_supported(loop, DOCA_ETH_TXQ_TYPE_REGULAR,
						DOCA_ETH_TXQ_DATA_PATH_TYPE_CPU));
	/* the GPU data path runs REGULAR send queues too (issue 5) */
	T_OK(doca_eth_txq_cap_is_type_supported(loop, DOCA_ETH_TXQ_TYPE_REGULAR,
						DOCA_ETH_TXQ_DATA_PATH_TYPE_GPU));
	T_OK(doca_eth_txq_cap_is_l3_chksum_offload_supported(loop));
	T_OK(doca_eth_txq_cap_is_l4_chksum_offload_supported(loop));
	T_STATUS(doca_eth_txq_cap_is_l3_chksum_offload_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_eth_rxq_cap_get_max_burst_size(loop, &v));
	T_TRUE(v >= 16384);
	T_OK(doca_eth_rxq_cap_get_max_packet_size(loop, &v));
	T_TRUE(v >= 9000);
	T_STATUS(doca_eth_rxq_cap_get_max_packet_size(loop, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_eth_txq_cap_get_max_burst_size(loop, 1, 0, &v));
	T_TRUE(v >= 8192);
	if (host != NULL) {
		/* the host device has no Ethernet port */
		T_STATUS(doca_eth_rxq_cap_is_type_supported(host, DOCA_ETH_RXQ_TYPE_REGULAR,
							    DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU),
			 DOCA_ERROR_NOT_SUPPORTED);
		T_STATUS(doca_eth_txq_cap_is_type_supported(host, DOCA_ETH_TXQ_TYPE_REGULAR,
							    DOCA_ETH_TXQ_DATA_PATH_TYPE_CPU),
			 DOCA_ERROR_NOT_SUPPORTED);
	}
}

static void test_estimate(void)
{
	uint32_t sz = 0;

	/* the GPUNetIO receive sample's call: 16384 slots of 2048 bytes */
	T_OK(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, 2048, 16384, 0,
						   0, 0, &sz));
	T_EQ_INT(sz, 2048u * 16384u);
	/* head and tail room widen every slot (rounded to 64 bytes) */
	T_OK(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, 2048, 16, 0, 10,
						   10, &sz));
	T_EQ_INT(sz, 2112u * 16u);
	/* managed mempool: at least one burst, plus the ring softdpu keeps there (a 32-byte
	 * completion entry per slot, a 256-byte header, two alignments) */
	T_OK(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL, 1000, 100,
						   8192, 2048, 1, 0, 0, &sz));
	T_EQ_INT(sz, 8192u * 2048u + 32u * 2048u + 256u + 128u);
	T_STATUS(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, 2048, 16, 0,
						       0, 0, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, 0, 16, 0, 0,
						       0, &sz),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, 65535,
						       1u << 20, 0, 0, 0, &sz),
		 DOCA_ERROR_INVALID_VALUE);
}

int main(void)
{
	struct doca_devinfo **list = NULL, *da, *db, *host = NULL;
	struct doca_dev *dev_a = NULL, *dev_b = NULL, *dev_h = NULL;
	struct doca_eth_rxq *rxq = NULL, *bad = NULL;
	struct doca_eth_txq *txq = NULL, *txq2 = NULL;
	struct doca_mmap *mmap = NULL, *unstarted = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf *send_bufs[NFRAMES];
	struct doca_pe *pe = NULL;
	struct doca_eth_rxq_task_recv *rt = NULL;
	struct doca_eth_txq_task_send *st = NULL;
	struct sdp_eth_rxq_counters rc;
	struct sdp_eth_txq_counters tc;
	char decls[256], na[32], nb[32];
	uint32_t n = 0;

	snprintf(na, sizeof(na), "ea%d", (int)getpid());
	snprintf(nb, sizeof(nb), "eb%d", (int)getpid());
	snprintf(decls, sizeof(decls), "loop:name=%s,peer=%s;loop:name=%s,peer=%s", na, nb, nb, na);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	t_log_capture();

	/* a refusal found by a shared check names the call made, with no hand-written prefix */
	T_STATUS(doca_eth_txq_cap_is_l4_chksum_offload_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	T_LOGGED("[doca_eth_txq_cap_is_l4_chksum_offload_supported] NULL or bad devinfo");
	T_STATUS(doca_eth_rxq_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_LOGGED("[doca_eth_rxq_destroy] NULL queue");

	T_OK(doca_devinfo_create_list(&list, &n));
	if (list == NULL)
		T_DONE();
	da = t_find_dev(list, n, na);
	db = t_find_dev(list, n, nb);
	for (uint32_t i = 0; i < n; i++) {
		const char *p = sdp_devinfo_get_provider_name(list[i]);

		if (p != NULL && strcmp(p, "host") == 0)
			host = list[i];
	}
	if (da == NULL || db == NULL) {
		t_fail("loop devices %s/%s are not listed", na, nb);
		T_DONE();
	}
	test_caps(da, host);
	test_estimate();
	T_OK(doca_dev_open(da, &dev_a));
	T_OK(doca_dev_open(db, &dev_b));
	if (host != NULL)
		T_OK(doca_dev_open(host, &dev_h));

	/* ---- bad arguments of create ---- */
	T_STATUS(doca_eth_rxq_create(NULL, 64, 2048, &rxq), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_create(dev_b, 64, 2048, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_create(dev_b, 0, 2048, &rxq), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_create(dev_b, 64, 0, &rxq), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_create(NULL, 64, &txq), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_create(dev_a, 0, &txq), DOCA_ERROR_INVALID_VALUE);
	if (dev_h != NULL) {
		T_STATUS(doca_eth_rxq_create(dev_h, 64, 2048, &rxq), DOCA_ERROR_NOT_SUPPORTED);
		T_STATUS(doca_eth_txq_create(dev_h, 64, &txq), DOCA_ERROR_NOT_SUPPORTED);
	}
	T_TRUE(rxq == NULL && txq == NULL);
	T_TRUE(doca_eth_rxq_as_doca_ctx(NULL) == NULL);
	T_TRUE(doca_eth_txq_as_doca_ctx(NULL) == NULL);
	T_STATUS(doca_eth_rxq_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_destroy(NULL), DOCA_ERROR_INVALID_VALUE);

	/* ---- memory ---- */
	T_OK(doca_mmap_create(&mmap));
	T_OK(doca_mmap_set_memrange(mmap, g_mem, sizeof(g_mem)));
	T_OK(doca_mmap_add_dev(mmap, dev_a));
	T_OK(doca_mmap_add_dev(mmap, dev_b));
	T_OK(doca_mmap_create(&unstarted));
	T_OK(doca_mmap_set_memrange(unstarted, g_mem, sizeof(g_mem)));
	T_OK(doca_buf_inventory_create(3 * NFRAMES + 8, &inv));
	T_OK(doca_buf_inventory_start(inv));
	T_OK(doca_pe_create(&pe));

	/* ---- the receive queue: configuration and wrong states ---- */
	T_OK(doca_eth_rxq_create(dev_b, NFRAMES, 2048, &rxq));
	T_STATUS(doca_eth_rxq_set_type(NULL, DOCA_ETH_RXQ_TYPE_REGULAR), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_set_type(rxq, (enum doca_eth_rxq_type)9), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_set_pkt_buf(rxq, NULL, 0, 4096), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_set_pkt_buf(rxq, unstarted, 0, 4096), DOCA_ERROR_BAD_STATE);
	T_OK(doca_mmap_start(mmap));
	T_STATUS(doca_eth_rxq_set_pkt_buf(rxq, mmap, 0, sizeof(g_mem) + 1),
		 DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_eth_rxq_set_pkt_buf(rxq, mmap, 0, 4096));
	/* the queue keeps the mmap referenced: it cannot be destroyed under it */
	T_STATUS(doca_mmap_destroy(mmap), DOCA_ERROR_IN_USE);
	T_STATUS(doca_eth_rxq_set_max_burst_size(rxq, 0), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_eth_rxq_set_max_burst_size(rxq, 2 * NFRAMES));
	T_STATUS(doca_eth_rxq_set_max_packet_size(rxq, 100000), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_eth_rxq_set_max_packet_size(rxq, SLOT));
	T_STATUS(doca_eth_rxq_task_recv_set_conf(rxq, NULL, recv_err, 8), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_task_recv_set_conf(rxq, recv_ok, recv_err, 0),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_rxq_task_recv_allocate_init(rxq, NULL, (union doca_data){0}, &rt),
		 DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_pe_connect_ctx(pe, doca_eth_rxq_as_doca_ctx(rxq)));
	/* a REGULAR queue needs its task configuration */
	T_STATUS(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rxq)), DOCA_ERROR_BAD_STATE);
	T_OK(doca_eth_rxq_task_recv_set_conf(rxq, recv_ok, recv_err, NFRAMES));
	/* CYCLIC is the GPU data path's type: refused on the CPU, the queue stays IDLE */
	T_OK(doca_eth_rxq_set_type(rxq, DOCA_ETH_RXQ_TYPE_CYCLIC));
	T_STATUS(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rxq)), DOCA_ERROR_NOT_SUPPORTED);
	/* MANAGED_MEMPOOL needs its batch event registration */
	T_OK(doca_eth_rxq_set_type(rxq, DOCA_ETH_RXQ_TYPE_MANAGED_MEMPOOL));
	T_STATUS(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rxq)), DOCA_ERROR_BAD_STATE);
	T_OK(doca_eth_rxq_set_type(rxq, DOCA_ETH_RXQ_TYPE_REGULAR));
	T_STATUS(doca_eth_rxq_apply_queue_id(rxq, 0), DOCA_ERROR_BAD_STATE);
	T_OK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rxq)));
	/* running: setters refuse, destroy refuses */
	T_STATUS(doca_eth_rxq_set_type(rxq, DOCA_ETH_RXQ_TYPE_REGULAR), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_eth_rxq_set_max_burst_size(rxq, 8), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_eth_rxq_set_max_packet_size(rxq, 1500), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_eth_rxq_set_pkt_buf(rxq, mmap, 0, 4096), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_eth_rxq_task_recv_set_conf(rxq, recv_ok, recv_err, 4), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_eth_rxq_destroy(rxq), DOCA_ERROR_BAD_STATE);
	T_OK(doca_eth_rxq_apply_queue_id(rxq, 3));
	/* a second queue on the same device: the id is taken */
	T_OK(doca_eth_rxq_create(dev_b, 8, 2048, &bad));
	T_OK(doca_eth_rxq_task_recv_set_conf(bad, recv_ok, recv_err, 1));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_rxq_as_doca_ctx(bad)));
	T_OK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(bad)));
	T_STATUS(doca_eth_rxq_apply_queue_id(bad, 3), DOCA_ERROR_IN_USE);
	T_OK(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(bad)));
	T_OK(doca_eth_rxq_destroy(bad));

	/* ---- the send queue ---- */
	T_OK(doca_eth_txq_create(dev_a, NFRAMES, &txq));
	T_STATUS(doca_eth_txq_set_type(txq, (enum doca_eth_txq_type)5), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_eth_txq_set_type(txq, DOCA_ETH_TXQ_TYPE_REGULAR));
	T_OK(doca_eth_txq_set_max_burst_size(txq, NFRAMES));
	T_OK(doca_eth_txq_set_l3_chksum_offload(txq, 1));
	T_OK(doca_eth_txq_set_l4_chksum_offload(txq, 1));
	T_STATUS(doca_eth_txq_set_l3_chksum_offload(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_eth_txq_task_send_set_conf(txq, send_ok, NULL, 4), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_eth_txq_task_send_set_conf(txq, send_ok, send_err, NFRAMES));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_txq_as_doca_ctx(txq)));
	T_STATUS(doca_eth_txq_task_send_allocate_init(txq, g_recv_bufs[0], (union doca_data){0},
						      &st),
		 DOCA_ERROR_INVALID_VALUE); /* NULL buf */
	T_OK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txq)));
	T_STATUS(doca_eth_txq_set_l4_chksum_offload(txq, 0), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_eth_txq_set_max_burst_size(txq, 8), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_eth_txq_destroy(txq), DOCA_ERROR_BAD_STATE);
	T_OK(doca_eth_txq_apply_queue_id(txq, 0));
	/* a second send queue of the same device shares its port */
	T_OK(doca_eth_txq_create(dev_a, 8, &txq2));
	T_OK(doca_eth_txq_task_send_set_conf(txq2, send_ok, send_err, 1));
	T_OK(doca_pe_connect_ctx(pe, doca_eth_txq_as_doca_ctx(txq2)));
	T_OK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txq2)));

	/* ---- traffic: NFRAMES receive tasks waiting, then NFRAMES send tasks ---- */
	for (int i = 0; i < NFRAMES; i++) {
		union doca_data ud = {.u64 = (uint64_t)i};

		T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem + (NFRAMES + i) * SLOT,
							SLOT, &g_recv_bufs[i]));
		T_OK(doca_eth_rxq_task_recv_allocate_init(rxq, g_recv_bufs[i], ud, &rt));
		T_OK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(rt)));
	}
	for (int i = 0; i < NFRAMES; i++) {
		uint8_t *p = g_mem + i * SLOT;

		frame_fill(p, (uint32_t)i);
		T_OK(doca_buf_inventory_buf_get_by_data(inv, mmap, p, frame_len((uint32_t)i),
							&send_bufs[i]));
		T_OK(doca_eth_txq_task_send_allocate_init(txq, send_bufs[i], (union doca_data){0},
							  &st));
		T_OK(doca_task_submit(doca_eth_txq_task_send_as_doca_task(st)));
	}
	/* the send queue's task limit */
	/* the task limits: every task is still held until its callback frees it */
	T_STATUS(doca_eth_txq_task_send_allocate_init(txq, send_bufs[0], (union doca_data){0}, &st),
		 DOCA_ERROR_NO_MEMORY);
	T_STATUS(doca_eth_rxq_task_recv_allocate_init(rxq, send_bufs[0], (union doca_data){0}, &rt),
		 DOCA_ERROR_NO_MEMORY);
	progress_until(pe, &g_send_ok, NFRAMES);
	progress_until(pe, &g_recv_ok, NFRAMES);
	T_EQ_INT(g_send_ok, NFRAMES);
	T_EQ_INT(g_send_err, 0);
	T_EQ_INT(g_recv_ok, NFRAMES);
	T_EQ_INT(g_recv_err, 0);
	for (int k = 0; k < g_recv_ok; k++) {
		struct doca_buf *b = g_recv_bufs[g_recv_order[k]];
		uint8_t want[SLOT];
		void *data = NULL, *head = NULL;
		size_t len = 0;

		/* tasks complete in submission order, frames arrive in sending order */
		T_EQ_INT(g_recv_order[k], k);
		T_OK(doca_buf_get_data(b, &data));
		T_OK(doca_buf_get_head(b, &head));
		T_OK(doca_buf_get_data_len(b, &len));
		T_TRUE(data == head);
		T_EQ_INT(len, frame_len((uint32_t)k));
		T_EQ_INT(g_l3_ok[k], 1);
		T_EQ_INT(g_l4_ok[k], 1);
		if (k == UDP_IDX) {
			check_udp_frame(data, (uint32_t)len);
			continue;
		}
		frame_fill(want, (uint32_t)k);
		if (len == frame_len((uint32_t)k) && memcmp(data, want, len) != 0)
			t_fail("frame %d differs from what was sent", k);
	}
	/* the sender's buffer of the UDP frame was left as the application wrote it */
	T_TRUE(g_mem[UDP_IDX * SLOT + 24] == 0 && g_mem[UDP_IDX * SLOT + 25] == 0);
	T_OK(sdp_eth_rxq_get_counters(rxq, &rc));
	T_EQ_INT(rc.packets, NFRAMES);
	T_EQ_INT(rc.truncated, 0);
	T_OK(sdp_eth_txq_get_counters(txq, &tc));
	T_EQ_INT(tc.packets, NFRAMES);
	T_STATUS(sdp_eth_rxq_get_counters(NULL, &rc), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_eth_txq_get_counters(txq, NULL), DOCA_ERROR_INVALID_VALUE);

	test_steering(pe, dev_b, rxq, txq, inv, mmap, send_bufs);
	test_unflushed(pe, rxq, txq, send_bufs);

	/* ---- stop flushes waiting receive tasks through the error callback ---- */
	for (int i = 0; i < 2; i++) {
		T_OK(doca_buf_inventory_buf_get_by_addr(inv, mmap, g_mem + i * SLOT, SLOT,
							&g_recv_bufs[NFRAMES + i]));
		T_OK(doca_eth_rxq_task_recv_allocate_init(rxq, g_recv_bufs[NFRAMES + i],
							  (union doca_data){0}, &rt));
		T_OK(doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(rt)));
	}
	{
		/* tasks wait, no traffic: the engine sleeps on the backend's fd, it does not spin */
		struct timespec c0, c1, nap = {0, 300 * 1000000};
		long used_ms;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
		used_ms = (c1.tv_sec - c0.tv_sec) * 1000 + (c1.tv_nsec - c0.tv_nsec) / 1000000;
		if (used_ms > 60)
			t_fail("the process used %ld ms of CPU in 300 ms of idle waiting", used_ms);
	}
	{
		int rc_stop = doca_ctx_stop(doca_eth_rxq_as_doca_ctx(rxq));

		T_TRUE(rc_stop == DOCA_SUCCESS || rc_stop == DOCA_ERROR_IN_PROGRESS);
	}
	progress_until(pe, &g_recv_err, 2);
	T_EQ_INT(g_recv_err, 2);
	T_EQ_INT(g_last_err, DOCA_ERROR_IO_FAILED);
	wait_idle(pe, doca_eth_rxq_as_doca_ctx(rxq));
	T_STATUS(doca_eth_rxq_task_recv_allocate_init(rxq, g_recv_bufs[0], (union doca_data){0},
						      &rt),
		 DOCA_ERROR_BAD_STATE);
	/* back to IDLE: the setters work again */
	T_OK(doca_eth_rxq_set_max_packet_size(rxq, 1500));

	T_OK(doca_ctx_stop(doca_eth_txq_as_doca_ctx(txq2)));
	T_OK(doca_ctx_stop(doca_eth_txq_as_doca_ctx(txq)));
	wait_idle(pe, doca_eth_txq_as_doca_ctx(txq));
	T_OK(doca_eth_txq_destroy(txq2));
	T_OK(doca_eth_txq_destroy(txq));
	T_OK(doca_eth_rxq_destroy(rxq));

	for (int i = 0; i < NFRAMES + 3; i++)
		if (g_recv_bufs[i] != NULL)
			T_OK(doca_buf_dec_refcount(g_recv_bufs[i], NULL));
	for (int i = 0; i < NFRAMES; i++)
		T_OK(doca_buf_dec_refcount(send_bufs[i], NULL));
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_buf_inventory_destroy(inv));
	T_OK(doca_mmap_destroy(unstarted));
	T_OK(doca_mmap_destroy(mmap));
	if (dev_h != NULL)
		T_OK(doca_dev_close(dev_h));
	T_OK(doca_dev_close(dev_b));
	T_OK(doca_dev_close(dev_a));
	T_OK(doca_devinfo_destroy_list(list));
	T_DONE();
}
