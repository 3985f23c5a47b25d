/*
 * The ring format of include/softdpu/sdp_ring.h on the CPU: layout and argument checks, positions and
 * phase bits across many laps and across the 32-bit wrap, both overflow modes with exact counts
 * (single-threaded, then a producer and a consumer thread moving a million sequence-numbered,
 * checksummed frames), the handshake that keeps a claimed entry from being overwritten, and the
 * TX descriptor ring with its completions.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doca_error.h"

#include "sdp_provider_eth.h"
#include "softdpu/sdp_ring.h"
#include "t_helpers.h"

_Static_assert(SDP_RING_CQE_F_L3_CSUM_BAD == SDP_PKT_F_L3_CSUM_BAD, "flag values agree");
_Static_assert(SDP_RING_CQE_F_L4_CSUM_BAD == SDP_PKT_F_L4_CSUM_BAD, "flag values agree");
_Static_assert(SDP_RING_CQE_F_CSUM_PARTIAL == SDP_PKT_F_CSUM_PARTIAL, "flag values agree");
_Static_assert(SDP_RING_CQE_F_TRUNCATED == SDP_PKT_F_TRUNCATED, "flag values agree");

#define FRAMES_THREADED 1000000u
#define DEADLINE_S 60

/* ---- frames: sequence number, length and checksum in the first 16 bytes ---------------- */

#define FRAME_HDR 16u

static uint32_t frame_sum(const uint8_t *f, uint32_t len)
{
	uint32_t h = 2166136261u;
	uint32_t i;

	for (i = 0; i < len; i++)
		if (i < 12 || i >= FRAME_HDR)
			h = (h ^ f[i]) * 16777619u;
	return h;
}

static void frame_fill(uint8_t *f, uint64_t seq, uint32_t len)
{
	uint32_t sum, i;

	memcpy(f, &seq, 8);
	memcpy(f + 8, &len, 4);
	for (i = FRAME_HDR; i < len; i++)
		f[i] = (uint8_t)(seq * 31 + i);
	sum = frame_sum(f, len);
	memcpy(f + 12, &sum, 4);
}

/* 0 when intact, else a description of what is wrong in why. */
static int frame_check(const uint8_t *f, uint32_t len, uint64_t *seq_p, char *why, size_t n)
{
	uint32_t flen, sum;

	if (len < FRAME_HDR) {
		snprintf(why, n, "length %u below the %u-byte header", len, FRAME_HDR);
		return -1;
	}
	memcpy(seq_p, f, 8);
	memcpy(&flen, f + 8, 4);
	memcpy(&sum, f + 12, 4);
	if (flen != len) {
		snprintf(why, n, "CQE length %u, frame says %u", len, flen);
		return -1;
	}
	if (sum != frame_sum(f, len)) {
		snprintf(why, n, "checksum %#x, computed %#x (torn)", sum, frame_sum(f, len));
		return -1;
	}
	return 0;
}

static uint32_t frame_len(uint64_t seq, uint32_t slot_size)
{
	return FRAME_HDR + (uint32_t)((seq * 7919u) % (slot_size - FRAME_HDR + 1));
}

/* ---- memory and waiting ---------------------------------------------------------------- */

