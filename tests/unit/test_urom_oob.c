/*
 * Unit test: the TCP out-of-band allgather (include/softdpu/urom_oob.h) on loopback, with port 0
 * and sdp_urom_oob_port() (no fixed ports).
 *   - groups of 1, 2 and 4 ranks as threads and as forked processes: several sequential
 *     allgathers of 0 bytes to 1 MiB per rank, half blocking and half through the callbacks of
 *     sdp_urom_oob_coll(), every byte of every receive buffer checked;
 *   - a message length that differs on one rank (rank 0 or another): INVALID_VALUE everywhere,
 *     and every later allgather fails at once;
 *   - a rank that goes away (a process that exits, a thread that destroys its rank, one that
 *     frees its request in the middle): every other rank fails with CONNECTION_RESET well
 *     within the bound (measured), and later allgathers fail at once;
 *   - a rank that never joins (and a rank 0 that never comes): TIME_OUT on every rank after
 *     about the timeout;
 *   - a rank with the wrong secret fails with AUTHENTICATION, a duplicate rank and a rank of a
 *     group of another size are refused, and the correct ranks still succeed;
 *   - raw sockets sending garbage, an oversized header, another version, data before
 *     authentication, a wrong MAC, and more silent connections than rank 0 holds: each is
 *     closed, the refusals are logged at a limited rate, and the group still succeeds;
 *   - the callbacks: all six fields, req_test never blocks, one allgather at a time, destroy
 *     refused while a request lives, NULL arguments;
 *   - creation refusals and sdp_urom_oob_from_env()'s error paths, IPv6 loopback.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doca_log.h"
#include "doca_urom.h"
#include "sdp_urom_oob_wire.h"
#include "softdpu/urom_oob.h"
#include "t_helpers.h"
#include "t_log_capture.h"

#define MAX_RANKS 8
#define MAX_ITER 8
#define LONG_TIMEOUT_MS 20000
/* A rank that died must be noticed long before the timeout: this is the bound asserted. */
#define DEATH_BOUND_MS 5000
#define SHORT_TIMEOUT_MS 1500

static const char secret[] = "0123456789abcdef-test-secret";
static const char wrong_secret[] = "0123456789abcdef-not-the-secret";

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A bounded pause for the polling loops of the callbacks (not a synchronisation). */
static void pause_ms(int ms)
{
	(void)poll(NULL, 0, ms);
}

static uint8_t pattern(uint32_t rank, int iter, size_t i)
{
	return (uint8_t)(rank * 37u + (unsigned int)iter * 101u + i * 7u + (i >> 9));
}

/* ---- one rank's part of a scenario ----------------------------------------------------------- */

enum scenario {
	SC_DATA,     /* every allgather succeeds */
	SC_MISMATCH, /* allgather 1: victim's length differs */
	SC_DEATH,    /* allgather 1: victim is gone */
	SC_ABORT,    /* allgather 1: victim frees its request at once and leaves */
	SC_TIMEOUT,  /* rank `absent` never exists */
};

struct rank_result {
	int failures;
	int n_iter;
	doca_error_t status[MAX_ITER];
	long ms[MAX_ITER];
};

struct group {
	uint32_t size;
	int procs;
	int timeout_ms;
	enum scenario sc;
	uint32_t victim;
	uint32_t absent;
	uint16_t port;
	struct rank_result res[MAX_RANKS];
	/* SC_ABORT (threads): the others start allgather 1 once the victim has left. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int left;
};

struct rank_arg {
	struct group *g;
	uint32_t rank;
	struct sdp_urom_oob *oob; /* rank 0's, created before the others know the port */
};

static const size_t data_lens[] = {8, 24, 0, 1, 4099, 65543, 1u << 20};
#define DATA_ITERS ((int)(sizeof(data_lens) / sizeof(data_lens[0])))

