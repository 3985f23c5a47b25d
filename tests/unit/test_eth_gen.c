/*
 * libdoca_eth on gen devices: a generator at a fixed count (20000 frames of 64 bytes, then 20000
 * of 1514 bytes over 4 flows) received through a REGULAR receive queue whose tasks are
 * re-submitted from their completion callback, in the default back-pressure overflow mode (and
 * once set explicitly, with a small ring). Every frame is checked completely (headers, IPv4 and
 * UDP checksums, gen payload check and fill) and seen exactly once by its sequence number: none
 * missing, none twice, none beyond the count; the queue's and the port's counters agree
 * (packets == N, no drop, no overwrite). Also the bad arguments and wrong states of the overflow,
 * ring size and port counter calls.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_pe.h"
#include "sdp_gen_payload.h"
#include "softdpu/eth.h"
#include "softdpu/sdp_pkt.h"
#include "t_eth.h"
#include "t_helpers.h"
#include "t_nic.h"

#define SMALL_COUNT 20000
#define SMALL_SIZE 64
#define BIG_COUNT 20000
#define BIG_SIZE 1514
#define FLOWS 4
#define SPORT 3000
#define NB_TASKS 32
#define DEADLINE_S 30.0

static const uint8_t g_mac[6] = {0x02, 0x47, 0x00, 0x00, 0x00, 0x01};

struct gen_run {
	uint32_t size;
	uint64_t count;
	uint8_t *seen; /* one bit per sequence number */
	uint64_t unique;
	uint64_t dups;
	uint64_t beyond; /* seq >= count */
	uint64_t bad;	 /* frames that failed a check (the first few are reported) */
	uint64_t bytes;
};

static void bad_frame(struct gen_run *r, const char *what, uint64_t seq)
{
	if (r->bad++ < 5)
		t_fail("%u-byte run: frame (seq %llu): %s", r->size, (unsigned long long)seq, what);
}

static void on_frame(struct t_eth_rx *rx, const uint8_t *f, size_t len)
{
	struct gen_run *r = rx->user;
	const uint8_t *ip = f + 14, *udp = ip + 20, *pl = udp + 8;
	uint64_t seq = 0;
	uint32_t pl_len;
	int l3_ok, l4_ok;

	r->bytes += len;
	if (len != r->size) {
		bad_frame(r, "wrong length", UINT64_MAX);
		return;
	}
	pl_len = r->size - SDP_GEN_L2L3L4_LEN;
	for (int i = 0; i < 8; i++)
		seq = seq << 8 | pl[SDP_GEN_OFF_SEQ + i];
	if (memcmp(f, g_mac, 6) != 0 || sdp_pkt_get16(f + 12) != 0x0800 || ip[0] != 0x45 ||
	    ip[9] != 17 || sdp_pkt_get16(ip + 2) != r->size - 14 ||
	    sdp_pkt_get32(ip + 12) != 0x0a000001 || sdp_pkt_get32(ip + 16) != 0x0a000002 ||
	    sdp_pkt_get16(udp + 2) != 5001 || sdp_pkt_get16(udp + 4) != r->size - 34) {
		bad_frame(r, "Ethernet/IPv4/UDP headers differ from the declaration", seq);
		return;
	}
	sdp_pkt_csum_check(f, (uint32_t)len, &l3_ok, &l4_ok);
	if (!l3_ok) {
		bad_frame(r, "IPv4 header checksum", seq);
		return;
	}
	if (sdp_pkt_get16(udp + SDP_PKT_UDP_CSUM) == 0 || !l4_ok) {
		bad_frame(r, "UDP checksum", seq);
		return;
	}
	if (sdp_pkt_get32(pl + SDP_GEN_OFF_MAGIC) != SDP_GEN_MAGIC ||
	    sdp_pkt_get32(pl + SDP_GEN_OFF_CHECK) !=
		    sdp_gen_check(pl + SDP_GEN_OFF_MAGIC, pl_len - SDP_GEN_OFF_MAGIC)) {
		bad_frame(r, "gen magic or payload check", seq);
		return;
	}
	if (sdp_pkt_get16(pl + SDP_GEN_OFF_FLOW) != seq % FLOWS ||
	    sdp_pkt_get16(udp) != SPORT + seq % FLOWS || sdp_pkt_get16(ip + 4) != (uint16_t)seq) {
		bad_frame(r, "flow, source port or IPv4 id do not follow the sequence number", seq);
		return;
	}
	for (uint32_t k = SDP_GEN_HDR_LEN; k < pl_len; k++) {
		if (pl[k] != (uint8_t)(seq + k)) {
			bad_frame(r, "payload fill", seq);
			return;
		}
	}
	if (seq >= r->count) {
		r->beyond++;
		return;
	}
	if (r->seen[seq / 8] & (1u << (seq % 8))) {
		r->dups++;
		return;
	}
	r->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
	r->unique++;
}

