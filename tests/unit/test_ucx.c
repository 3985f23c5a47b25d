/*
 * Unit test: the UROM UCX layer, two workers in one process (a "server" that echoes every
 * message to its sender's reply endpoint, and a "client"): connection by worker address (the
 * only kind there is: no listener), a message each way, a 1 MiB message (rendezvous), the
 * receive bound (a message over it dropped unread, eager and rendezvous, and the next one still
 * arrives), a bounded wait that times out, wrong arguments, and the peer error callback once
 * the server's worker is gone.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doca_log.h"
#include "sdp_ucx.h"
#include "t_helpers.h"

struct peer {
	struct sdp_ucx_worker w;
	const char *name;
	int echo;	   /* send every message back to its reply endpoint */
	int received;	   /* messages so far */
	int reply_ep_seen; /* the last message came with a reply endpoint */
	uint8_t *last;	   /* copy of the last message */
	size_t last_len;
	ucp_ep_h reply_ep; /* the reply endpoint of the last message */
	int errors;	   /* endpoint errors seen */
	ucp_ep_h error_eps[4];
};

static void on_recv(void *arg, ucp_ep_h reply_ep, const void *data, size_t len)
{
	struct peer *p = arg;

	free(p->last);
	p->last = malloc(len);
	memcpy(p->last, data, len);
	p->last_len = len;
	p->reply_ep_seen = reply_ep != NULL;
	p->reply_ep = reply_ep;
	p->received++;
	if (p->echo && reply_ep != NULL && sdp_ucx_send(&p->w, reply_ep, data, len) != DOCA_SUCCESS)
		t_fail("%s: echo of %zu bytes failed", p->name, len);
}

static void on_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	struct peer *p = arg;

	(void)status;
	if (p->errors < 4)
		p->error_eps[p->errors] = ep;
	p->errors++;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Progress both workers until *cond becomes nonzero (sleeping on both fds); 0 on timeout. */
static int pump(struct peer *a, struct peer *b, const int *cond, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct pollfd pfd[2];

	while (!*cond) {
		int n = sdp_ucx_worker_progress(&a->w) + sdp_ucx_worker_progress(&b->w);

		if (*cond)
			break;
		if (n > 0)
			continue;
		if (now_ms() >= deadline)
			return 0;
		if (sdp_ucx_worker_arm(&a->w) != DOCA_SUCCESS ||
		    sdp_ucx_worker_arm(&b->w) != DOCA_SUCCESS)
			continue;
		pfd[0].fd = a->w.efd;
		pfd[1].fd = b->w.efd;
		pfd[0].events = pfd[1].events = POLLIN;
		(void)poll(pfd, 2, 50);
	}
	return 1;
}

/* True once p has received more than `before` messages. */
static int got_more(struct peer *a, struct peer *b, struct peer *p, int before, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	int done = 0;

	while (!done && now_ms() < deadline) {
		int tick = 0;

		/* pump() needs a flag: poll in short rounds and re-check the count. */
		pump(a, b, &tick, 20);
		done = p->received > before;
	}
	return done;
}

static int make_ctx(ucp_context_h *ctx)
{
	doca_error_t status = sdp_ucx_context_create("lo", ctx);

	if (status != DOCA_SUCCESS)
		T_SKIP("UCX cannot create a context here: %s", doca_error_get_name(status));
	return 0;
}