#define RFAIL(res, fmt, ...)                                                                       \
	do {                                                                                       \
		fprintf(stderr, "FAIL %s:%d: " fmt "\n", __FILE__, __LINE__, ##__VA_ARGS__);       \
		(res)->failures++;                                                                 \
	} while (0)

static int scenario_iters(const struct group *g)
{
	return g->sc == SC_DATA ? DATA_ITERS : 3;
}

static size_t scenario_len(const struct group *g, uint32_t rank, int iter)
{
	if (g->sc == SC_DATA)
		return data_lens[iter];
	if (g->sc == SC_MISMATCH && iter == 1)
		return rank == g->victim ? 16 : 24;
	return 8;
}

static doca_error_t create_rank(const struct group *g, uint32_t rank, uint32_t size,
				const char *sec, uint16_t port, struct sdp_urom_oob **oob)
{
	struct sdp_urom_oob_params p;
	char root[32];

	snprintf(root, sizeof(root), "127.0.0.1:%u", port);
	memset(&p, 0, sizeof(p));
	p.root = root;
	p.rank = rank;
	p.size = size;
	p.secret = sec;
	p.secret_len = strlen(sec);
	p.timeout_ms = g != NULL ? g->timeout_ms : LONG_TIMEOUT_MS;
	/* Rank 0 times out first, so it is the one that names the missing rank. */
	if (g != NULL && g->sc == SC_TIMEOUT && rank != 0)
		p.timeout_ms += 300;
	return sdp_urom_oob_create(&p, oob);
}

/* One allgather through the callbacks, waited for by polling req_test. */
static doca_error_t coll_allgather(struct sdp_urom_oob *oob, void *sbuf, void *rbuf, size_t len,
				   long bound_ms)
{
	struct doca_urom_domain_oob_coll coll;
	long end = now_ms() + bound_ms;
	doca_error_t st;
	void *req = NULL;

	sdp_urom_oob_coll(oob, &coll);
	st = coll.allgather(sbuf, rbuf, len, coll.coll_info, &req);
	if (st != DOCA_SUCCESS)
		return st;
	while ((st = coll.req_test(req)) == DOCA_ERROR_IN_PROGRESS && now_ms() < end)
		pause_ms(1);
	(void)coll.req_free(req);
	return st;
}

static void rank_run(struct group *g, uint32_t rank, struct sdp_urom_oob *oob,
		     struct rank_result *res)
{
	int iters = scenario_iters(g);

	memset(res, 0, sizeof(*res));
	for (int it = 0; it < iters; it++) {
		size_t len = scenario_len(g, rank, it);
		uint8_t *sbuf = malloc(len ? len : 1), *rbuf = malloc(len * g->size + 1);
		doca_error_t st;
		long t0;

		if (sbuf == NULL || rbuf == NULL) {
			RFAIL(res, "out of memory");
			free(sbuf);
			free(rbuf);
			return;
		}
		for (size_t i = 0; i < len; i++)
			sbuf[i] = pattern(rank, it, i);
		memset(rbuf, 0xee, len * g->size + 1);
		if (it == 1 && rank == g->victim && g->sc == SC_DEATH) {
			free(sbuf);
			free(rbuf);
			res->n_iter = it;
			return; /* the caller makes it disappear */
		}
		if (it == 1 && rank == g->victim && g->sc == SC_ABORT) {
			struct doca_urom_domain_oob_coll coll;
			void *req = NULL;

			sdp_urom_oob_coll(oob, &coll);
			st = coll.allgather(sbuf, rbuf, len, coll.coll_info, &req);
			if (st != DOCA_SUCCESS)
				RFAIL(res, "rank %u: allgather: %s", rank, doca_error_get_name(st));
			else if (coll.req_test(req) != DOCA_ERROR_IN_PROGRESS)
				RFAIL(res, "rank %u: allgather 1 is not in progress", rank);
			else if (coll.req_free(req) != DOCA_SUCCESS)
				RFAIL(res, "rank %u: req_free of a live request refused", rank);
			pthread_mutex_lock(&g->lock);
			g->left = 1;
			pthread_cond_broadcast(&g->cond);
			pthread_mutex_unlock(&g->lock);
			st = sdp_urom_oob_allgather(oob, sbuf, rbuf, len);
			if (st != DOCA_ERROR_CONNECTION_ABORTED)
				RFAIL(res,
				      "rank %u: after leaving: %s, expected CONNECTION_ABORTED",
				      rank, doca_error_get_name(st));
			free(sbuf);
			free(rbuf);
			res->n_iter = it;
			return;
		}
		if (it == 1 && g->sc == SC_ABORT) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 30;
			pthread_mutex_lock(&g->lock);
			while (!g->left && pthread_cond_timedwait(&g->cond, &g->lock, &ts) == 0)
				;
			pthread_mutex_unlock(&g->lock);
		}
		t0 = now_ms();
		if (it % 2 == 1)
			st = coll_allgather(oob, sbuf, rbuf, len, 2L * g->timeout_ms + 5000);
		else
			st = sdp_urom_oob_allgather(oob, sbuf, rbuf, len);
		res->ms[it] = now_ms() - t0;
		res->status[it] = st;
		res->n_iter = it + 1;
		if (st == DOCA_SUCCESS) {
			for (uint32_t r = 0; r < g->size; r++)
				for (size_t i = 0; i < len; i++)
					if (rbuf[r * len + i] != pattern(r, it, i)) {
						RFAIL(res,
						      "rank %u, allgather %d: byte %zu of rank %u "
						      "is 0x%02x, expected 0x%02x",
						      rank, it, i, r, rbuf[r * len + i],
						      pattern(r, it, i));
						r = g->size;
						break;
					}
			if (rbuf[len * g->size] != 0xee)
				RFAIL(res, "rank %u, allgather %d: wrote past the end", rank, it);
		}
		free(sbuf);
		free(rbuf);
	}
}

/* What every surviving rank must have seen. */
static void check_group(const struct group *g)
{
	const char *mode = g->procs ? "processes" : "threads";
	long worst = 0;

	for (uint32_t r = 0; r < g->size; r++) {
		const struct rank_result *res = &g->res[r];

		if (res->failures)
			t_fail("%s, %u ranks, scenario %d: rank %u had %d failures", mode, g->size,
			       g->sc, r, res->failures);
		if ((g->sc == SC_DEATH || g->sc == SC_ABORT) && r == g->victim)
			continue;
		if (g->sc == SC_TIMEOUT && r == g->absent)
			continue;
		for (int it = 0; it < scenario_iters(g); it++) {
			doca_error_t st = res->status[it], want = DOCA_SUCCESS;

			if (it >= res->n_iter) {
				t_fail("%s, scenario %d: rank %u stopped after %d allgathers", mode,
				       g->sc, r, res->n_iter);
				break;
			}
			switch (g->sc) {
			case SC_DATA:
				break;
			case SC_MISMATCH:
				want = it == 0 ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
				break;
			case SC_DEATH:
				want = it == 0 ? DOCA_SUCCESS : DOCA_ERROR_CONNECTION_RESET;
				if (it == 1 && res->ms[it] > worst)
					worst = res->ms[it];
				if (it == 1 && res->ms[it] > DEATH_BOUND_MS)
					t_fail("%s: rank %u saw rank %u's death after %ld ms (bound "
					       "%d ms, timeout %d ms)",
					       mode, r, g->victim, res->ms[it], DEATH_BOUND_MS,
					       g->timeout_ms);
				break;
			case SC_ABORT:
				want = it == 0 ? DOCA_SUCCESS : DOCA_ERROR_CONNECTION_RESET;
				if (res->ms[it] > DEATH_BOUND_MS)
					t_fail("%s: rank %u saw rank %u leave after %ld ms", mode,
					       r, g->victim, res->ms[it]);
				break;
			case SC_TIMEOUT:
				want = DOCA_ERROR_TIME_OUT;
				if (it == 0 && (res->ms[it] < g->timeout_ms - 500 ||
						res->ms[it] > g->timeout_ms + 4000))
					t_fail("%s: rank %u timed out after %ld ms (timeout %d ms)",
					       mode, r, res->ms[it], g->timeout_ms);
				break;
			}
			if (st != want)
				t_fail("%s, %u ranks, scenario %d (victim %u): rank %u, allgather "
				       "%d: %s, expected %s",
				       mode, g->size, g->sc, g->victim, r, it,
				       doca_error_get_name(st), doca_error_get_name(want));
			/* Once failed, later allgathers fail at once. */
			if (it >= 2 && want != DOCA_SUCCESS && res->ms[it] > 200)
				t_fail("%s: rank %u: allgather %d after the failure took %ld ms",
				       mode, r, it, res->ms[it]);
		}
	}
	if (g->sc == SC_DEATH)
		printf("  %s: rank %u's death seen by all after at most %ld ms\n", mode, g->victim,
		       worst);
}

/* ---- threads -------------------------------------------------------------------------------- */

static void *rank_thread(void *arg_v)
{
	struct rank_arg *a = arg_v;
	struct group *g = a->g;
	struct sdp_urom_oob *oob = a->oob;
	doca_error_t st;

	if (oob == NULL) {
		st = create_rank(g, a->rank, g->size, secret, g->port, &oob);
		if (st != DOCA_SUCCESS) {
			RFAIL(&g->res[a->rank], "rank %u: create: %s", a->rank,
			      doca_error_get_name(st));
			return NULL;
		}
	}
	rank_run(g, a->rank, oob, &g->res[a->rank]);
	/* A dead or leaving rank closes its connections here. */
	st = sdp_urom_oob_destroy(oob);
	if (st != DOCA_SUCCESS)
		RFAIL(&g->res[a->rank], "rank %u: destroy: %s", a->rank, doca_error_get_name(st));
	return NULL;
}

