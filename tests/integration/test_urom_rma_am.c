/*
 * Integration: worker_rma active messages between two ranks (processes, each with its own
 * worker, a domain over softdpu's TCP OOB; test_urom_rma_pair.c). Every byte of every header
 * and payload is checked at the receiver:
 * - AMs sent before the receive is posted (queued by the receiving worker), one handler each;
 * - receives posted (and known posted: a FLUSH answered behind them) before the AMs are sent;
 * - sizes: empty, 1 + 1, 17 + 1000, the largest header with the largest payload left, and the
 *   whole bound (message size - UROM_RMA_AM_OVERHEAD) as payload;
 * - the handler filter (an AM of another handler sent first does not complete the receive),
 *   UROM_RMA_AM_ANY, and the way back (rank 1 to rank 0, sender id checked);
 * - refusals: header > 64, header + payload over the bound and 32-bit handler overflow are
 *   INVALID_VALUE before a task exists, an unknown destination is NOT_FOUND from the worker;
 * - the queue bound: 1030 AMs nobody receives (then a marker whose receive is posted): the
 *   next receive reports 6 dropped (FULL), the 1024 queued ones are all delivered once.
 * Argument 2 "tcp": the same over UCX_TLS=tcp.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "test_urom_rma_pair.c"

#define BUF 4096u
#define MSG 4096u /* the service's default message size */
#define AMMAX (MSG - UROM_RMA_AM_OVERHEAD)
#define NCASE 5
#define NDROP (UROM_RMA_AM_QUEUE_MAX + 6)

static const size_t hlens[NCASE] = {0, 1, 17, UROM_RMA_AM_HDR_MAX, 0};
static const size_t plens[NCASE] = {0, 1, 1000, AMMAX - UROM_RMA_AM_HDR_MAX, AMMAX};

static uint8_t fill(uint32_t rank, size_t i)
{
	return (uint8_t)(rank + i);
}

static uint8_t pat(unsigned seed, size_t i)
{
	return (uint8_t)(seed * 37 + i * 11 + (i >> 7));
}

static uint8_t hbuf[NCASE][UROM_RMA_AM_HDR_MAX], pbuf[NCASE][AMMAX];

static void make(unsigned seed, int k)
{
	for (size_t i = 0; i < hlens[k]; i++)
		hbuf[k][i] = pat(seed + 100, i);
	for (size_t i = 0; i < plens[k]; i++)
		pbuf[k][i] = pat(seed, i);
}

static int expect(uint32_t rank, doca_error_t st, doca_error_t want, const char *what)
{
	if (st == want)
		return 1;
	fprintf(stderr, "rank %u: %s: %s, expected %s\n", rank, what, doca_error_get_name(st),
		doca_error_get_name(want));
	return 0;
}

/* Check a received AM against case k made with seed. */
static int check(uint32_t rank, const char *what, uint64_t handler, uint64_t sender,
		 const uint8_t *hdr, size_t hdr_len, const uint8_t *payload, size_t len,
		 uint64_t want_handler, uint64_t want_sender, unsigned seed, int k)
{
	if (handler != want_handler || sender != want_sender || hdr_len != hlens[k] ||
	    len != plens[k]) {
		fprintf(stderr,
			"rank %u: %s case %d: handler %lu sender %lu hdr %zu len %zu, expected "
			"%lu %lu %zu %zu\n",
			rank, what, k, (unsigned long)handler, (unsigned long)sender, hdr_len, len,
			(unsigned long)want_handler, (unsigned long)want_sender, hlens[k],
			plens[k]);
		return 0;
	}
	for (size_t i = 0; i < hdr_len; i++)
		if (hdr[i] != pat(seed + 100, i)) {
			fprintf(stderr, "rank %u: %s case %d: header byte %zu\n", rank, what, k, i);
			return 0;
		}
	for (size_t i = 0; i < len; i++)
		if (payload[i] != pat(seed, i)) {
			fprintf(stderr, "rank %u: %s case %d: payload byte %zu\n", rank, what, k,
				i);
			return 0;
		}
	return 1;
}

static doca_error_t recv_one(struct pair *p, uint64_t handler, uint8_t *hdr, uint8_t *payload,
			     struct urom_rma_am_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->hdr = hdr;
	m->payload = payload;
	m->cap = AMMAX;
	return urom_rma_am_recv_wait(p->w, p->s.pe, handler, m, T_WAIT_MS);
}