/* Bad arguments and states of the softdpu extension calls on an IDLE queue of dev. */
static void test_ext_args(struct doca_dev *dev, struct doca_eth_rxq *rxq)
{
	struct sdp_eth_port_counters pc = {0};

	T_STATUS(sdp_eth_rxq_set_overflow(NULL, SDP_ETH_OVERFLOW_BACKPRESSURE),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_eth_rxq_set_overflow(rxq, (enum sdp_eth_overflow)3), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_eth_rxq_set_ring_size(NULL, 64), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_eth_rxq_set_ring_size(rxq, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_eth_rxq_set_ring_size(rxq, 96), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_eth_rxq_set_ring_size(rxq, 1u << 25), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_eth_dev_get_port_counters(NULL, &pc), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_eth_dev_get_port_counters(dev, NULL), DOCA_ERROR_INVALID_VALUE);
	/* no queue of the device runs yet: the port is closed */
	T_STATUS(sdp_eth_dev_get_port_counters(dev, &pc), DOCA_ERROR_BAD_STATE);
}

/*
 * One run: a receive queue on the gen device named name, which generates count frames of size
 * bytes; explicit: set the overflow mode and a 64-slot ring instead of the defaults.
 */
static void run_gen(struct doca_devinfo *di, uint32_t size, uint64_t count, int explicit_mode)
{
	struct gen_run r = {.size = size, .count = count};
	struct sdp_eth_rxq_counters rc = {0};
	struct sdp_eth_port_counters pc = {0};
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct t_eth_mem mem;
	struct t_eth_rx rx;
	double t0;
	int done;

	r.seen = calloc(count / 8 + 1, 1);
	if (r.seen == NULL) {
		t_fail("out of memory");
		return;
	}
	T_OK(doca_dev_open(di, &dev));
	if (dev == NULL)
		goto out;
	T_OK(doca_pe_create(&pe));
	if (t_eth_mem_init(&mem, (size_t)NB_TASKS * T_ETH_SLOT, &dev, 1, NB_TASKS) != 0)
		goto out_mem;
	if (t_eth_rx_init(&rx, pe, dev, &mem, 0, NB_TASKS, T_ETH_SLOT) != 0)
		goto out_rx;
	rx.user = &r;
	rx.on_frame = on_frame;
	if (explicit_mode) {
		test_ext_args(dev, rx.rxq);
		T_OK(sdp_eth_rxq_set_overflow(rx.rxq, SDP_ETH_OVERFLOW_BACKPRESSURE));
		T_OK(sdp_eth_rxq_set_ring_size(rx.rxq, 64));
	}
	t0 = t_eth_now();
	t_eth_rx_start(&rx);
	if (explicit_mode) {
		/* running: the extension setters refuse */
		T_STATUS(sdp_eth_rxq_set_overflow(rx.rxq, SDP_ETH_OVERFLOW_CYCLIC),
			 DOCA_ERROR_BAD_STATE);
		T_STATUS(sdp_eth_rxq_set_ring_size(rx.rxq, 128), DOCA_ERROR_BAD_STATE);
	}
	done = t_eth_progress_until(pe, &r.unique, count, DEADLINE_S);
	if (!done)
		t_fail("%u-byte run: %llu of %llu frames within %.0f s (received %llu)", size,
		       (unsigned long long)r.unique, (unsigned long long)count, DEADLINE_S,
		       (unsigned long long)rx.received);
	/* the generator stops at count: nothing more may come */
	t_eth_progress_for(pe, 0.2);
	printf("%u-byte run: %llu frames in %.3f s\n", size, (unsigned long long)rx.received,
	       t_eth_now() - t0);
	T_EQ_INT(r.unique, count);
	T_EQ_INT(r.dups, 0);
	T_EQ_INT(r.beyond, 0);
	T_EQ_INT(r.bad, 0);
	T_EQ_INT(rx.received, count);
	T_EQ_INT(rx.errors, 0);
	T_EQ_INT(rx.resubmit_failed, 0);
	T_EQ_INT(r.bytes, count * size);

	T_OK(sdp_eth_rxq_get_counters(rx.rxq, &rc));
	T_EQ_INT(rc.packets, count);
	T_EQ_INT(rc.bytes, count * size);
	T_EQ_INT(rc.ring_packets, count);
	T_EQ_INT(rc.drops, 0);
	T_EQ_INT(rc.overwrites, 0);
	T_EQ_INT(rc.truncated, 0);
	T_EQ_INT(rc.csum_bad, 0);
	T_OK(sdp_eth_dev_get_port_counters(dev, &pc));
	T_EQ_INT(pc.rx_packets, count);
	T_EQ_INT(pc.rx_bytes, count * size);
	T_EQ_INT(pc.rx_unsteered, 0);
	T_EQ_INT(pc.rx_port_drops, 0);
	T_EQ_INT(pc.tx_packets, 0);
	printf("%u-byte run: the engine waited for the queue %llu times, ring full %llu times\n",
	       size, (unsigned long long)pc.rx_wait, (unsigned long long)rc.ring_full);

	{
		/* IN_PROGRESS: the waiting tasks still have to come back flushed */
		doca_error_t st = doca_ctx_stop(doca_eth_rxq_as_doca_ctx(rx.rxq));

		T_TRUE(st == DOCA_SUCCESS || st == DOCA_ERROR_IN_PROGRESS);
	}
	t_eth_wait_idle(pe, doca_eth_rxq_as_doca_ctx(rx.rxq));
	/* every task was waiting again when the queue stopped: all come back flushed */
	T_EQ_INT(rx.flushed, NB_TASKS);
	/* the port closed with its last queue; the queue's counters survive the stop */
	T_STATUS(sdp_eth_dev_get_port_counters(dev, &pc), DOCA_ERROR_BAD_STATE);
	T_OK(sdp_eth_rxq_get_counters(rx.rxq, &rc));
	T_EQ_INT(rc.packets, count);
out_rx:
	t_eth_rx_fini(&rx);
out_mem:
	t_eth_mem_fini(&mem);
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_dev_close(dev));
out:
	free(r.seen);
}