static int join_bounded(pthread_t t, int seconds)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += seconds;
	if (pthread_timedjoin_np(t, NULL, &ts) != 0) {
		t_fail("a rank thread did not finish within %d s", seconds);
		return -1;
	}
	return 0;
}

/* A port nobody listens on (bound, then closed). */
static uint16_t dead_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint16_t port = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static void run_threads(struct group *g)
{
	struct rank_arg args[MAX_RANKS];
	pthread_t th[MAX_RANKS];
	int started[MAX_RANKS] = {0};
	struct sdp_urom_oob *root = NULL;

	memset(g->res, 0, sizeof(g->res));
	if (g->sc == SC_TIMEOUT && g->absent == 0) {
		g->port = dead_port();
	} else {
		T_OK(create_rank(g, 0, g->size, secret, 0, &root));
		if (root == NULL)
			return;
		g->port = sdp_urom_oob_port(root);
		if (g->size > 1 && g->port == 0)
			t_fail("rank 0 tells port 0");
	}
	for (uint32_t r = 0; r < g->size; r++) {
		if (g->sc == SC_TIMEOUT && r == g->absent)
			continue;
		args[r].g = g;
		args[r].rank = r;
		args[r].oob = r == 0 ? root : NULL;
		if (pthread_create(&th[r], NULL, rank_thread, &args[r]) != 0) {
			t_fail("pthread_create: %s", strerror(errno));
			continue;
		}
		started[r] = 1;
	}
	for (uint32_t r = 0; r < g->size; r++)
		if (started[r])
			(void)join_bounded(th[r], 90);
	check_group(g);
}

/* ---- processes ------------------------------------------------------------------------------ */