static void *ring_mem(uint64_t size)
{
	void *mem = NULL;

	if (posix_memalign(&mem, SDP_RING_ALIGN, size) != 0) {
		fprintf(stderr, "posix_memalign(%llu) failed\n", (unsigned long long)size);
		exit(T_EXIT_FAIL);
	}
	/* Garbage, so that nothing relies on zeroed memory the GPU path would not give it. */
	memset(mem, 0xa5, size);
	return mem;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Back-off for an idle poller: a few relaxes, then yields, then short sleeps. */
static void idle_wait(unsigned int *idle)
{
	struct timespec ts = {0, 50000};

	if (*idle < 32)
		SDP_CPU_RELAX();
	else if (*idle < 64)
		sched_yield();
	else
		nanosleep(&ts, NULL);
	(*idle)++;
}

/* ---- the atomic layer (host side) ------------------------------------------------------- */

static void test_atomics(void)
{
	uint32_t a = UINT32_MAX, exp32 = 7;
	uint64_t b = 40, exp64 = 40;

	T_EQ_INT(SDP_ATOMIC_FETCH_ADD(&a, 2u), UINT32_MAX);
	T_EQ_INT(SDP_ATOMIC_LOAD_ACQ(&a), 1); /* wraps */
	T_EQ_INT(SDP_ATOMIC_CAS(&a, &exp32, 9u), 0);
	T_EQ_INT(exp32, 1); /* the value seen */
	T_EQ_INT(SDP_ATOMIC_CAS(&a, &exp32, 9u), 1);
	T_EQ_INT(SDP_ATOMIC_LOAD_RLX(&a), 9);
	T_EQ_INT(SDP_ATOMIC_FETCH_ADD(&b, (uint64_t)1 << 40), 40);
	T_EQ_INT(SDP_ATOMIC_CAS(&b, &exp64, 1u), 0);
	T_EQ_INT(exp64, ((uint64_t)1 << 40) + 40);
	SDP_ATOMIC_STORE_REL(&b, 5u);
	SDP_ATOMIC_FENCE();
	T_EQ_INT(SDP_ATOMIC_LOAD_SC(&b), 5);
	SDP_ATOMIC_STORE_SC(&a, 3u);
	SDP_ATOMIC_STORE_RLX(&b, 6u);
	T_EQ_INT(a + b, 9);
}

/* ---- layout and arguments -------------------------------------------------------------- */

static void test_layout(void)
{
	struct sdp_ring_hdr *r = NULL, *keep = (struct sdp_ring_hdr *)&keep;
	uint64_t size = 12345, want;
	uint32_t pos;
	void *mem;

	T_STATUS(sdp_ring_rx_mem_size(0, 64, &size), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_mem_size(3, 64, &size), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_mem_size(SDP_RING_MAX_ENTRIES * 2, 64, &size),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_mem_size(8, 0, &size), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_mem_size(8, 100, &size), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_mem_size(8, SDP_RING_MAX_SLOT_SIZE + 64, &size),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_mem_size(8, 64, NULL), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(size, 12345); /* untouched by the failures */

	T_OK(sdp_ring_rx_mem_size(1, 64, &size));
	T_EQ_INT(size, 256 + 64 + 64);
	T_OK(sdp_ring_rx_mem_size(16, 192, &size));
	want = 256 + 16 * 32 + 16 * 192;
	T_EQ_INT(size, want);

	mem = ring_mem(size + SDP_RING_ALIGN);
	T_STATUS(sdp_ring_rx_init(NULL, size, 16, 192, SDP_RING_MODE_CYCLIC, 0, &keep),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_init(mem, size, 16, 192, SDP_RING_MODE_CYCLIC, 0, NULL),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(
		sdp_ring_rx_init((uint8_t *)mem + 8, size, 16, 192, SDP_RING_MODE_CYCLIC, 0, &keep),
		DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_init(mem, size - 1, 16, 192, SDP_RING_MODE_CYCLIC, 0, &keep),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_init(mem, size, 16, 192, 7, 0, &keep), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_init(mem, size, 12, 192, SDP_RING_MODE_CYCLIC, 0, &keep),
		 DOCA_ERROR_INVALID_VALUE);
	T_TRUE(keep == (struct sdp_ring_hdr *)&keep);

	T_OK(sdp_ring_rx_init(mem, size, 16, 192, SDP_RING_MODE_BACKPRESSURE, 5, &r));
	if (r == NULL) {
		free(mem);
		return;
	}
	T_TRUE((void *)r == mem);
	T_EQ_INT(r->magic, SDP_RING_MAGIC_RX);
	T_EQ_INT(r->version, SDP_RING_VERSION);
	T_EQ_INT(r->nb_slots, 16);
	T_EQ_INT(r->slot_mask, 15);
	T_EQ_INT(r->log2_slots, 4);
	T_EQ_INT(r->cqe_off, 256);
	T_EQ_INT(r->slot_off % SDP_RING_ALIGN, 0);
	T_EQ_INT(r->slot_off, 256 + 16 * 32);
	T_EQ_INT(r->total_size, size);
	T_EQ_INT(r->prod, 5);
	T_EQ_INT(r->claim, 5);
	T_EQ_INT(r->cons, 5);
	T_EQ_INT(sdp_ring_rx_pending(r), 0);
	for (pos = 0; pos < 40; pos++) {
		uint8_t *want_slot = (uint8_t *)mem + r->slot_off + (uint64_t)(pos % 16) * 192;

		T_TRUE(sdp_ring_rx_slot(r, pos) == (void *)want_slot);
		T_EQ_INT(sdp_ring_rx_slot_index(r, pos), pos % 16);
		T_EQ_INT(sdp_ring_rx_phase(r, pos), (pos / 16) % 2);
		T_TRUE((uint8_t *)sdp_ring_rx_cqe(r, pos) ==
		       (uint8_t *)mem + 256 + (pos % 16) * 32);
	}
	/* Across the wrap: UINT32_MAX is in the last slot of an odd lap, 0 starts lap 0 again. */
	T_EQ_INT(sdp_ring_rx_slot_index(r, UINT32_MAX), 15);
	T_EQ_INT(sdp_ring_rx_phase(r, UINT32_MAX), 1);
	T_EQ_INT(sdp_ring_rx_slot_index(r, 0), 0);
	T_EQ_INT(sdp_ring_rx_phase(r, 0), 0);
	/* Released beyond the claim, or behind the release index: refused, nothing changes. */
	T_STATUS(sdp_ring_rx_release(r, 6), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_rx_release(r, 4), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_ring_rx_release(r, 5));
	T_EQ_INT(r->cons, 5);
	T_EQ_INT(sdp_ring_rx_poll(r, 8, 0, &pos), 0);
	free(mem);
}

/* ---- one thread: laps, phases, wrap, exact counts ------------------------------------- */

static struct sdp_ring_hdr *make_rx(uint32_t nb, uint32_t slot_size, uint32_t mode, uint32_t start)
{
	struct sdp_ring_hdr *r = NULL;
	uint64_t size = 0;

	if (sdp_ring_rx_mem_size(nb, slot_size, &size) != DOCA_SUCCESS ||
	    sdp_ring_rx_init(ring_mem(size), size, nb, slot_size, mode, start, &r) !=
		    DOCA_SUCCESS) {
		fprintf(stderr, "FAIL: cannot make an RX ring of %u x %u\n", nb, slot_size);
		exit(T_EXIT_FAIL);
	}
	return r;
}

static int push_seq(struct sdp_ring_hdr *r, uint64_t seq, uint32_t flags)
{
	uint8_t f[256];
	uint32_t len = frame_len(seq, r->slot_size < sizeof(f) ? r->slot_size : sizeof(f));

	frame_fill(f, seq, len);
	return sdp_ring_rx_push(r, f, len, len, flags, 1000 + seq);
}

/* Poll up to max and check the frames are want_seq, want_seq + 1, ...; returns the count. */
static uint32_t poll_check(struct sdp_ring_hdr *r, uint32_t max, uint64_t want_seq,
			   uint32_t *first_p)
{
	uint32_t first = 0, n, i;
	char why[128];

	n = sdp_ring_rx_poll(r, max, 100, &first);
	for (i = 0; i < n; i++) {
		const struct sdp_ring_cqe *cqe = sdp_ring_rx_cqe(r, first + i);
		uint64_t seq = 0;

		if (frame_check(sdp_ring_rx_slot(r, first + i), cqe->len, &seq, why, sizeof(why)) !=
		    0) {
			t_fail("position %u: %s", first + i, why);
			continue;
		}
		if (seq != want_seq + i)
			t_fail("position %u: expected frame %llu, got %llu", first + i,
			       (unsigned long long)(want_seq + i), (unsigned long long)seq);
		if (cqe->slot != sdp_ring_rx_slot_index(r, first + i) || cqe->ts_ns != 1000 + seq ||
		    cqe->wire_len != cqe->len)
			t_fail("position %u: CQE slot %u ts %llu wire_len %u do not match",
			       first + i, cqe->slot, (unsigned long long)cqe->ts_ns, cqe->wire_len);
		if (((cqe->ctl & SDP_RING_CTL_PHASE) != 0) !=
		    (sdp_ring_rx_phase(r, first + i) != 0))
			t_fail("position %u: phase bit %d, lap says %u", first + i,
			       (cqe->ctl & SDP_RING_CTL_PHASE) != 0,
			       sdp_ring_rx_phase(r, first + i));
	}
	if (n > 0)
		*first_p = first;
	return n;
}

static void test_laps(uint32_t mode, uint32_t start)
{
	struct sdp_ring_hdr *r = make_rx(8, 128, mode, start);
	struct sdp_ring_counters c;
	uint64_t seq = 0, got = 0, bytes = 0;
	uint32_t first = 0, lap, flips = 0, last_phase = 2;

	/* 500 laps of varied batches: every frame in order, no loss, phases alternate. */
	for (lap = 0; lap < 500; lap++) {
		uint32_t batch = 1 + lap % 8, i, n;

		for (i = 0; i < batch; i++) {
			bytes += frame_len(seq, 128);
			T_EQ_INT(push_seq(r, seq++, 0), 1);
		}
		T_EQ_INT(sdp_ring_rx_pending(r), batch);
		/* Exactly max when at least max are there (DOCA's thread scope returns max - 1). */
		n = poll_check(r, batch > 1 ? batch - 1 : 1, got, &first);
		T_EQ_INT(n, batch > 1 ? batch - 1 : 1);
		got += n;
		if (n < batch) {
			uint32_t first2 = 0;

			T_EQ_INT(poll_check(r, 0, got, &first2), batch - n);
			T_EQ_INT(first2, first + n);
			got += batch - n;
		}
		if (sdp_ring_rx_phase(r, first) != last_phase) {
			flips++;
			last_phase = sdp_ring_rx_phase(r, first);
		}
		T_OK(sdp_ring_rx_release(r, sdp_ring_rx_claimed(r)));
		T_EQ_INT(sdp_ring_rx_poll(r, 8, 0, &first), 0);
	}
	T_EQ_INT(got, seq);
	T_TRUE(flips > 100);
	T_EQ_INT(r->prod, (uint32_t)(start + seq));
	sdp_ring_rx_counters(r, &c);
	T_EQ_INT(c.packets, seq);
	T_EQ_INT(c.bytes, bytes);
	T_EQ_INT(c.drops + c.overwrites + c.ring_full + c.csum_errors, 0);
	free(r);
}

/* Back-pressure: a full ring drops, one ring-full event per transition, nothing overwritten. */
static void test_backpressure_full(uint32_t start)
{
	struct sdp_ring_hdr *r = make_rx(4, 64, SDP_RING_MODE_BACKPRESSURE, start);
	struct sdp_ring_counters c;
	uint32_t first = 0, i;

	for (i = 0; i < 4; i++)
		T_EQ_INT(push_seq(r, i, i == 1 ? SDP_RING_CQE_F_L4_CSUM_BAD : 0), 1);
	for (i = 0; i < 3; i++)
		T_EQ_INT(push_seq(r, 100 + i, 0), 0);
	sdp_ring_rx_counters(r, &c);
	T_EQ_INT(c.packets, 4);
	T_EQ_INT(c.drops, 3);
	T_EQ_INT(c.ring_full, 1);
	T_EQ_INT(c.csum_errors, 1);

	/* Claimed but not released still holds the slots (deferred release). */
	T_EQ_INT(poll_check(r, 2, 0, &first), 2);
	T_EQ_INT(first, start);
	T_EQ_INT(push_seq(r, 200, 0), 0);
	T_OK(sdp_ring_rx_release(r, first + 1));
	T_EQ_INT(push_seq(r, 4, SDP_RING_CQE_F_L3_CSUM_BAD), 1);
	T_EQ_INT(push_seq(r, 201, 0), 0);
	sdp_ring_rx_counters(r, &c);
	T_EQ_INT(c.drops, 5);
	T_EQ_INT(c.ring_full, 2);
	T_EQ_INT(c.overwrites, 0);
	T_EQ_INT(c.csum_errors, 2);
	T_OK(sdp_ring_rx_release(r, sdp_ring_rx_claimed(r)));
	T_EQ_INT(poll_check(r, 0, 2, &first), 3);
	T_EQ_INT(sdp_ring_rx_cqe(r, first + 2)->flags, SDP_RING_CQE_F_L3_CSUM_BAD);
	T_OK(sdp_ring_rx_release(r, first + 3));
	T_EQ_INT(r->cons, (uint32_t)(start + 5));
	free(r);
}

/* CYCLIC: an idle consumer loses the oldest frames, each counted; claims are respected. */
static void test_cyclic_overwrite(uint32_t start)
{
	struct sdp_ring_hdr *r = make_rx(4, 64, SDP_RING_MODE_CYCLIC, start);
	struct sdp_ring_counters c;
	uint32_t first = 0, i;
	uint8_t big[200];

	for (i = 0; i < 10; i++)
		T_EQ_INT(push_seq(r, i, 0), 1);
	sdp_ring_rx_counters(r, &c);
	T_EQ_INT(c.packets, 10);
	T_EQ_INT(c.overwrites, 6);
	T_EQ_INT(c.drops, 0);
	T_EQ_INT(c.ring_full, 1);
	T_EQ_INT(sdp_ring_rx_pending(r), 4);

	/* The four newest survive; the consumer skips the six lost ones. */
	T_EQ_INT(poll_check(r, 2, 6, &first), 2);
	T_EQ_INT(first, (uint32_t)(start + 6));
	/*
	 * A receive call in progress holds frames 6 and 7: frame 10's slot is frame 6's, so the
	 * producer drops it rather than tear what the consumer reads.
	 */
	T_EQ_INT(push_seq(r, 10, 0), 0);
	sdp_ring_rx_counters(r, &c);
	T_EQ_INT(c.overwrites, 6);
	T_EQ_INT(c.drops, 1);
	T_EQ_INT(c.ring_full, 1);
	/* End of the call: the slots return and are reused without counting anything. */
	T_OK(sdp_ring_rx_release(r, sdp_ring_rx_claimed(r)));
	T_EQ_INT(push_seq(r, 10, 0), 1);
	T_EQ_INT(push_seq(r, 11, 0), 1);
	sdp_ring_rx_counters(r, &c);
	T_EQ_INT(c.overwrites, 6);
	/* Frame 8 was never claimed: frame 12 overwrites it, a new full episode. */
	T_EQ_INT(push_seq(r, 12, 0), 1);
	sdp_ring_rx_counters(r, &c);
	T_EQ_INT(c.overwrites, 7);
	T_EQ_INT(c.ring_full, 2);
	T_EQ_INT(poll_check(r, 0, 9, &first), 4);
	T_EQ_INT(first, (uint32_t)(start + 9));
	T_OK(sdp_ring_rx_release(r, sdp_ring_rx_claimed(r)));
	T_EQ_INT(sdp_ring_rx_poll(r, 0, 0, &first), 0);
	/* 14 offers: received 6 (6, 7, 9..12) + overwritten 7 + dropped 1. */
	sdp_ring_rx_counters(r, &c);
	T_EQ_INT(c.packets, 13);
	T_EQ_INT(c.drops, 1);

	/* Longer than a slot: truncated, flagged, wire length kept. */
	memset(big, 0x5a, sizeof(big));
	T_EQ_INT(sdp_ring_rx_push(r, big, sizeof(big), sizeof(big), 0, 0), 1);
	T_EQ_INT(sdp_ring_rx_poll(r, 0, 0, &first), 1);
	T_EQ_INT(sdp_ring_rx_cqe(r, first)->len, 64);
	T_EQ_INT(sdp_ring_rx_cqe(r, first)->wire_len, sizeof(big));
	T_EQ_INT(sdp_ring_rx_cqe(r, first)->flags, SDP_RING_CQE_F_TRUNCATED);
	T_OK(sdp_ring_rx_release(r, first + 1));
	free(r);
}

/*
 * The handshake: an entry the producer has marked BUSY is not taken until the producer decides.
 * Plays the producer's half by hand (mark, then restore as a producer that saw the claim does).
 */
static void test_busy_entry(void)
{
	struct sdp_ring_hdr *r = make_rx(4, 64, SDP_RING_MODE_CYCLIC, UINT32_MAX - 1);
	struct sdp_ring_cqe *cqe;
	uint32_t first = 0, claim;
	uint64_t prev;
	int i;

	for (i = 0; i < 4; i++)
		T_EQ_INT(push_seq(r, (uint64_t)i, 0), 1);
	cqe = sdp_ring_rx_cqe(r, UINT32_MAX - 1);
	prev = cqe->ctl;
	cqe->ctl = ((uint64_t)(uint32_t)(UINT32_MAX - 1 + 4) << 32) | SDP_RING_CTL_BUSY;
	claim = sdp_ring_rx_claimed(r);
	T_EQ_INT(sdp_ring_rx_poll(r, 0, 50, &first), 0);
	T_EQ_INT(sdp_ring_rx_claimed(r), claim); /* undecided: left unclaimed */
	cqe->ctl = prev;
	T_EQ_INT(poll_check(r, 0, 0, &first), 4);
	T_EQ_INT(first, UINT32_MAX - 1);
	T_EQ_INT(sdp_ring_rx_claimed(r), 2);
	T_OK(sdp_ring_rx_release(r, 2));
	free(r);
}

/* ---- two threads ----------------------------------------------------------------------- */

struct rx_run {
	struct sdp_ring_hdr *r;
	uint32_t mode;
	uint64_t sent;
	uint64_t pushed;   /* producer's own count of frames the ring took */
	uint64_t refused;  /* producer's own count of frames the ring refused */
	uint32_t done;	   /* producer finished (atomic) */
	uint64_t received; /* consumer */
	uint64_t gaps;	   /* consumer: sequence numbers skipped */
	uint64_t bad;	   /* consumer: torn or out-of-order frames */
	int timed_out;
};

static void *rx_producer(void *arg)
{
	struct rx_run *run = arg;
	uint8_t f[256];
	uint64_t seq;

	for (seq = 0; seq < run->sent; seq++) {
		uint32_t len = frame_len(seq, run->r->slot_size);

		frame_fill(f, seq, len);
		if (sdp_ring_rx_push(run->r, f, len, len, 0, seq)) {
			run->pushed++;
		} else {
			run->refused++;
			/* A port that found the ring full comes back after its next poll. */
			if (run->refused % 4 == 0)
				sched_yield();
		}
	}
	__atomic_store_n(&run->done, 1u, __ATOMIC_RELEASE);
	return NULL;
}

static void *rx_consumer(void *arg)
{
	struct rx_run *run = arg;
	double deadline = now_s() + DEADLINE_S;
	unsigned int idle = 0, calls = 0;
	uint64_t next = 0;
	char why[128];

	for (;;) {
		uint32_t first = 0, n, i;

		n = sdp_ring_rx_poll(run->r, 32, 1000, &first);
		for (i = 0; i < n; i++) {
			const struct sdp_ring_cqe *cqe = sdp_ring_rx_cqe(run->r, first + i);
			uint64_t seq = 0;

			if (frame_check(sdp_ring_rx_slot(run->r, first + i), cqe->len, &seq, why,
					sizeof(why)) != 0) {
				if (run->bad++ < 5)
					fprintf(stderr, "FAIL position %u: %s\n", first + i, why);
				continue;
			}
			if (seq < next) {
				if (run->bad++ < 5)
					fprintf(stderr,
						"FAIL position %u: frame %llu after frame %llu\n",
						first + i, (unsigned long long)seq,
						(unsigned long long)next - 1);
				continue;
			}
			run->gaps += seq - next;
			next = seq + 1;
			run->received++;
		}
		/* CYCLIC: slots go back at the end of every receive call. */
		if (n > 0)
			sdp_ring_rx_release(run->r, sdp_ring_rx_claimed(run->r));
		if (n > 0) {
			idle = 0;
			/* Deliberately slow in CYCLIC mode: the producer laps us. */
			if (run->mode == SDP_RING_MODE_CYCLIC && ++calls % 16 == 0) {
				struct timespec ts = {0, 200000};

				nanosleep(&ts, NULL);
			}
			continue;
		}
		if (__atomic_load_n(&run->done, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&run->r->prod, __ATOMIC_ACQUIRE) == sdp_ring_rx_claimed(run->r))
			break;
		if (now_s() > deadline) {
			run->timed_out = 1;
			break;
		}
		idle_wait(&idle);
	}
	/* Frames never received after the last one seen were lost too. */
	run->gaps += run->sent - next;
	return NULL;
}

static void test_threads(uint32_t mode, uint32_t start)
{
	struct rx_run run;
	struct sdp_ring_counters c;
	pthread_t prod, cons;
	const char *name = mode == SDP_RING_MODE_CYCLIC ? "CYCLIC" : "BACKPRESSURE";

	memset(&run, 0, sizeof(run));
	run.r = make_rx(256, 128, mode, start);
	run.mode = mode;
	run.sent = FRAMES_THREADED;
	if (pthread_create(&cons, NULL, rx_consumer, &run) != 0 ||
	    pthread_create(&prod, NULL, rx_producer, &run) != 0) {
		fprintf(stderr, "FAIL: pthread_create: %s\n", strerror(errno));
		exit(T_EXIT_FAIL);
	}
	pthread_join(prod, NULL);
	pthread_join(cons, NULL);
	sdp_ring_rx_counters(run.r, &c);
	printf("%s: sent %llu received %llu dropped %llu overwritten %llu ring-full %llu\n", name,
	       (unsigned long long)run.sent, (unsigned long long)run.received,
	       (unsigned long long)c.drops, (unsigned long long)c.overwrites,
	       (unsigned long long)c.ring_full);

	T_EQ_INT(run.timed_out, 0);
	T_EQ_INT(run.bad, 0);
	T_EQ_INT(c.packets, run.pushed);
	T_EQ_INT(c.drops, run.refused);
	/* Every frame exactly once: received, dropped or overwritten; the gaps are the losses. */
	T_EQ_INT(run.received + c.drops + c.overwrites, run.sent);
	T_EQ_INT(run.gaps, c.drops + c.overwrites);
	T_TRUE(run.received > 0);
	if (mode == SDP_RING_MODE_BACKPRESSURE) {
		T_EQ_INT(c.overwrites, 0);
		T_EQ_INT(run.received, c.packets);
	} else {
		T_TRUE(c.overwrites > 0); /* the slow consumer really was overrun */
	}
	T_TRUE(c.ring_full <= c.drops + c.overwrites);
	T_TRUE((c.drops + c.overwrites == 0) == (c.ring_full == 0));
	free(run.r);
}

/* ---- TX --------------------------------------------------------------------------------- */

static struct sdp_ring_tx_hdr *make_tx(uint32_t nb, uint32_t start)
{
	struct sdp_ring_tx_hdr *r = NULL;
	uint64_t size = 0;

	if (sdp_ring_tx_mem_size(nb, &size) != DOCA_SUCCESS ||
	    sdp_ring_tx_init(ring_mem(size), size, nb, start, &r) != DOCA_SUCCESS) {
		fprintf(stderr, "FAIL: cannot make a TX ring of %u\n", nb);
		exit(T_EXIT_FAIL);
	}
	return r;
}

static void test_tx_single(void)
{
	struct sdp_ring_tx_hdr *r, *keep = (struct sdp_ring_tx_hdr *)&keep;
	struct sdp_ring_counters c;
	struct sdp_ring_txc out[8];
	uint64_t size = 77;
	uint32_t first = 0, pos = 0, i;
	void *mem;

	T_STATUS(sdp_ring_tx_mem_size(0, &size), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_tx_mem_size(6, &size), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_tx_mem_size(4, NULL), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(size, 77);
	T_OK(sdp_ring_tx_mem_size(4, &size));
	T_EQ_INT(size, 256 + 4 * 32 + 4 * 32);
	mem = ring_mem(size);
	T_STATUS(sdp_ring_tx_init(mem, size - 1, 4, 0, &keep), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_tx_init(mem, size, 4, 0, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ring_tx_init(NULL, size, 4, 0, &keep), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(keep == (struct sdp_ring_tx_hdr *)&keep);
	free(mem);

	r = make_tx(4, UINT32_MAX - 2);
	T_EQ_INT(r->magic, SDP_RING_MAGIC_TX);
	T_EQ_INT(sdp_ring_tx_reserve(r, 0, &first), 0);
	T_EQ_INT(sdp_ring_tx_reserve(r, 5, &first), 0);
	T_EQ_INT(sdp_ring_tx_peek(r, 8, &first), 0);
	T_STATUS(sdp_ring_tx_complete(r, r->cons, DOCA_SUCCESS, 0), DOCA_ERROR_INVALID_VALUE);

	/* A batch of three across the wrap, only the last with NOTIFY. */
	T_EQ_INT(sdp_ring_tx_reserve(r, 3, &first), 3);
	T_EQ_INT(first, UINT32_MAX - 2);
	for (i = 0; i < 3; i++) {
		struct sdp_ring_txd *d = sdp_ring_tx_desc(r, first + i);

		d->addr = 0x1000 + i;
		d->len = 60 + i;
		d->flags = i == 2 ? SDP_RING_TXD_F_NOTIFY : 0;
		d->send_ts_ns = 0;
		d->user = 500 + i;
	}
	T_STATUS(sdp_ring_tx_submit(r, first + 5), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(sdp_ring_tx_peek(r, 8, &pos), 0); /* not published yet */
	T_OK(sdp_ring_tx_submit(r, first + 3));
	T_EQ_INT(sdp_ring_tx_reserve(r, 2, &pos), 0); /* one left */
	T_EQ_INT(sdp_ring_tx_post(r, 0x2000, 100, SDP_RING_TXD_F_NOTIFY, 42, 600), 1);
	T_EQ_INT(sdp_ring_tx_post(r, 0x3000, 100, 0, 0, 700), 0);

	T_EQ_INT(sdp_ring_tx_peek(r, 8, &pos), 4);
	T_EQ_INT(pos, UINT32_MAX - 2);
	T_STATUS(sdp_ring_tx_complete(r, pos + 1, DOCA_SUCCESS, 0), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_ring_tx_complete(r, pos, DOCA_SUCCESS, 1));
	T_EQ_INT(sdp_ring_tx_poll_cmpl(r, out, 8), 0); /* no NOTIFY, no completion */
	T_OK(sdp_ring_tx_complete(r, pos + 1, DOCA_ERROR_IO_FAILED, 2));
	T_OK(sdp_ring_tx_complete(r, pos + 2, DOCA_SUCCESS, 3));
	T_EQ_INT(sdp_ring_tx_desc(r, pos + 3)->send_ts_ns, 42);
	T_OK(sdp_ring_tx_complete(r, pos + 3, DOCA_SUCCESS, 4));
	T_STATUS(sdp_ring_tx_complete(r, pos + 4, DOCA_SUCCESS, 0), DOCA_ERROR_INVALID_VALUE);

	T_EQ_INT(sdp_ring_tx_poll_cmpl(r, out, 8), 3);
	T_EQ_INT(out[0].user, 501);
	T_EQ_INT(out[0].status, DOCA_ERROR_IO_FAILED);
	T_EQ_INT(out[0].desc_pos, UINT32_MAX - 1);
	T_EQ_INT(out[1].user, 502);
	T_EQ_INT(out[1].status, DOCA_SUCCESS);
	T_EQ_INT(out[1].ts_ns, 3);
	T_EQ_INT(out[2].user, 600);
	T_EQ_INT(out[2].desc_pos, 0); /* the wrap */
	T_EQ_INT(sdp_ring_tx_poll_cmpl(r, out, 8), 0);

	/* Completions the producer does not poll hold the engine back. */
	for (i = 0; i < 4; i++)
		T_EQ_INT(sdp_ring_tx_post(r, 0x4000, 64, SDP_RING_TXD_F_NOTIFY, 0, 800 + i), 1);
	T_EQ_INT(sdp_ring_tx_peek(r, 8, &pos), 4);
	for (i = 0; i < 4; i++)
		T_OK(sdp_ring_tx_complete(r, pos + i, DOCA_SUCCESS, 0));
	T_EQ_INT(sdp_ring_tx_post(r, 0x5000, 64, SDP_RING_TXD_F_NOTIFY, 0, 900), 1);
	T_EQ_INT(sdp_ring_tx_peek(r, 8, &pos), 0); /* no completion entry free */
	T_STATUS(sdp_ring_tx_complete(r, r->cons, DOCA_SUCCESS, 0), DOCA_ERROR_FULL);
	T_EQ_INT(sdp_ring_tx_poll_cmpl(r, out, 2), 2);
	T_EQ_INT(out[1].user, 801);
	T_EQ_INT(sdp_ring_tx_peek(r, 8, &pos), 1);
	T_OK(sdp_ring_tx_complete(r, pos, DOCA_SUCCESS, 0));
	T_EQ_INT(sdp_ring_tx_poll_cmpl(r, out, 8), 3);
	T_EQ_INT(out[2].user, 900);

	sdp_ring_tx_counters(r, &c);
	T_EQ_INT(c.packets, 8);
	T_EQ_INT(c.drops, 1);
	T_EQ_INT(c.bytes, 60 + 62 + 100 + 5 * 64);
	T_EQ_INT(c.ring_full, 2); /* the two refused reservations were separate transitions */
	free(r);
}

#define TX_FRAMES 200000u
#define TX_FAIL_EVERY 997u

struct tx_run {
	struct sdp_ring_tx_hdr *r;
	uint64_t notified;  /* producer: completions it expects */
	uint64_t completed; /* producer: completions it got */
	uint64_t failed;    /* engine: sends it failed */
	uint64_t bad;
	uint32_t done; /* producer finished (atomic) */
	int timed_out;
};

static void *tx_producer(void *arg)
{
	struct tx_run *run = arg;
	double deadline = now_s() + DEADLINE_S;
	struct sdp_ring_txc out[16];
	uint64_t seq = 0, next_cmpl = 0;
	unsigned int idle = 0;

	while (seq < TX_FRAMES || run->completed < run->notified) {
		uint32_t first = 0, n, i, want = 1 + (uint32_t)(seq % 7);

		n = sdp_ring_tx_poll_cmpl(run->r, out, 16);
		for (i = 0; i < n; i++) {
			if (out[i].user < next_cmpl ||
			    (out[i].status != DOCA_SUCCESS) != (out[i].user % TX_FAIL_EVERY == 0)) {
				if (run->bad++ < 5)
					fprintf(stderr, "FAIL completion of %llu status %u\n",
						(unsigned long long)out[i].user, out[i].status);
			}
			next_cmpl = out[i].user + 1;
		}
		run->completed += n;
		if (want > TX_FRAMES - seq)
			want = (uint32_t)(TX_FRAMES - seq);
		if (want > 0 && sdp_ring_tx_reserve(run->r, want, &first) == want) {
			for (i = 0; i < want; i++, seq++) {
				struct sdp_ring_txd *d = sdp_ring_tx_desc(run->r, first + i);
				int notify = seq % 5 == 0 || seq == TX_FRAMES - 1;

				d->addr = 0x10000 + seq;
				d->len = 64 + (uint32_t)(seq % 1000);
				d->flags = notify ? SDP_RING_TXD_F_NOTIFY : 0;
				d->send_ts_ns = seq;
				d->user = seq;
				if (notify || seq % TX_FAIL_EVERY == 0)
					run->notified++;
			}
			sdp_ring_tx_submit(run->r, first + want);
			idle = 0;
			continue;
		}
		if (n > 0)
			continue;
		if (now_s() > deadline) {
			run->timed_out = 1;
			break;
		}
		idle_wait(&idle);
	}
	__atomic_store_n(&run->done, 1u, __ATOMIC_RELEASE);
	return NULL;
}

static void *tx_engine(void *arg)
{
	struct tx_run *run = arg;
	double deadline = now_s() + DEADLINE_S;
	unsigned int idle = 0;
	uint64_t next = 0;

	for (;;) {
		uint32_t first = 0, n, i;

		n = sdp_ring_tx_peek(run->r, 32, &first);
		for (i = 0; i < n; i++) {
			const struct sdp_ring_txd *d = sdp_ring_tx_desc(run->r, first + i);
			doca_error_t st =
				d->user % TX_FAIL_EVERY == 0 ? DOCA_ERROR_IO_FAILED : DOCA_SUCCESS;

			if (d->user != next || d->addr != 0x10000 + next ||
			    d->len != 64 + next % 1000 || d->send_ts_ns != next) {
				if (run->bad++ < 5)
					fprintf(stderr,
						"FAIL descriptor %u: user %llu, expected %llu\n",
						first + i, (unsigned long long)d->user,
						(unsigned long long)next);
			}
			next = d->user + 1;
			if (st != DOCA_SUCCESS)
				run->failed++;
			if (sdp_ring_tx_complete(run->r, first + i, st, next) != DOCA_SUCCESS &&
			    run->bad++ < 5)
				fprintf(stderr, "FAIL completing descriptor %u\n", first + i);
		}
		if (n > 0) {
			idle = 0;
			continue;
		}
		if (__atomic_load_n(&run->done, __ATOMIC_ACQUIRE))
			break;
		if (now_s() > deadline) {
			run->timed_out = 1;
			break;
		}
		idle_wait(&idle);
	}
	return NULL;
}

static void test_tx_threads(void)
{
	struct tx_run run;
	struct sdp_ring_counters c;
	pthread_t prod, eng;

	memset(&run, 0, sizeof(run));
	run.r = make_tx(64, UINT32_MAX - 1000);
	if (pthread_create(&eng, NULL, tx_engine, &run) != 0 ||
	    pthread_create(&prod, NULL, tx_producer, &run) != 0) {
		fprintf(stderr, "FAIL: pthread_create: %s\n", strerror(errno));
		exit(T_EXIT_FAIL);
	}
	pthread_join(prod, NULL);
	pthread_join(eng, NULL);
	sdp_ring_tx_counters(run.r, &c);
	printf("TX: posted %u completions %llu failed %llu ring-full %llu\n", TX_FRAMES,
	       (unsigned long long)run.completed, (unsigned long long)run.failed,
	       (unsigned long long)c.ring_full);
	T_EQ_INT(run.timed_out, 0);
	T_EQ_INT(run.bad, 0);
	T_EQ_INT(run.completed, run.notified);
	T_EQ_INT(c.packets + c.drops, TX_FRAMES);
	T_EQ_INT(c.drops, run.failed);
	T_EQ_INT(run.failed, (TX_FRAMES + TX_FAIL_EVERY - 1) / TX_FAIL_EVERY);
	T_EQ_INT(run.r->prod, (uint32_t)(UINT32_MAX - 1000 + TX_FRAMES));
	T_EQ_INT(run.r->cons, run.r->prod);
	free(run.r);
}

int main(void)
{
	test_atomics();
	test_layout();
	test_laps(SDP_RING_MODE_BACKPRESSURE, 0);
	test_laps(SDP_RING_MODE_CYCLIC, UINT32_MAX - 37);
	test_laps(SDP_RING_MODE_BACKPRESSURE, UINT32_MAX - 3);
	test_backpressure_full(0);
	test_backpressure_full(UINT32_MAX - 1);
	test_cyclic_overwrite(0);
	test_cyclic_overwrite(UINT32_MAX - 5);
	test_busy_entry();
	test_tx_single();
	test_threads(SDP_RING_MODE_BACKPRESSURE, UINT32_MAX - 100000);
	test_threads(SDP_RING_MODE_CYCLIC, UINT32_MAX - 300000);
	test_tx_threads();
	T_DONE();
}