/*
 * Frames longer than the queue's max packet size (TRUNC_SIZE bytes into a 512-byte queue): the
 * backend writes each straight into the ring (one queue, no flow port) and cuts it at the slot;
 * every task completes with DOCA_ERROR_TOO_BIG and the frame's first bytes, each counted.
 */
#define TRUNC_COUNT NB_TASKS /* a task that fails is not submitted again */
#define TRUNC_SIZE 1514
#define TRUNC_MAX 512
static void run_trunc(struct doca_devinfo *di)
{
	struct sdp_eth_rxq_counters rc = {0};
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct t_eth_mem mem;
	struct t_eth_rx rx;

	T_OK(doca_dev_open(di, &dev));
	if (dev == NULL)
		return;
	T_OK(doca_pe_create(&pe));
	if (t_eth_mem_init(&mem, (size_t)NB_TASKS * T_ETH_SLOT, &dev, 1, NB_TASKS) != 0)
		goto out_mem;
	if (t_eth_rx_init(&rx, pe, dev, &mem, 0, NB_TASKS, TRUNC_MAX) != 0)
		goto out_rx;
	t_eth_rx_start(&rx);
	(void)t_eth_progress_until(pe, &rx.errors, TRUNC_COUNT, DEADLINE_S);
	t_eth_progress_for(pe, 0.1); /* nothing beyond the count */
	T_EQ_INT(rx.errors, TRUNC_COUNT);
	T_EQ_INT(rx.last_err, DOCA_ERROR_TOO_BIG);
	T_EQ_INT(rx.received, 0);
	T_OK(sdp_eth_rxq_get_counters(rx.rxq, &rc));
	T_EQ_INT(rc.truncated, TRUNC_COUNT);
	T_EQ_INT(rc.ring_packets, TRUNC_COUNT);
	T_EQ_INT(rc.drops, 0);
out_rx:
	t_eth_rx_fini(&rx); /* stops the queue: the waiting tasks come back flushed */
out_mem:
	t_eth_mem_fini(&mem);
	T_OK(doca_pe_destroy(pe));
	T_OK(doca_dev_close(dev));
}

int main(void)
{
	struct doca_devinfo **list = NULL, *small, *big, *trunc;
	char decls[768], ns[32], nb[32], nt[32];
	uint32_t n = 0;

	snprintf(ns, sizeof(ns), "egs%d", (int)getpid());
	snprintf(nb, sizeof(nb), "egb%d", (int)getpid());
	snprintf(nt, sizeof(nt), "egt%d", (int)getpid());
	snprintf(decls, sizeof(decls),
		 "gen:name=%s,size=%d,count=%d,flows=%d,sport=%d,mac=02:47:00:00:00:01;"
		 "gen:name=%s,size=%d,count=%d,flows=%d,sport=%d,mac=02:47:00:00:00:01;"
		 "gen:name=%s,size=%d,count=%d",
		 ns, SMALL_SIZE, SMALL_COUNT, FLOWS, SPORT, nb, BIG_SIZE, BIG_COUNT, FLOWS, SPORT,
		 nt, TRUNC_SIZE, TRUNC_COUNT);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	unsetenv("SOFTDPU_ETH_OVERFLOW"); /* the default mode is under test */
	t_log_capture();

	T_OK(doca_devinfo_create_list(&list, &n));
	if (list == NULL)
		T_DONE();
	small = t_find_dev(list, n, ns);
	big = t_find_dev(list, n, nb);
	trunc = t_find_dev(list, n, nt);
	if (small == NULL || big == NULL || trunc == NULL) {
		t_fail("gen devices %s/%s are not listed (is the gen provider on "
		       "SOFTDPU_PROVIDER_PATH?)",
		       ns, nb);
		T_OK(doca_devinfo_destroy_list(list));
		T_DONE();
	}
	T_OK(doca_eth_rxq_cap_is_type_supported(small, DOCA_ETH_RXQ_TYPE_REGULAR,
						DOCA_ETH_RXQ_DATA_PATH_TYPE_CPU));
	run_gen(small, SMALL_SIZE, SMALL_COUNT, 0);
	run_gen(big, BIG_SIZE, BIG_COUNT, 1);
	run_trunc(trunc);
	T_OK(doca_devinfo_destroy_list(list));
	T_DONE();
}