static void child_run(struct group *g, uint32_t rank, struct sdp_urom_oob *oob, int res_fd)
{
	struct rank_result res;
	doca_error_t st;

	rank_run(g, rank, oob, &res);
	if (g->sc == SC_DEATH && rank == g->victim) {
		/* Dies without a word: the kernel closes its sockets. */
		if (write(res_fd, &res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(2);
		_exit(0);
	}
	st = sdp_urom_oob_destroy(oob);
	if (st != DOCA_SUCCESS)
		RFAIL(&res, "rank %u: destroy: %s", rank, doca_error_get_name(st));
	if (write(res_fd, &res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(2);
	exit(res.failures ? 1 : 0);
}

/* Read exactly len bytes from fd before the deadline; 0 on success. */
static int read_bounded(int fd, void *buf, size_t len, long deadline)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		n = read(fd, (uint8_t *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static void run_procs(struct group *g)
{
	pid_t pids[MAX_RANKS];
	int res_fd[MAX_RANKS];
	int port_pipe[2];
	long deadline = now_ms() + 90000;

	memset(g->res, 0, sizeof(g->res));
	for (uint32_t r = 0; r < g->size; r++) {
		pids[r] = -1;
		res_fd[r] = -1;
	}
	if (pipe2(port_pipe, O_CLOEXEC) != 0) {
		t_fail("pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	fflush(stderr);
	for (uint32_t r = 0; r < g->size; r++) {
		int rp[2];

		if (g->sc == SC_TIMEOUT && r == g->absent)
			continue;
		if (pipe2(rp, O_CLOEXEC) != 0) {
			t_fail("pipe: %s", strerror(errno));
			break;
		}
		pids[r] = fork();
		if (pids[r] < 0) {
			t_fail("fork: %s", strerror(errno));
			close(rp[0]);
			close(rp[1]);
			break;
		}
		if (pids[r] == 0) {
			struct sdp_urom_oob *oob = NULL;
			doca_error_t st;

			close(rp[0]);
			close(port_pipe[0]);
			st = create_rank(g, r, g->size, secret, g->port, &oob);
			if (st != DOCA_SUCCESS) {
				fprintf(stderr, "FAIL: rank %u: create: %s\n", r,
					doca_error_get_name(st));
				_exit(1);
			}
			if (r == 0) {
				uint16_t port = sdp_urom_oob_port(oob);

				if (write(port_pipe[1], &port, sizeof(port)) != sizeof(port))
					_exit(1);
			}
			close(port_pipe[1]);
			child_run(g, r, oob, rp[1]);
		}
		close(rp[1]);
		res_fd[r] = rp[0];
		if (r == 0 &&
		    read_bounded(port_pipe[0], &g->port, sizeof(g->port), now_ms() + 10000) != 0) {
			t_fail("rank 0 did not tell its port");
			break;
		}
	}
	close(port_pipe[0]);
	close(port_pipe[1]);
	for (uint32_t r = 0; r < g->size; r++) {
		int wst;

		if (res_fd[r] >= 0) {
			if (read_bounded(res_fd[r], &g->res[r], sizeof(g->res[r]), deadline) != 0)
				t_fail("processes: no result from rank %u", r);
			close(res_fd[r]);
		}
		if (pids[r] <= 0)
			continue;
		if (now_ms() > deadline)
			kill(pids[r], SIGKILL);
		if (waitpid(pids[r], &wst, 0) == pids[r] && (!WIFEXITED(wst) || WEXITSTATUS(wst)))
			t_fail("processes: rank %u exited with status 0x%x", r, wst);
	}
	check_group(g);
}

static void run_group(uint32_t size, int procs, enum scenario sc, uint32_t victim, int timeout_ms)
{
	static struct group g;

	memset(&g, 0, sizeof(g));
	pthread_mutex_init(&g.lock, NULL);
	pthread_cond_init(&g.cond, NULL);
	g.size = size;
	g.procs = procs;
	g.sc = sc;
	g.victim = victim;
	g.absent = victim;
	g.timeout_ms = timeout_ms;
	if (procs)
		run_procs(&g);
	else
		run_threads(&g);
	pthread_cond_destroy(&g.cond);
	pthread_mutex_destroy(&g.lock);
}

static void test_groups(void)
{
	static const uint32_t sizes[] = {1, 2, 4};

	for (int procs = 0; procs < 2; procs++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			long t0 = now_ms();

			t_log_reset();
			run_group(sizes[i], procs, SC_DATA, UINT32_MAX, LONG_TIMEOUT_MS);
			printf("  %u ranks as %s: %ld ms\n", sizes[i],
			       procs ? "processes" : "threads", now_ms() - t0);
			if (!procs && t_log_nb != 0)
				t_fail("a good group of %u logged warnings:\n%s", sizes[i], t_log);
		}
	}
}

static void test_mismatch(void)
{
	t_log_reset();
	run_group(3, 0, SC_MISMATCH, 2, LONG_TIMEOUT_MS);
	run_group(3, 0, SC_MISMATCH, 0, LONG_TIMEOUT_MS);
	run_group(4, 1, SC_MISMATCH, 1, LONG_TIMEOUT_MS);
	if (strstr(t_log, "bytes, expected") == NULL)
		t_fail("the length mismatch was not logged:\n%s", t_log);
}

static void test_death(void)
{
	t_log_reset();
	run_group(4, 1, SC_DEATH, 2, LONG_TIMEOUT_MS); /* a process exits */
	run_group(4, 1, SC_DEATH, 0, LONG_TIMEOUT_MS); /* rank 0's process exits */
	run_group(3, 0, SC_DEATH, 1, LONG_TIMEOUT_MS); /* a thread destroys its rank */
	run_group(3, 0, SC_DEATH, 0, LONG_TIMEOUT_MS);
	run_group(3, 0, SC_ABORT, 2, LONG_TIMEOUT_MS); /* frees its request and leaves */
	run_group(3, 0, SC_ABORT, 0, LONG_TIMEOUT_MS);
}

static void test_timeout(void)
{
	t_log_reset();
	run_group(3, 0, SC_TIMEOUT, 2, SHORT_TIMEOUT_MS); /* a rank never joins */
	if (strstr(t_log, "2 (not joined)") == NULL)
		t_fail("rank 0 did not name the missing rank:\n%s", t_log);
	run_group(3, 0, SC_TIMEOUT, 0, SHORT_TIMEOUT_MS); /* rank 0 never comes */
	run_group(2, 1, SC_TIMEOUT, 1, SHORT_TIMEOUT_MS);
}

/* ---- refusals: secrets, duplicates, raw sockets ---------------------------------------------- */

/* Run rank `rank` of g in a thread (oob: made already, or NULL to create it there). */
static void bg_start(pthread_t *th, struct group *g, uint32_t rank, struct sdp_urom_oob *oob)
{
	static struct rank_arg args[MAX_RANKS];

	args[rank].g = g;
	args[rank].rank = rank;
	args[rank].oob = oob;
	if (pthread_create(th, NULL, rank_thread, &args[rank]) != 0)
		t_fail("pthread_create: %s", strerror(errno));
}

static int tcp_connect(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		t_fail("connect to 127.0.0.1:%u: %s", port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* True when the peer closes the connection within timeout_ms (what it sent is dropped). */
static int closed_by_peer(int fd, int timeout_ms)
{
	long deadline = now_ms() + timeout_ms;
	char buf[512];

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0)
			return 0;
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0 || (n < 0 && errno != EINTR))
			return 1;
	}
}

static void expect_closed(uint16_t port, const char *what, const void *bytes, size_t len)
{
	int fd = tcp_connect(port);

	if (fd < 0)
		return;
	if (len > 0 && send(fd, bytes, len, MSG_NOSIGNAL) != (ssize_t)len)
		t_fail("%s: send: %s", what, strerror(errno));
	if (!closed_by_peer(fd, 5000))
		t_fail("%s: rank 0 kept the connection", what);
	close(fd);
}

static size_t pack_hdr(uint8_t *buf, uint16_t version, uint16_t type, uint32_t seq, uint32_t len)
{
	uint32_t magic = SDP_UROM_OOB_MAGIC;

	for (int i = 0; i < 4; i++) {
		buf[i] = (uint8_t)(magic >> (8 * i));
		buf[8 + i] = (uint8_t)(seq >> (8 * i));
		buf[12 + i] = (uint8_t)(len >> (8 * i));
	}
	buf[4] = (uint8_t)version;
	buf[5] = (uint8_t)(version >> 8);
	buf[6] = (uint8_t)type;
	buf[7] = (uint8_t)(type >> 8);
	return SDP_UROM_OOB_HDR_LEN;
}

static void raw_attacks(uint16_t port, uint32_t size)
{
	struct sdp_urom_oob_msg m;
	uint8_t buf[256], reply[SDP_UROM_OOB_PREAUTH_MAX];
	size_t len;
	int fd;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 151u + 7u);
	expect_closed(port, "garbage", buf, 64);
	len = pack_hdr(buf, SDP_UROM_OOB_VERSION, SDP_UROM_OOB_HELLO, 0, 1u << 20);
	expect_closed(port, "oversized HELLO", buf, len + 40);
	len = pack_hdr(buf, 0xffff, SDP_UROM_OOB_HELLO, 0, 40);
	expect_closed(port, "another version", buf, len + 40);
	len = pack_hdr(buf, SDP_UROM_OOB_VERSION, SDP_UROM_OOB_DATA, 0, 8);
	expect_closed(port, "DATA before authentication", buf, len + 8);
	len = pack_hdr(buf, SDP_UROM_OOB_VERSION, SDP_UROM_OOB_FAIL, 0, 4);
	buf[len] = DOCA_ERROR_TIME_OUT;
	buf[len + 1] = buf[len + 2] = buf[len + 3] = 0;
	expect_closed(port, "FAIL before authentication", buf, len + 4);
	/* A HELLO claiming a rank the group does not have. */
	len = pack_hdr(buf, SDP_UROM_OOB_VERSION, SDP_UROM_OOB_HELLO, 0, 40);
	memset(buf + len, 0, 40);
	buf[len] = (uint8_t)(size + 3);
	buf[len + 4] = (uint8_t)size;
	expect_closed(port, "HELLO from rank >= size", buf, len + 40);

	/* A well-formed HELLO, then an AUTH with a MAC made without the secret. */
	memset(&m, 0, sizeof(m));
	m.hdr.type = SDP_UROM_OOB_HELLO;
	m.u.hello.rank = 1;
	m.u.hello.size = size;
	memset(m.u.hello.nonce, 0x5a, sizeof(m.u.hello.nonce));
	len = sdp_urom_oob_pack(&m, 0, buf, sizeof(buf));
	fd = tcp_connect(port);
	if (fd >= 0) {
		long deadline = now_ms() + 5000;

		if (send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len ||
		    read_bounded(fd, reply, SDP_UROM_OOB_HDR_LEN + SDP_UROM_OOB_CTRL_MAX,
				 deadline) != 0) {
			t_fail("no CHALLENGE for a well-formed HELLO");
		} else {
			if (reply[6] != SDP_UROM_OOB_CHALLENGE)
				t_fail("answer to HELLO is type %u", reply[6]);
			memset(&m, 0, sizeof(m));
			m.hdr.type = SDP_UROM_OOB_AUTH;
			len = sdp_urom_oob_pack(&m, 0, buf, sizeof(buf));
			if (send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
				t_fail("send AUTH: %s", strerror(errno));
			if (!closed_by_peer(fd, 5000))
				t_fail("a wrong MAC kept its connection");
		}
		close(fd);
	}
}

/* Garbage, bad frames and a flood of silent connections, then the real ranks still meet. */
static void test_raw(void)
{
	static struct group g;
	pthread_t b[3];
	struct sdp_urom_oob *root = NULL;
	int silent[40], n_silent = 0, evicted = 0, refusals = 0;
	const char *p;

	memset(&g, 0, sizeof(g));
	g.size = 3;
	g.sc = SC_DATA;
	g.victim = UINT32_MAX;
	g.timeout_ms = LONG_TIMEOUT_MS;
	T_OK(create_rank(&g, 0, g.size, secret, 0, &root));
	if (root == NULL)
		return;
	g.port = sdp_urom_oob_port(root);
	t_log_reset();
	bg_start(&b[0], &g, 0, root); /* rank 0 progresses its first allgather meanwhile */
	raw_attacks(g.port, g.size);
	if (strstr(t_log, "does not prove the shared secret") == NULL)
		t_fail("the wrong MAC was not logged:\n%s", t_log);
	/* Rank 0 holds 2 + 16 unauthenticated connections: the oldest of 40 silent ones go. */
	for (int i = 0; i < 40; i++) {
		silent[i] = tcp_connect(g.port);
		if (silent[i] >= 0)
			n_silent++;
	}
	for (int i = 0; i < 10; i++)
		if (silent[i] >= 0 && closed_by_peer(silent[i], 5000))
			evicted++;
	if (evicted != 10)
		t_fail("%d of the 10 oldest silent connections were dropped", evicted);
	for (p = t_log; (p = strstr(p, "refused connection")) != NULL; p++)
		refusals++;
	/* 6 + 1 + 22 refusals within a second or so: logged at 8 per second. */
	if (refusals < 8 || refusals > 8 * 4)
		t_fail("%d refusals logged (rate limit 8 per second)", refusals);
	/* The real ranks get in with silent connections still open. */
	bg_start(&b[1], &g, 1, NULL);
	bg_start(&b[2], &g, 2, NULL);
	for (int i = 0; i < 3; i++)
		(void)join_bounded(b[i], 90);
	for (int i = 0; i < 40; i++)
		if (silent[i] >= 0)
			close(silent[i]);
	if (n_silent != 40)
		t_fail("%d of 40 silent connections were made", n_silent);
	check_group(&g);
}

/* A wrong secret, a duplicate rank and a rank of another group size are refused. */
static void test_secrets(void)
{
	static struct group g;
	pthread_t b[3];
	struct sdp_urom_oob *root = NULL, *r1 = NULL, *bad = NULL;
	long t0;

	memset(&g, 0, sizeof(g));
	g.size = 3;
	g.sc = SC_DATA;
	g.victim = UINT32_MAX;
	g.timeout_ms = LONG_TIMEOUT_MS;
	T_OK(create_rank(&g, 0, g.size, secret, 0, &root));
	if (root == NULL)
		return;
	g.port = sdp_urom_oob_port(root);
	t_log_reset();
	bg_start(&b[0], &g, 0, root);

	/* The wrong secret: rank 0 does not prove it, so the rank stops at once. */
	T_OK(create_rank(&g, 1, 3, wrong_secret, g.port, &bad));
	if (bad != NULL) {
		uint8_t s[8] = {0}, r[24];

		t0 = now_ms();
		T_STATUS(sdp_urom_oob_allgather(bad, s, r, sizeof(s)), DOCA_ERROR_AUTHENTICATION);
		if (now_ms() - t0 > DEATH_BOUND_MS)
			t_fail("the wrong secret took %ld ms to be noticed", now_ms() - t0);
		T_STATUS(sdp_urom_oob_allgather(bad, s, r, sizeof(s)), DOCA_ERROR_AUTHENTICATION);
		T_OK(sdp_urom_oob_destroy(bad));
		bad = NULL;
	}
	if (strstr(t_log, "does not prove the shared secret") == NULL)
		t_fail("the wrong secret was not logged:\n%s", t_log);

	/* Rank 1 joins; a second rank 1 and a rank of a group of 4 are refused. */
	T_OK(create_rank(&g, 1, 3, secret, g.port, &r1));
	if (r1 != NULL)
		T_OK(sdp_urom_oob_wait_ready(r1, 10000));
	T_OK(create_rank(&g, 1, 3, secret, g.port, &bad));
	if (bad != NULL) {
		T_STATUS(sdp_urom_oob_wait_ready(bad, 10000), DOCA_ERROR_ALREADY_EXIST);
		T_OK(sdp_urom_oob_destroy(bad));
	}
	T_OK(create_rank(&g, 2, 4, secret, g.port, &bad));
	if (bad != NULL) {
		T_STATUS(sdp_urom_oob_wait_ready(bad, 10000), DOCA_ERROR_INVALID_VALUE);
		T_OK(sdp_urom_oob_destroy(bad));
	}
	if (strstr(t_log, "has joined already") == NULL ||
	    strstr(t_log, "group of 4 ranks, not 3") == NULL)
		t_fail("the duplicate and the wrong size were not logged:\n%s", t_log);

	/* The group still works. */
	if (r1 != NULL)
		bg_start(&b[1], &g, 1, r1);
	bg_start(&b[2], &g, 2, NULL);
	for (int i = 0; i < 3; i++)
		if (i != 1 || r1 != NULL)
			(void)join_bounded(b[i], 90);
	check_group(&g);
}

/* ---- the callbacks -------------------------------------------------------------------------- */

struct late_rank {
	uint16_t port;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int go;
	int failures;
};

static void *late_rank_thread(void *arg)
{
	struct late_rank *l = arg;
	struct sdp_urom_oob *oob = NULL;
	struct timespec ts;
	uint8_t s[8], r[16];
	int go;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 30;
	pthread_mutex_lock(&l->lock);
	while (!l->go && pthread_cond_timedwait(&l->cond, &l->lock, &ts) == 0)
		;
	go = l->go;
	pthread_mutex_unlock(&l->lock);
	if (!go || create_rank(NULL, 1, 2, secret, l->port, &oob) != DOCA_SUCCESS) {
		l->failures++;
		return NULL;
	}
	for (int it = 0; it < 2; it++) {
		for (size_t i = 0; i < sizeof(s); i++)
			s[i] = pattern(1, it, i);
		if (sdp_urom_oob_allgather(oob, s, r, sizeof(s)) != DOCA_SUCCESS)
			l->failures++;
		for (size_t i = 0; i < sizeof(r); i++)
			if (r[i] != pattern((uint32_t)(i / 8), it, i % 8))
				l->failures++;
	}
	if (sdp_urom_oob_destroy(oob) != DOCA_SUCCESS)
		l->failures++;
	return NULL;
}

static void test_coll(void)
{
	struct doca_urom_domain_oob_coll coll;
	struct sdp_urom_oob *root = NULL;
	struct late_rank l;
	uint8_t s[8], r[16];
	void *req = NULL, *req2 = NULL;
	long worst = 0, end;
	doca_error_t st;
	pthread_t th;

	memset(&l, 0, sizeof(l));
	pthread_mutex_init(&l.lock, NULL);
	pthread_cond_init(&l.cond, NULL);
	T_OK(create_rank(NULL, 0, 2, secret, 0, &root));
	if (root == NULL)
		return;
	l.port = sdp_urom_oob_port(root);
	memset(&coll, 0, sizeof(coll));
	sdp_urom_oob_coll(root, &coll);
	T_TRUE(coll.allgather != NULL && coll.req_test != NULL && coll.req_free != NULL);
	T_TRUE(coll.coll_info == root);
	T_EQ_INT(coll.n_oob_indexes, 2);
	T_EQ_INT(coll.oob_index, 0);
	if (pthread_create(&th, NULL, late_rank_thread, &l) != 0) {
		t_fail("pthread_create");
		return;
	}
	for (size_t i = 0; i < sizeof(s); i++)
		s[i] = pattern(0, 0, i);
	T_OK(coll.allgather(s, r, sizeof(s), coll.coll_info, &req));
	t_log_reset();
	T_STATUS(coll.allgather(s, r, sizeof(s), coll.coll_info, &req2), DOCA_ERROR_BAD_STATE);
	T_STATUS(sdp_urom_oob_destroy(root), DOCA_ERROR_IN_USE);
	T_EQ_INT(t_log_nb, 2);
	/* Nobody else is there yet: req_test must come back at once, again and again. */
	for (int i = 0; i < 20; i++) {
		long t0 = now_ms();

		T_STATUS(coll.req_test(req), DOCA_ERROR_IN_PROGRESS);
		if (now_ms() - t0 > worst)
			worst = now_ms() - t0;
	}
	if (worst > 50)
		t_fail("req_test blocked for %ld ms", worst);
	pthread_mutex_lock(&l.lock);
	l.go = 1;
	pthread_cond_signal(&l.cond);
	pthread_mutex_unlock(&l.lock);
	end = now_ms() + 20000;
	while ((st = coll.req_test(req)) == DOCA_ERROR_IN_PROGRESS && now_ms() < end)
		pause_ms(1);
	T_OK(st);
	T_OK(coll.req_test(req)); /* stays complete */
	for (size_t i = 0; i < sizeof(r); i++)
		if (r[i] != pattern((uint32_t)(i / 8), 0, i % 8)) {
			t_fail("byte %zu is 0x%02x", i, r[i]);
			break;
		}
	T_OK(coll.req_free(req));
	for (size_t i = 0; i < sizeof(s); i++)
		s[i] = pattern(0, 1, i);
	T_OK(sdp_urom_oob_allgather(root, s, r, sizeof(s)));
	for (size_t i = 0; i < sizeof(r); i++)
		if (r[i] != pattern((uint32_t)(i / 8), 1, i % 8)) {
			t_fail("second allgather: byte %zu is 0x%02x", i, r[i]);
			break;
		}
	(void)join_bounded(th, 60);
	T_EQ_INT(l.failures, 0);
	T_STATUS(coll.req_test(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(coll.req_free(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(coll.allgather(s, r, sizeof(s), NULL, &req), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(coll.allgather(s, r, sizeof(s), root, NULL), DOCA_ERROR_INVALID_VALUE);
	sdp_urom_oob_coll(NULL, &coll);
	sdp_urom_oob_coll(root, NULL);
	T_OK(sdp_urom_oob_destroy(root));
	T_STATUS(sdp_urom_oob_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_oob_wait_ready(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_oob_allgather(NULL, s, r, 1), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(sdp_urom_oob_port(NULL), 0);
	pthread_cond_destroy(&l.cond);
	pthread_mutex_destroy(&l.lock);
}

/* A group of one: no network, no secret needed. */
static void test_single(void)
{
	struct sdp_urom_oob_params p;
	struct sdp_urom_oob *oob = NULL;
	struct doca_urom_domain_oob_coll coll;
	uint8_t s[5] = {1, 2, 3, 4, 5}, r[5];
	void *req = NULL;

	memset(&p, 0, sizeof(p));
	p.size = 1;
	T_OK(sdp_urom_oob_create(&p, &oob));
	if (oob == NULL)
		return;
	T_EQ_INT(sdp_urom_oob_port(oob), 0);
	T_OK(sdp_urom_oob_wait_ready(oob, 1));
	T_OK(sdp_urom_oob_allgather(oob, s, r, sizeof(s)));
	T_TRUE(memcmp(s, r, sizeof(s)) == 0);
	T_OK(sdp_urom_oob_allgather(oob, NULL, NULL, 0));
	sdp_urom_oob_coll(oob, &coll);
	T_EQ_INT(coll.n_oob_indexes, 1);
	memset(r, 0, sizeof(r));
	T_OK(coll.allgather(s, r, sizeof(s), coll.coll_info, &req));
	T_OK(coll.req_test(req));
	T_OK(coll.req_free(req));
	T_TRUE(memcmp(s, r, sizeof(s)) == 0);
	T_OK(sdp_urom_oob_destroy(oob));
}

/* ---- creation ------------------------------------------------------------------------------- */

static void expect_create(const char *what, const struct sdp_urom_oob_params *p, doca_error_t want)
{
	struct sdp_urom_oob *oob = (struct sdp_urom_oob *)(uintptr_t)0x1234;
	doca_error_t st;

	t_log_reset();
	st = sdp_urom_oob_create(p, &oob);
	if (st != want)
		t_fail("%s: %s, expected %s", what, doca_error_get_name(st),
		       doca_error_get_name(want));
	if (st != DOCA_SUCCESS && oob != (struct sdp_urom_oob *)(uintptr_t)0x1234)
		t_fail("%s: output changed on failure", what);
	if (st != DOCA_SUCCESS && t_log_nb != 1)
		t_fail("%s: %d log records, expected 1:\n%s", what, t_log_nb, t_log);
	if (st == DOCA_SUCCESS)
		T_OK(sdp_urom_oob_destroy(oob));
}

static void test_create(void)
{
	struct sdp_urom_oob_params p;
	struct sdp_urom_oob *a = NULL;
	char root[64];

	memset(&p, 0, sizeof(p));
	p.root = "127.0.0.1:0";
	p.size = 2;
	p.secret = secret;
	p.secret_len = strlen(secret);
	T_STATUS(sdp_urom_oob_create(NULL, &a), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(sdp_urom_oob_create(&p, NULL), DOCA_ERROR_INVALID_VALUE);
	p.size = 0;
	expect_create("size 0", &p, DOCA_ERROR_INVALID_VALUE);
	p.size = SDP_UROM_OOB_MAX_RANKS + 1;
	expect_create("size too large", &p, DOCA_ERROR_INVALID_VALUE);
	p.size = 2;
	p.rank = 2;
	expect_create("rank == size", &p, DOCA_ERROR_INVALID_VALUE);
	p.rank = 0;
	p.secret_len = SDP_UROM_OOB_SECRET_MIN - 1;
	expect_create("short secret", &p, DOCA_ERROR_INVALID_VALUE);
	p.secret_len = strlen(secret);
	p.secret = NULL;
	expect_create("no secret", &p, DOCA_ERROR_INVALID_VALUE);
	p.secret = secret;
	p.root = NULL;
	expect_create("no root", &p, DOCA_ERROR_INVALID_VALUE);
	p.root = "[::1";
	expect_create("bad root", &p, DOCA_ERROR_INVALID_VALUE);
	p.root = "127.0.0.1:99999";
	expect_create("bad port", &p, DOCA_ERROR_INVALID_VALUE);
	p.rank = 1;
	p.root = "127.0.0.1";
	expect_create("no port for rank 1", &p, DOCA_ERROR_INVALID_VALUE);
	p.root = "127.0.0.1:0";
	expect_create("port 0 for rank 1", &p, DOCA_ERROR_INVALID_VALUE);
	p.rank = 0;
	p.root = "127.0.0.1";
	expect_create("rank 0 without a port", &p, DOCA_SUCCESS);
	/* Rank 0's address taken. */
	p.root = "127.0.0.1:0";
	T_OK(sdp_urom_oob_create(&p, &a));
	if (a != NULL) {
		snprintf(root, sizeof(root), "127.0.0.1:%u", sdp_urom_oob_port(a));
		p.root = root;
		expect_create("address in use", &p, DOCA_ERROR_IN_USE);
		T_OK(sdp_urom_oob_destroy(a));
	}
}

/* A group of two over IPv6 loopback (skipped without IPv6). */
static void *v6_rank1(void *arg)
{
	const char *root = arg;
	struct sdp_urom_oob_params p;
	struct sdp_urom_oob *oob = NULL;
	uint8_t s[3] = {7, 8, 9}, r[6];
	long ok = 0;

	memset(&p, 0, sizeof(p));
	p.root = root;
	p.rank = 1;
	p.size = 2;
	p.secret = secret;
	p.secret_len = strlen(secret);
	p.timeout_ms = 10000;
	if (sdp_urom_oob_create(&p, &oob) == DOCA_SUCCESS) {
		ok = sdp_urom_oob_allgather(oob, s, r, sizeof(s)) == DOCA_SUCCESS && r[0] == 1 &&
		     r[2] == 3 && r[3] == 7 && r[5] == 9;
		(void)sdp_urom_oob_destroy(oob);
	}
	return (void *)ok;
}

static void test_ipv6(void)
{
	struct sdp_urom_oob_params p;
	struct sdp_urom_oob *root = NULL;
	uint8_t s[3] = {1, 2, 3}, r[6];
	char addr[64];
	void *ok = NULL;
	pthread_t th;
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		printf("no IPv6 loopback: IPv6 part skipped\n");
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	memset(&p, 0, sizeof(p));
	p.root = "[::1]:0";
	p.size = 2;
	p.secret = secret;
	p.secret_len = strlen(secret);
	p.timeout_ms = 10000;
	T_OK(sdp_urom_oob_create(&p, &root));
	if (root == NULL)
		return;
	snprintf(addr, sizeof(addr), "[::1]:%u", sdp_urom_oob_port(root));
	if (pthread_create(&th, NULL, v6_rank1, addr) == 0) {
		T_OK(sdp_urom_oob_allgather(root, s, r, sizeof(s)));
		T_TRUE(r[0] == 1 && r[2] == 3 && r[3] == 7 && r[5] == 9);
		pthread_join(th, &ok);
		T_TRUE(ok != NULL);
	}
	T_OK(sdp_urom_oob_destroy(root));
}

/* ---- sdp_urom_oob_from_env ------------------------------------------------------------------ */

static char dir[PATH_MAX];

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		t_fail("cannot write %s", path);
	if (fd >= 0) {
		fchmod(fd, mode);
		close(fd);
	}
}

static void clear_env(void)
{
	unsetenv("SOFTDPU_OOB_ROOT");
	unsetenv("SOFTDPU_OOB_RANK");
	unsetenv("SOFTDPU_OOB_SIZE");
	unsetenv("SOFTDPU_OOB_SECRET_FILE");
	unsetenv("SOFTDPU_OOB_TIMEOUT_MS");
}

/* from_env must fail with want, logging one record that names `name`. */
static void expect_env(const char *what, doca_error_t want, const char *name)
{
	struct sdp_urom_oob *oob = NULL;
	doca_error_t st;
	long t0 = now_ms();

	t_log_reset();
	st = sdp_urom_oob_from_env(&oob);
	if (st != want)
		t_fail("%s: %s, expected %s", what, doca_error_get_name(st),
		       doca_error_get_name(want));
	if (now_ms() - t0 > 1000)
		t_fail("%s: took %ld ms", what, now_ms() - t0);
	if (t_log_nb != 1 || strstr(t_log, name) == NULL)
		t_fail("%s: expected one record naming %s, got %d:\n%s", what, name, t_log_nb,
		       t_log);
	if (oob != NULL) {
		t_fail("%s: output set on failure", what);
		(void)sdp_urom_oob_destroy(oob);
	}
}

static void *env_rank1(void *arg)
{
	struct sdp_urom_oob *oob = arg;
	uint8_t s[4] = {5, 6, 7, 8}, r[8];

	if (sdp_urom_oob_allgather(oob, s, r, sizeof(s)) != DOCA_SUCCESS || r[0] != 1 || r[4] != 5)
		return NULL;
	return oob;
}

static void test_env(void)
{
	char good[PATH_MAX + 32], path[PATH_MAX + 32], root[64];
	struct sdp_urom_oob *a = NULL, *b = NULL;
	uint8_t big[SDP_UROM_OOB_SECRET_FILE_MAX + 10];
	uint8_t s[4] = {1, 2, 3, 4}, r[8];
	void *ok = NULL;
	pthread_t th;

	memset(big, 'x', sizeof(big));
	snprintf(good, sizeof(good), "%s/good.secret", dir);
	write_file(good, secret, strlen(secret), 0600);
	clear_env();
	expect_env("nothing set", DOCA_ERROR_NOT_FOUND, "SOFTDPU_OOB_SIZE");
	setenv("SOFTDPU_OOB_SIZE", "two", 1);
	expect_env("bad size", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_SIZE");
	setenv("SOFTDPU_OOB_SIZE", "0", 1);
	expect_env("size 0", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_SIZE");
	setenv("SOFTDPU_OOB_SIZE", "99999", 1);
	expect_env("size too large", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_SIZE");
	setenv("SOFTDPU_OOB_SIZE", "2", 1);
	expect_env("no rank", DOCA_ERROR_NOT_FOUND, "SOFTDPU_OOB_RANK");
	setenv("SOFTDPU_OOB_RANK", "-1", 1);
	expect_env("bad rank", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_RANK");
	setenv("SOFTDPU_OOB_RANK", "2", 1);
	expect_env("rank == size", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_RANK");
	setenv("SOFTDPU_OOB_RANK", "0", 1);
	setenv("SOFTDPU_OOB_TIMEOUT_MS", "soon", 1);
	expect_env("bad timeout", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_TIMEOUT_MS");
	setenv("SOFTDPU_OOB_TIMEOUT_MS", "99999999999", 1);
	expect_env("timeout too large", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_TIMEOUT_MS");
	setenv("SOFTDPU_OOB_TIMEOUT_MS", "10000", 1);
	expect_env("no root", DOCA_ERROR_NOT_FOUND, "SOFTDPU_OOB_ROOT");
	setenv("SOFTDPU_OOB_ROOT", "127.0.0.1:0", 1);
	expect_env("no secret file", DOCA_ERROR_NOT_FOUND, "SOFTDPU_OOB_SECRET_FILE");
	snprintf(path, sizeof(path), "%s/missing.secret", dir);
	setenv("SOFTDPU_OOB_SECRET_FILE", path, 1);
	expect_env("missing secret file", DOCA_ERROR_NOT_FOUND, "SOFTDPU_OOB_SECRET_FILE");
	snprintf(path, sizeof(path), "%s/open.secret", dir);
	write_file(path, secret, strlen(secret), 0640);
	setenv("SOFTDPU_OOB_SECRET_FILE", path, 1);
	expect_env("group-readable secret", DOCA_ERROR_NOT_PERMITTED, "SOFTDPU_OOB_SECRET_FILE");
	snprintf(path, sizeof(path), "%s/short.secret", dir);
	write_file(path, secret, SDP_UROM_OOB_SECRET_MIN - 1, 0600);
	setenv("SOFTDPU_OOB_SECRET_FILE", path, 1);
	expect_env("short secret", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_SECRET_FILE");
	snprintf(path, sizeof(path), "%s/big.secret", dir);
	write_file(path, big, sizeof(big), 0600);
	setenv("SOFTDPU_OOB_SECRET_FILE", path, 1);
	expect_env("secret over 4 KiB", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_SECRET_FILE");
	snprintf(path, sizeof(path), "%s/fifo.secret", dir);
	if (mkfifo(path, 0600) == 0) {
		setenv("SOFTDPU_OOB_SECRET_FILE", path, 1);
		expect_env("FIFO", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_SECRET_FILE");
	}
	setenv("SOFTDPU_OOB_SECRET_FILE", dir, 1);
	expect_env("directory", DOCA_ERROR_INVALID_VALUE, "SOFTDPU_OOB_SECRET_FILE");
	snprintf(path, sizeof(path), "%s/link.secret", dir);
	if (symlink(good, path) == 0) {
		setenv("SOFTDPU_OOB_SECRET_FILE", path, 1);
		expect_env("symlink", DOCA_ERROR_NOT_PERMITTED, "SOFTDPU_OOB_SECRET_FILE");
	}
	setenv("SOFTDPU_OOB_SECRET_FILE", good, 1);
	setenv("SOFTDPU_OOB_ROOT", "127.0.0.1", 1);
	setenv("SOFTDPU_OOB_RANK", "1", 1);
	expect_env("rank 1 without a port", DOCA_ERROR_INVALID_VALUE, "127.0.0.1");

	/* A group of two from the environment. */
	setenv("SOFTDPU_OOB_RANK", "0", 1);
	setenv("SOFTDPU_OOB_ROOT", "127.0.0.1:0", 1);
	T_OK(sdp_urom_oob_from_env(&a));
	if (a == NULL)
		return;
	snprintf(root, sizeof(root), "127.0.0.1:%u", sdp_urom_oob_port(a));
	setenv("SOFTDPU_OOB_ROOT", root, 1);
	setenv("SOFTDPU_OOB_RANK", "1", 1);
	T_OK(sdp_urom_oob_from_env(&b));
	if (b != NULL && pthread_create(&th, NULL, env_rank1, b) == 0) {
		T_OK(sdp_urom_oob_allgather(a, s, r, sizeof(s)));
		T_TRUE(r[0] == 1 && r[3] == 4 && r[4] == 5 && r[7] == 8);
		pthread_join(th, &ok);
		T_TRUE(ok == b);
	}
	if (b != NULL)
		T_OK(sdp_urom_oob_destroy(b));
	T_OK(sdp_urom_oob_destroy(a));
	/* A group of one needs neither a root nor a secret. */
	clear_env();
	setenv("SOFTDPU_OOB_SIZE", "1", 1);
	setenv("SOFTDPU_OOB_RANK", "0", 1);
	a = NULL;
	T_OK(sdp_urom_oob_from_env(&a));
	if (a != NULL) {
		T_OK(sdp_urom_oob_allgather(a, s, r, sizeof(s)));
		T_TRUE(memcmp(r, s, sizeof(s)) == 0);
		T_OK(sdp_urom_oob_destroy(a));
	}
	clear_env();
}

static void rm_dir(void)
{
	static const char *const names[] = {"good.secret", "open.secret", "short.secret",
					    "big.secret",  "fifo.secret", "link.secret"};
	char path[PATH_MAX + 32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void run(const char *name, void (*fn)(void))
{
	long t0 = now_ms();
	int before = t_failures;

	fn();
	printf("%-9s %s in %ld ms\n", name, t_failures == before ? "ok" : "FAILED", now_ms() - t0);
	fflush(stdout);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_urom_oob.XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return T_EXIT_FAIL;
	}
	t_log_capture();
	run("create", test_create);
	run("single", test_single);
	run("coll", test_coll);
	run("groups", test_groups);
	run("mismatch", test_mismatch);
	run("death", test_death);
	run("timeout", test_timeout);
	run("secrets", test_secrets);
	run("raw", test_raw);
	run("ipv6", test_ipv6);
	run("env", test_env);
	rm_dir();
	T_DONE();
}