int main(void)
{
	struct peer srv = {.name = "server", .echo = 1}, cli = {.name = "client"};
	ucp_context_h sctx, cctx;
	ucp_ep_h ep_sa, ep_addr, ep_addr2, ep_none, dummy = NULL;
	uint8_t *big;
	void *addr;
	size_t addr_len, i, big_len = 1u << 20;
	int before, cli_before, never = 0;
	int64_t t0, elapsed;

	/* Arguments. */
	T_STATUS(sdp_ucx_context_create("lo", NULL), DOCA_ERROR_INVALID_VALUE);
	make_ctx(&sctx);
	make_ctx(&cctx);
	T_STATUS(sdp_ucx_worker_init(NULL, sctx, UCS_THREAD_MODE_SINGLE, on_recv, &srv),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ucx_worker_init(&srv.w, NULL, UCS_THREAD_MODE_SINGLE, on_recv, &srv),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ucx_worker_init(&srv.w, sctx, UCS_THREAD_MODE_SINGLE, NULL, &srv),
		 DOCA_ERROR_INVALID_VALUE);

	T_OK(sdp_ucx_worker_init(&srv.w, sctx, UCS_THREAD_MODE_SINGLE, on_recv, &srv));
	T_OK(sdp_ucx_worker_init(&cli.w, cctx, UCS_THREAD_MODE_SERIALIZED, on_recv, &cli));
	T_TRUE(srv.w.efd >= 0);
	T_TRUE(cli.w.efd >= 0);

	/* The first endpoint, with peer error handling (ep_sa: "service-like"). */
	T_OK(sdp_ucx_worker_address(&srv.w, &addr, &addr_len));
	T_OK(sdp_ucx_ep_connect_addr(&cli.w, addr, addr_len, UCP_ERR_HANDLING_MODE_PEER,
				     on_ep_error, &cli, &ep_sa));
	free(addr);

	/* Client -> server, echoed back to the client through the reply endpoint. */
	T_STATUS(sdp_ucx_send(&cli.w, NULL, "x", 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ucx_send(&cli.w, ep_sa, NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ucx_send(&cli.w, ep_sa, "x", 0), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_ucx_send(&cli.w, ep_sa, "hello server", 12));
	T_TRUE(got_more(&srv, &cli, &cli, 0, 10000));
	T_EQ_INT(srv.received, 1);
	T_TRUE(srv.reply_ep_seen);
	T_EQ_INT(cli.received, 1);
	T_EQ_INT(cli.last_len, 12);
	T_TRUE(cli.last != NULL && memcmp(cli.last, "hello server", 12) == 0);

	/* Server -> client on the reply endpoint, later (UCX keeps it while connected). */
	if (srv.reply_ep != NULL) {
		before = cli.received;
		T_OK(sdp_ucx_send(&srv.w, srv.reply_ep, "hello client", 12));
		T_TRUE(got_more(&srv, &cli, &cli, before, 10000));
		T_EQ_INT(cli.last_len, 12);
		T_TRUE(cli.last != NULL && memcmp(cli.last, "hello client", 12) == 0);
		T_TRUE(cli.reply_ep_seen);
	}

	/* 1 MiB each way: rendezvous receive into our own buffer. */
	big = malloc(big_len);
	for (i = 0; i < big_len; i++)
		big[i] = (uint8_t)(i * 31 + (i >> 12));
	before = cli.received;
	T_OK(sdp_ucx_send(&cli.w, ep_sa, big, big_len));
	memset(big + 100, 0, 100); /* the send copied it: changing ours changes nothing */
	T_TRUE(got_more(&srv, &cli, &cli, before, 20000));
	for (i = 100; i < 200; i++)
		big[i] = (uint8_t)(i * 31 + (i >> 12));
	T_EQ_INT(srv.last_len, big_len);
	T_EQ_INT(cli.last_len, big_len);
	T_TRUE(srv.last != NULL && srv.last_len == big_len && memcmp(srv.last, big, big_len) == 0);
	T_TRUE(cli.last != NULL && cli.last_len == big_len && memcmp(cli.last, big, big_len) == 0);

	/* The receive bound: over it, eager and rendezvous messages are dropped unread. */
	sdp_ucx_worker_set_max_recv(&srv.w, 4096);
	before = srv.received;
	cli_before = cli.received;
	T_OK(sdp_ucx_send(&cli.w, ep_sa, big, 8192));
	T_OK(sdp_ucx_send(&cli.w, ep_sa, big, big_len));
	T_OK(sdp_ucx_send(&cli.w, ep_sa, "after", 5));
	T_TRUE(got_more(&srv, &cli, &srv, before, 20000));
	T_EQ_INT(srv.received, before + 1);
	T_EQ_INT(srv.last_len, 5);
	T_TRUE(got_more(&srv, &cli, &cli, cli_before, 10000)); /* its echo */
	T_EQ_INT(cli.received, cli_before + 1);
	sdp_ucx_worker_set_max_recv(&srv.w, SDP_UCX_MAX_RECV_DEFAULT);
	free(big);

	/* More endpoints by worker address (the host -> worker path). */
	T_STATUS(sdp_ucx_worker_address(&srv.w, NULL, &addr_len), DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_ucx_worker_address(&srv.w, &addr, &addr_len));
	T_TRUE(addr_len > 0);
	T_STATUS(sdp_ucx_ep_connect_addr(&cli.w, NULL, addr_len, UCP_ERR_HANDLING_MODE_PEER, NULL,
					 NULL, &ep_addr),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ucx_ep_connect_addr(&cli.w, addr, 0, UCP_ERR_HANDLING_MODE_PEER, NULL, NULL,
					 &ep_addr),
		 DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ucx_ep_connect_addr(&cli.w, addr, addr_len, (ucp_err_handling_mode_t)7, NULL,
					 NULL, &ep_addr),
		 DOCA_ERROR_INVALID_VALUE);
	T_OK(sdp_ucx_ep_connect_addr(&cli.w, addr, addr_len, UCP_ERR_HANDLING_MODE_PEER,
				     on_ep_error, &cli, &ep_addr));
	T_OK(sdp_ucx_ep_connect_addr(&cli.w, addr, addr_len, UCP_ERR_HANDLING_MODE_NONE, NULL, NULL,
				     &ep_addr2));
	/* Without error handling (shared memory): never reports the peer's death. */
	T_OK(sdp_ucx_ep_connect_addr(&cli.w, addr, addr_len, UCP_ERR_HANDLING_MODE_NONE,
				     on_ep_error, &cli, &ep_none));
	free(addr);
	before = cli.received;
	T_OK(sdp_ucx_send(&cli.w, ep_addr, "by address", 10));
	T_TRUE(got_more(&srv, &cli, &cli, before, 10000));
	T_EQ_INT(cli.last_len, 10);
	T_TRUE(cli.last != NULL && memcmp(cli.last, "by address", 10) == 0);
	before = cli.received;
	T_OK(sdp_ucx_send(&cli.w, ep_none, "no errh", 7));
	T_TRUE(got_more(&srv, &cli, &cli, before, 10000));
	/*
	 * Close of a healthy endpoint, bounded: the server is not progressed meanwhile (one
	 * thread), so this also shows the bound holds when the peer does not answer.
	 */
	t0 = now_ms();
	sdp_ucx_ep_close(&cli.w, ep_addr2, 500);
	elapsed = now_ms() - t0;
	if (elapsed > 1500)
		t_fail("close bounded by 500 ms took %lld ms", (long long)elapsed);

	/* A wait with nothing coming honours its timeout and sleeps. */
	T_STATUS(sdp_ucx_worker_wait(&cli.w, NULL, 10), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_ucx_worker_wait(&cli.w, &never, -1), DOCA_ERROR_INVALID_VALUE);
	{
		clock_t cpu0 = clock();

		t0 = now_ms();
		T_STATUS(sdp_ucx_worker_wait(&cli.w, &never, 300), DOCA_ERROR_TIME_OUT);
		elapsed = now_ms() - t0;
		if (elapsed < 290 || elapsed > 2000)
			t_fail("wait of 300 ms took %lld ms", (long long)elapsed);
		/* Sleeping, not spinning: well under the wall time in CPU. */
		if ((double)(clock() - cpu0) / CLOCKS_PER_SEC > 0.2)
			t_fail("wait of 300 ms used %.3f s of CPU",
			       (double)(clock() - cpu0) / CLOCKS_PER_SEC);
	}
	{
		int ready = 1;

		T_OK(sdp_ucx_worker_wait(&cli.w, &ready, 0));
	}
	T_STATUS(sdp_ucx_worker_arm(NULL), DOCA_ERROR_INVALID_VALUE);

	/* The server's worker goes away: both client endpoints report an error, once each. */
	sdp_ucx_worker_fini(&srv.w);
	T_TRUE(srv.w.worker == NULL);
	sdp_ucx_worker_fini(&srv.w); /* twice is harmless */
	sdp_ucx_context_destroy(sctx);
	{
		int64_t deadline = now_ms() + 15000;

		int tick;

		while (cli.errors < 2 && now_ms() < deadline) {
			/* Sends push the failure to the surface sooner than keepalive. */
			if (cli.errors == 0 || cli.error_eps[0] != ep_sa)
				(void)sdp_ucx_send(&cli.w, ep_sa, "ping", 4);
			if (cli.errors == 0 || cli.error_eps[0] != ep_addr)
				(void)sdp_ucx_send(&cli.w, ep_addr, "ping", 4);
			/* To a dead peer without error handling: queued, no crash, no hang. */
			(void)sdp_ucx_send(&cli.w, ep_none, "ping", 4);
			tick = 0;
			(void)sdp_ucx_worker_wait(&cli.w, &tick, 100);
		}
		/* No second report for the same endpoint. */
		tick = 0;
		(void)sdp_ucx_worker_wait(&cli.w, &tick, 200);
	}
	T_EQ_INT(cli.errors, 2);
	T_TRUE((cli.error_eps[0] == ep_sa && cli.error_eps[1] == ep_addr) ||
	       (cli.error_eps[0] == ep_addr && cli.error_eps[1] == ep_sa));
	T_STATUS(sdp_ucx_send(&cli.w, ep_sa, "late", 4), DOCA_ERROR_NOT_CONNECTED);
	T_STATUS(sdp_ucx_send(&cli.w, ep_addr, "late", 4), DOCA_ERROR_NOT_CONNECTED);
	/* Each send still returns at once. */
	t0 = now_ms();
	for (i = 0; i < 16; i++)
		(void)sdp_ucx_send(&cli.w, ep_none, "late", 4);
	T_TRUE(now_ms() - t0 < 2000);
	t0 = now_ms();
	sdp_ucx_ep_close(&cli.w, ep_none, 300);
	elapsed = now_ms() - t0;
	if (elapsed > 1500)
		t_fail("close of an endpoint to a dead peer, bounded by 300 ms, took %lld ms",
		       (long long)elapsed);
	t0 = now_ms();
	sdp_ucx_ep_close(&cli.w, ep_sa, 1000);
	T_TRUE(now_ms() - t0 < 2000);
	/* ep_addr is left open: sdp_ucx_worker_fini() closes it (ASan sees no leak). */
	sdp_ucx_ep_close(&cli.w, dummy, 10); /* NULL: ignored */

	sdp_ucx_worker_fini(&cli.w);
	sdp_ucx_context_destroy(cctx);
	free(srv.last);
	free(cli.last);
	T_DONE();
}