/* Receives posted in advance: completion records. */
static struct {
	int done;
	doca_error_t st;
	uint64_t handler, sender;
	size_t hdr_len, len;
	uint8_t hdr[UROM_RMA_AM_HDR_MAX], payload[AMMAX];
} rec[NCASE];

static void rec_cb(doca_error_t result, union doca_data cookie, uint64_t handler, const void *hdr,
		   size_t hdr_len, const void *payload, size_t len, uint64_t sender,
		   uint64_t dropped)
{
	int k = (int)cookie.u64;

	(void)dropped;
	rec[k].st = result;
	rec[k].handler = handler;
	rec[k].sender = sender;
	rec[k].hdr_len = hdr_len;
	rec[k].len = len;
	if (result == DOCA_SUCCESS && hdr_len <= UROM_RMA_AM_HDR_MAX && len <= AMMAX) {
		memcpy(rec[k].hdr, hdr, hdr_len);
		memcpy(rec[k].payload, payload, len);
	}
	rec[k].done++;
}

static int sender_side(struct pair *p)
{
	struct doca_pe *pe = p->s.pe;
	struct doca_urom_worker *w = p->w;
	static uint8_t big[MSG];
	uint8_t h[UROM_RMA_AM_HDR_MAX + 1] = {0};
	struct urom_rma_am_msg m;
	uint8_t rh[UROM_RMA_AM_HDR_MAX], rp[AMMAX];
	union doca_data ck = {.u64 = 0};
	int ok = 1, k;

	/* A: sent before any receive */
	for (k = 0; k < NCASE; k++) {
		make(10 + k, k);
		ok &= expect(0,
			     urom_rma_am_send_wait(w, pe, 1, 100 + k, hbuf[k], hlens[k], pbuf[k],
						   plens[k], T_WAIT_MS),
			     DOCA_SUCCESS, "send A");
	}
	ok = pair_barrier(p, ok); /* rank 1 receives A */
	ok = pair_barrier(p, ok); /* rank 1 posted B */
	for (k = 0; k < NCASE; k++) {
		make(20 + k, k);
		ok &= expect(0,
			     urom_rma_am_send_wait(w, pe, 1, 200 + k, hbuf[k], hlens[k], pbuf[k],
						   plens[k], T_WAIT_MS),
			     DOCA_SUCCESS, "send B");
	}
	ok = pair_barrier(p, ok); /* B sent */
	ok = pair_barrier(p, ok); /* rank 1 checked B, posted C (handler 300) */
	make(31, 1);
	ok &= expect(0, urom_rma_am_send_wait(w, pe, 1, 301, hbuf[1], 1, pbuf[1], 1, T_WAIT_MS),
		     DOCA_SUCCESS, "send C 301");
	make(30, 2);
	ok &= expect(0,
		     urom_rma_am_send_wait(w, pe, 1, 300, hbuf[2], hlens[2], pbuf[2], plens[2],
					   T_WAIT_MS),
		     DOCA_SUCCESS, "send C 300");
	make(40, 3);
	ok &= expect(0,
		     urom_rma_am_send_wait(w, pe, 1, 400, hbuf[3], hlens[3], pbuf[3], plens[3],
					   T_WAIT_MS),
		     DOCA_SUCCESS, "send D");
	ok = pair_barrier(p, ok); /* C and D sent: rank 1 checks them, sends E */
	ok &= expect(0, recv_one(p, 500, rh, rp, &m), DOCA_SUCCESS, "recv E");
	ok &= check(0, "E", m.handler, m.sender, rh, m.hdr_len, rp, m.len, 500, 1, 50, 4);

	/* refusals */
	ok &= expect(0, urom_rma_am_send(w, ck, 1, 1, h, UROM_RMA_AM_HDR_MAX + 1, NULL, 0, NULL),
		     DOCA_ERROR_INVALID_VALUE, "header of 65");
	ok &= expect(
		0,
		urom_rma_am_send_wait(w, pe, 1, 1, h, UROM_RMA_AM_HDR_MAX + 1, NULL, 0, T_WAIT_MS),
		DOCA_ERROR_INVALID_VALUE, "header of 65 (wait)");
	ok &= expect(0, urom_rma_am_send_wait(w, pe, 1, 1, NULL, 0, big, AMMAX + 1, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "payload over the bound");
	ok &= expect(0, urom_rma_am_send_wait(w, pe, 1, 1, h, 1, big, AMMAX, T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "header + payload over the bound");
	ok &= expect(0,
		     urom_rma_am_send_wait(w, pe, 1, (uint64_t)UINT32_MAX + 1, NULL, 0, big, 1,
					   T_WAIT_MS),
		     DOCA_ERROR_INVALID_VALUE, "33-bit handler");
	ok &= expect(0, urom_rma_am_send_wait(w, pe, 99, 1, h, 2, big, 3, T_WAIT_MS),
		     DOCA_ERROR_NOT_FOUND, "unknown destination");
	/* the worker still works after the refusals */
	make(60, 1);
	ok &= expect(0, urom_rma_am_send_wait(w, pe, 1, 600, hbuf[1], 1, pbuf[1], 1, T_WAIT_MS),
		     DOCA_SUCCESS, "send F");
	ok = pair_barrier(p, ok); /* rank 1 checks F, posts the marker's receive */
	/* G: more AMs than the receiving worker queues, then the marker */
	ok = pair_barrier(p, ok);
	for (uint32_t i = 0; i < NDROP && ok; i++)
		ok &= expect(0, urom_rma_am_send_wait(w, pe, 1, 900, NULL, 0, &i, 4, T_WAIT_MS),
			     DOCA_SUCCESS, "send G");
	ok &= expect(0, urom_rma_am_send_wait(w, pe, 1, 901, NULL, 0, NULL, 0, T_WAIT_MS),
		     DOCA_SUCCESS, "send marker");
	ok = pair_barrier(p, ok); /* G sent */
	return pair_barrier(p, ok) ? 0 : 1;
}

static int receiver_side(struct pair *p)
{
	struct doca_pe *pe = p->s.pe;
	struct doca_urom_worker *w = p->w;
	static uint8_t rh[UROM_RMA_AM_HDR_MAX], rp[AMMAX];
	struct urom_rma_am_msg m;
	int64_t deadline;
	int ok = 1, k, all;

	ok = pair_barrier(p, ok); /* A sent */
	for (k = NCASE - 1; k >= 0; k--) {
		ok &= expect(1, recv_one(p, 100 + k, rh, rp, &m), DOCA_SUCCESS, "recv A");
		ok &= check(1, "A", m.handler, m.sender, rh, m.hdr_len, rp, m.len, 100 + k, 0,
			    10 + k, k);
	}
	/* B: posted first, known posted when a FLUSH behind them is answered */
	for (k = 0; k < NCASE; k++)
		ok &= expect(1, urom_rma_am_recv(w, (union doca_data){.u64 = k}, 200 + k, rec_cb),
			     DOCA_SUCCESS, "post B");
	ok &= expect(1, urom_rma_flush_wait(w, pe, UROM_RMA_DEST_ALL, T_WAIT_MS), DOCA_SUCCESS,
		     "flush behind B");
	for (k = 0; k < NCASE; k++)
		ok &= rec[k].done == 0;
	ok = pair_barrier(p, ok); /* posted */
	ok = pair_barrier(p, ok); /* B sent */
	deadline = t_now_ms() + T_WAIT_MS;
	do {
		all = 1;
		for (k = 0; k < NCASE; k++)
			all &= rec[k].done != 0;
		if (!all)
			t_pe_step(pe, 2);
	} while (!all && t_now_ms() < deadline);
	for (k = 0; k < NCASE; k++) {
		ok &= rec[k].done == 1 && expect(1, rec[k].st, DOCA_SUCCESS, "recv B");
		ok &= check(1, "B", rec[k].handler, rec[k].sender, rec[k].hdr, rec[k].hdr_len,
			    rec[k].payload, rec[k].len, 200 + k, 0, 20 + k, k);
	}
	/* C: the filter. D: any handler. */
	memset(rec, 0, sizeof(rec));
	ok &= expect(1, urom_rma_am_recv(w, (union doca_data){.u64 = 0}, 300, rec_cb), DOCA_SUCCESS,
		     "post C");
	ok &= expect(1, urom_rma_flush_wait(w, pe, UROM_RMA_DEST_ALL, T_WAIT_MS), DOCA_SUCCESS,
		     "flush behind C");
	ok = pair_barrier(p, ok); /* C posted */
	ok = pair_barrier(p, ok); /* C and D sent */
	deadline = t_now_ms() + T_WAIT_MS;
	while (rec[0].done == 0 && t_now_ms() < deadline)
		t_pe_step(pe, 2);
	ok &= rec[0].done == 1 && expect(1, rec[0].st, DOCA_SUCCESS, "recv C 300");
	ok &= check(1, "C 300", rec[0].handler, rec[0].sender, rec[0].hdr, rec[0].hdr_len,
		    rec[0].payload, rec[0].len, 300, 0, 30, 2);
	ok &= expect(1, recv_one(p, 301, rh, rp, &m), DOCA_SUCCESS, "recv C 301");
	ok &= check(1, "C 301", m.handler, m.sender, rh, m.hdr_len, rp, m.len, 301, 0, 31, 1);
	ok &= expect(1, recv_one(p, UROM_RMA_AM_ANY, rh, rp, &m), DOCA_SUCCESS, "recv D");
	ok &= check(1, "D", m.handler, m.sender, rh, m.hdr_len, rp, m.len, 400, 0, 40, 3);
	/* E: the way back */
	make(50, 4);
	ok &= expect(1,
		     urom_rma_am_send_wait(w, pe, 0, 500, hbuf[4], hlens[4], pbuf[4], plens[4],
					   T_WAIT_MS),
		     DOCA_SUCCESS, "send E");
	ok = pair_barrier(p, ok); /* refusals done, F sent */
	ok &= expect(1, recv_one(p, UROM_RMA_AM_ANY, rh, rp, &m), DOCA_SUCCESS, "recv F");
	ok &= check(1, "F", m.handler, m.sender, rh, m.hdr_len, rp, m.len, 600, 0, 60, 1);
	/* G: the queue bound. The marker's receive is posted, so the marker is never dropped. */
	memset(rec, 0, sizeof(rec));
	ok &= expect(1, urom_rma_am_recv(w, (union doca_data){.u64 = 0}, 901, rec_cb), DOCA_SUCCESS,
		     "post marker");
	ok &= expect(1, urom_rma_flush_wait(w, pe, UROM_RMA_DEST_ALL, T_WAIT_MS), DOCA_SUCCESS,
		     "flush behind the marker");
	ok = pair_barrier(p, ok); /* posted */
	ok = pair_barrier(p, ok); /* G sent */
	deadline = t_now_ms() + T_WAIT_MS;
	while (rec[0].done == 0 && t_now_ms() < deadline)
		t_pe_step(pe, 2);
	ok &= rec[0].done == 1 && expect(1, rec[0].st, DOCA_SUCCESS, "marker") && rec[0].len == 0 &&
	      rec[0].handler == 901;
	/* the next receive reports the drops, and consumes nothing */
	ok &= expect(1, recv_one(p, 900, rh, rp, &m), DOCA_ERROR_FULL, "drops reported");
	if (m.dropped != NDROP - UROM_RMA_AM_QUEUE_MAX) {
		fprintf(stderr, "rank 1: %lu AMs dropped, expected %d\n", (unsigned long)m.dropped,
			NDROP - UROM_RMA_AM_QUEUE_MAX);
		ok = 0;
	}
	{
		static uint8_t seen[NDROP];
		uint32_t idx;

		for (k = 0; k < UROM_RMA_AM_QUEUE_MAX && ok; k++) {
			ok &= expect(1, recv_one(p, 900, rh, rp, &m), DOCA_SUCCESS, "recv G");
			memcpy(&idx, rp, sizeof(idx));
			if (!ok || m.len != 4 || m.hdr_len != 0 || idx >= NDROP || seen[idx]++) {
				fprintf(stderr, "rank 1: G %d: len %zu index %u\n", k, m.len, idx);
				ok = 0;
			}
		}
	}
	return pair_barrier(p, ok) ? 0 : 1;
}

static int rank_main(uint32_t rank, uint16_t port, struct sdp_urom_oob *oob)
{
	struct pair p;
	int rc;

	if (pair_open(&p, rank, port, oob, BUF, 0, fill) != 0) {
		pair_close(&p);
		return 1;
	}
	rc = rank == 0 ? sender_side(&p) : receiver_side(&p);
	pair_close(&p);
	return rc;
}

int main(int argc, char **argv)
{
	return pair_main(argc, argv, rank_main);
}
