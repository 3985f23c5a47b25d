/*
 * Integration: host memory reached from another process. The parent plays the host: it
 * exports a 4 MiB buffer (with guard areas around it) through libdoca_urom's export engine
 * and hands the memh to a forked child over a pipe. The child plays a plugin's worker half:
 * its own UCP context and worker, plugins/common's sdp_plugin_mem. It puts and gets every size
 * around each power of two from 1 B to 4 MiB at varying offsets (blocking and non-blocking
 * calls in turn); after each put the parent compares its whole buffer, guards included, with
 * what it expects, and before each get it writes a fresh pattern that the child checks byte
 * for byte. Out-of-range and unknown-region transfers must be refused with nothing moved.
 *
 *   test_urom_mem [tcp]
 *
 * With "tcp" the run sets UCX_TLS=tcp before anything starts, so UCX emulates RMA through the
 * parent's UCP worker and the export engine's progress thread does the work. The child is
 * forked before the parent touches UCX; the pipes carry the memh and the lock-step requests.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "sdp_plugin_mem.h"
#include "softdpu/urom_mem.h"
#include "t_helpers.h"

#define REGION (4u << 20)
#define GUARD 8192u
#define PIPE_TIMEOUT_MS 30000
#define RMA_TIMEOUT_MS 20000

enum req_op {
	REQ_PUT_DONE = 1,
	REQ_SET,
	REQ_CHECK,
	REQ_END
};

/* One lock-step request of the child; the parent answers with one status byte (0 = ok). */
struct req {
	uint32_t op;
	uint32_t seed;
	uint64_t off; /* from the region's start */
	uint64_t len;
};

/* ---- pipes, bounded ---- */

static int io_full(int fd, void *buf, size_t len, int writing)
{
	struct pollfd pfd = {.fd = fd, .events = writing ? POLLOUT : POLLIN};
	uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		pfd.revents = 0;
		if (poll(&pfd, 1, PIPE_TIMEOUT_MS) <= 0) {
			fprintf(stderr, "test_urom_mem: pipe %s timed out\n",
				writing ? "write" : "read");
			return -1;
		}
		n = writing ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int rd(int fd, void *buf, size_t len)
{
	return io_full(fd, buf, len, 0);
}

static int wr(int fd, const void *buf, size_t len)
{
	return io_full(fd, (void *)buf, len, 1);
}

/* ---- patterns: no short period, so a shifted copy cannot pass ---- */

static uint8_t pat(uint32_t seed, uint64_t i)
{
	uint32_t x = seed * 0x9e3779b9u ^ (uint32_t)(i >> 2) * 0x85ebca6bu;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return (uint8_t)(x >> (8 * (i & 3)));
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pat(seed, i);
}

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (a[i] != b[i])
			return i;
	}
	return n;
}

/* ---- the child: a plugin's worker half ---- */

struct child {
	int in, out;
	ucp_context_h context;
	ucp_worker_h worker;
	int efd; /* the worker's event fd (UCP_FEATURE_WAKEUP) */
	struct sdp_plugin_mem *mem;
	uint64_t id;
	uint64_t va;
	uint8_t *local;
	int failures;
	unsigned puts, gets; /* transfers checked */
	uint64_t bytes;
};

#define C_FAIL(c, fmt, ...)                                                                        \
	do {                                                                                       \
		fprintf(stderr, "FAIL child %s:%d: " fmt "\n", __FILE__, __LINE__, ##__VA_ARGS__); \
		(c)->failures++;                                                                   \
	} while (0)

#define C_STATUS(c, call, want)                                                                    \
	do {                                                                                       \
		doca_error_t c_got_ = (call);                                                      \
		if (c_got_ != (want))                                                              \
			C_FAIL(c, "%s: expected %s, got %s", #call, doca_error_get_name(want),     \
			       doca_error_get_name(c_got_));                                       \
	} while (0)

/* Ask the parent; 0 when it answered ok. */
static int ask(struct child *c, uint32_t op, uint64_t off, uint64_t len, uint32_t seed)
{
	struct req r = {.op = op, .seed = seed, .off = off, .len = len};
	uint8_t answer = 1;

	if (wr(c->out, &r, sizeof(r)) != 0 || rd(c->in, &answer, 1) != 0) {
		C_FAIL(c, "the parent did not answer request %u", op);
		return -1;
	}
	if (answer != 0)
		C_FAIL(c, "the parent refused request %u (off %llu, len %llu)", op,
		       (unsigned long long)off, (unsigned long long)len);
	return answer;
}

struct nb_done {
	int calls;
	doca_error_t status;
};

static void nb_cb(void *arg, doca_error_t status)
{
	struct nb_done *d = arg;

	d->calls++;
	if (status != DOCA_SUCCESS)
		d->status = status;
}

/* Progress until want callbacks ran, sleeping on the worker's event fd (bounded). */
static void nb_wait(struct child *c, struct nb_done *d, int want)
{
	struct pollfd pfd = {.fd = c->efd, .events = POLLIN};
	struct timespec start, now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (d->calls < want) {
		if (sdp_plugin_mem_progress(c->mem))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (ms > RMA_TIMEOUT_MS) {
			C_FAIL(c, "%d of %d callbacks after %d ms", d->calls, want, RMA_TIMEOUT_MS);
			return;
		}
		/* As a plugin's loop would: arm, then sleep until UCX has something. */
		if (ucp_worker_arm(c->worker) == UCS_OK) {
			pfd.revents = 0;
			(void)poll(&pfd, 1, 100);
		}
	}
	if (d->status != DOCA_SUCCESS)
		C_FAIL(c, "a callback reported %s", doca_error_get_name(d->status));
}

static void child_put(struct child *c, uint64_t off, size_t sz, uint32_t seed, int nb)
{
	struct nb_done d = {0, DOCA_SUCCESS};

	fill(c->local, sz, seed);
	if (!nb) {
		C_STATUS(c,
			 sdp_plugin_mem_put(c->mem, c->id, c->va + off, c->local, sz,
					    RMA_TIMEOUT_MS),
			 DOCA_SUCCESS);
	} else {
		C_STATUS(c,
			 sdp_plugin_mem_put_nb(c->mem, c->id, c->va + off, c->local, sz, nb_cb, &d),
			 DOCA_SUCCESS);
		C_STATUS(c, sdp_plugin_mem_flush_nb(c->mem, c->id, nb_cb, &d), DOCA_SUCCESS);
		nb_wait(c, &d, 2);
	}
	if (ask(c, REQ_PUT_DONE, off, sz, seed) == 0) {
		c->puts++;
		c->bytes += sz;
	}
}

static void child_get(struct child *c, uint64_t off, size_t sz, uint32_t seed, int nb)
{
	struct nb_done d = {0, DOCA_SUCCESS};
	size_t i, bad = 0;

	if (ask(c, REQ_SET, off, sz, seed) != 0)
		return;
	memset(c->local, 0xee, sz);
	if (!nb) {
		C_STATUS(c,
			 sdp_plugin_mem_get(c->mem, c->id, c->va + off, c->local, sz,
					    RMA_TIMEOUT_MS),
			 DOCA_SUCCESS);
	} else {
		C_STATUS(c,
			 sdp_plugin_mem_get_nb(c->mem, c->id, c->va + off, c->local, sz, nb_cb, &d),
			 DOCA_SUCCESS);
		nb_wait(c, &d, 1);
	}
	for (i = 0; i < sz; i++)
		bad += c->local[i] != pat(seed, i);
	if (bad != 0) {
		C_FAIL(c, "get of %zu bytes at offset %llu: %zu bytes differ", sz,
		       (unsigned long long)off, bad);
		return;
	}
	c->gets++;
	c->bytes += sz;
}

/* Refusals: INVALID_VALUE outside the region, NOT_FOUND for unknown ids; nothing moves. */
static void child_refusals(struct child *c)
{
	struct nb_done d = {0, DOCA_SUCCESS};
	const uint64_t va = c->va;
	size_t i;

	fill(c->local, 4096, 4242);
	C_STATUS(c, sdp_plugin_mem_put(c->mem, c->id, va - 1, c->local, 2, RMA_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	C_STATUS(c, sdp_plugin_mem_put(c->mem, c->id, va - GUARD, c->local, 4096, RMA_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	C_STATUS(c, sdp_plugin_mem_put(c->mem, c->id, va + REGION - 1, c->local, 2, RMA_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	C_STATUS(c, sdp_plugin_mem_put(c->mem, c->id, va + REGION, c->local, 1, RMA_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	C_STATUS(c, sdp_plugin_mem_put(c->mem, c->id, va, c->local, REGION + 1, RMA_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	C_STATUS(c, sdp_plugin_mem_put(c->mem, c->id, UINT64_MAX - 1, c->local, 4, RMA_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	C_STATUS(c, sdp_plugin_mem_put(c->mem, c->id, va + 16, c->local, SIZE_MAX, RMA_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	C_STATUS(c, sdp_plugin_mem_put_nb(c->mem, c->id, va + REGION - 8, c->local, 9, nb_cb, &d),
		 DOCA_ERROR_INVALID_VALUE);
	C_STATUS(c, sdp_plugin_mem_put(c->mem, c->id + 1, va, c->local, 16, RMA_TIMEOUT_MS),
		 DOCA_ERROR_NOT_FOUND);
	C_STATUS(c, sdp_plugin_mem_put_nb(c->mem, 0, va, c->local, 16, nb_cb, &d),
		 DOCA_ERROR_NOT_FOUND);
	/* Gets refused leave the local buffer alone too. */
	memset(c->local, 0x3c, 4096);
	C_STATUS(c, sdp_plugin_mem_get(c->mem, c->id, va - 8, c->local, 4096, RMA_TIMEOUT_MS),
		 DOCA_ERROR_INVALID_VALUE);
	C_STATUS(c, sdp_plugin_mem_get_nb(c->mem, c->id, va + REGION - 1, c->local, 2, nb_cb, &d),
		 DOCA_ERROR_INVALID_VALUE);
	C_STATUS(c, sdp_plugin_mem_get(c->mem, 9999, va, c->local, 16, RMA_TIMEOUT_MS),
		 DOCA_ERROR_NOT_FOUND);
	for (i = 0; i < 4096; i++) {
		if (c->local[i] != 0x3c) {
			C_FAIL(c, "a refused get changed local byte %zu", i);
			break;
		}
	}
	sdp_plugin_mem_progress(c->mem);
	if (d.calls != 0)
		C_FAIL(c, "a refused operation called back %d times", d.calls);
	(void)ask(c, REQ_CHECK, 0, 0, 0);
}

static int child_main(int in, int out)
{
	struct child c = {.in = in, .out = out};
	ucp_worker_params_t wparams;
	ucp_params_t params;
	ucp_config_t *config;
	uint8_t memh[16384];
	uint32_t memh_len = 0;
	uint64_t len = 0;
	unsigned k, i = 0;
	int d;

	memset(&params, 0, sizeof(params));
	sdp_plugin_mem_ucp_params(&params);
	if (ucp_config_read(NULL, NULL, &config) != UCS_OK ||
	    ucp_init(&params, config, &c.context) != UCS_OK) {
		fprintf(stderr, "child: ucp_init failed\n");
		return 1;
	}
	ucp_config_release(config);
	memset(&wparams, 0, sizeof(wparams));
	if (ucp_worker_create(c.context, &wparams, &c.worker) != UCS_OK ||
	    ucp_worker_get_efd(c.worker, &c.efd) != UCS_OK ||
	    sdp_plugin_mem_create(c.worker, &c.mem) != DOCA_SUCCESS) {
		fprintf(stderr, "child: worker setup failed\n");
		return 1;
	}
	c.local = malloc(REGION);
	if (c.local == NULL || rd(in, &memh_len, sizeof(memh_len)) != 0 ||
	    memh_len > sizeof(memh) || rd(in, memh, memh_len) != 0) {
		fprintf(stderr, "child: no memh from the parent\n");
		return 1;
	}
	C_STATUS(&c, sdp_plugin_mem_import(c.mem, memh, memh_len, &c.id), DOCA_SUCCESS);
	C_STATUS(&c, sdp_plugin_mem_region_get(c.mem, c.id, &c.va, &len), DOCA_SUCCESS);
	if (len != REGION)
		C_FAIL(&c, "region of %llu bytes, expected %u", (unsigned long long)len, REGION);
	if (c.failures != 0)
		goto out;

	/* Every size around each power of two, 1 B .. 4 MiB, at offsets of every alignment. */
	for (k = 0; k <= 22 && c.failures == 0; k++) {
		for (d = -1; d <= 1; d++, i++) {
			size_t sz = ((size_t)1 << k) + (size_t)d;
			uint64_t off;

			if (sz == 0 || sz > REGION)
				continue;
			off = ((uint64_t)sz * 2654435761u + i * 977) % (REGION - sz + 1);
			child_put(&c, off, sz, 1000 + i, i & 1);
			child_get(&c, (off * 7 + 13) % (REGION - sz + 1), sz, 5000 + i, !(i & 1));
		}
	}
	/* The edges of the region, exactly. */
	child_put(&c, 0, 1, 77, 0);
	child_put(&c, REGION - 1, 1, 78, 1);
	child_get(&c, 0, REGION, 79, 0);
	child_refusals(&c);

out:
	printf("child: %u puts and %u gets checked, %llu bytes\n", c.puts, c.gets,
	       (unsigned long long)c.bytes);
	(void)ask(&c, REQ_END, 0, 0, 0);
	C_STATUS(&c, sdp_plugin_mem_release(c.mem, c.id), DOCA_SUCCESS);
	C_STATUS(&c, sdp_plugin_mem_put(c.mem, c.id, c.va, c.local, 1, RMA_TIMEOUT_MS),
		 DOCA_ERROR_NOT_FOUND);
	sdp_plugin_mem_destroy(c.mem);
	ucp_worker_destroy(c.worker);
	ucp_cleanup(c.context);
	free(c.local);
	return c.failures != 0;
}

/* ---- the parent: the host ---- */

static int parent_main(pid_t pid, int in, int out)
{
	uint8_t *buf, *shadow, *region;
	struct sdp_urom_mem *mem = NULL;
	const void *memh = NULL;
	size_t memh_len = 0, at;
	uint32_t len32;
	int status = 0, ended = 0, rc;
	struct req r;
	uint8_t answer;

	buf = aligned_alloc(4096, GUARD + REGION + GUARD);
	shadow = malloc(GUARD + REGION + GUARD);
	if (buf == NULL || shadow == NULL) {
		t_fail("out of memory");
		goto out_kill;
	}
	region = buf + GUARD;
	fill(buf, GUARD + REGION + GUARD, 1);
	memcpy(shadow, buf, GUARD + REGION + GUARD);

	T_OK(sdp_urom_mem_export(region, REGION, &mem));
	if (mem == NULL)
		goto out_kill;
	T_OK(sdp_urom_mem_get_memh(mem, &memh, &memh_len));
	len32 = (uint32_t)memh_len;
	if (wr(out, &len32, sizeof(len32)) != 0 || wr(out, memh, memh_len) != 0) {
		t_fail("cannot hand the memh to the child");
		goto out_unexport;
	}

	while (!ended) {
		if (rd(in, &r, sizeof(r)) != 0) {
			t_fail("the child stopped talking");
			break;
		}
		answer = 0;
		switch (r.op) {
		case REQ_SET: /* a fresh pattern for the child to get */
			if (r.len > REGION || r.off > REGION - r.len) {
				answer = 1;
				break;
			}
			fill(region + r.off, r.len, r.seed);
			memcpy(shadow + GUARD + r.off, region + r.off, r.len);
			break;
		case REQ_PUT_DONE: /* the child put pattern seed at off: all else unchanged */
			if (r.len > REGION || r.off > REGION - r.len) {
				answer = 1;
				break;
			}
			fill(shadow + GUARD + r.off, r.len, r.seed);
			/* fall through */
		case REQ_CHECK:
			if (memcmp(buf, shadow, GUARD + REGION + GUARD) == 0)
				break;
			at = first_diff(buf, shadow, GUARD + REGION + GUARD);
			{
				t_fail("after request %u (off %llu, len %llu): byte %lld from the "
				       "region's start is 0x%02x, expected 0x%02x",
				       r.op, (unsigned long long)r.off, (unsigned long long)r.len,
				       (long long)at - GUARD, buf[at], shadow[at]);
				answer = 1;
				memcpy(shadow, buf, GUARD + REGION + GUARD);
			}
			break;
		case REQ_END:
			ended = 1;
			break;
		default:
			t_fail("unknown request %u", r.op);
			answer = 1;
			ended = 1;
			break;
		}
		if (wr(out, &answer, 1) != 0) {
			t_fail("cannot answer the child");
			break;
		}
	}
	/* The child exits after END: its end of the pipe closes. */
	if (rd(in, &answer, 1) == 0)
		t_fail("the child sent more than expected");

out_unexport:
	T_OK(sdp_urom_mem_unexport(mem));
out_kill:
	close(out);
	close(in);
	if (!ended)
		kill(pid, SIGKILL);
	rc = waitpid(pid, &status, 0);
	if (rc != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		t_fail("the child (worker side) failed: wait status 0x%x", status);
	free(shadow);
	free(buf);
	T_DONE();
}

int main(int argc, char **argv)
{
	int to_child[2], to_parent[2], rc;
	pid_t pid;

	if (argc > 1 && strcmp(argv[1], "tcp") == 0)
		setenv("UCX_TLS", "tcp", 1);
	setenv("UCX_NET_DEVICES", "lo", 0);
	printf("test_urom_mem: UCX_TLS=%s\n", getenv("UCX_TLS") ? getenv("UCX_TLS") : "(default)");
	fflush(stdout);
	if (pipe(to_child) != 0 || pipe(to_parent) != 0) {
		perror("pipe");
		return T_EXIT_FAIL;
	}
	/* Before anything of UCX exists in this process. */
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return T_EXIT_FAIL;
	}
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		rc = child_main(to_child[0], to_parent[1]);
		fflush(stdout);
		_exit(rc);
	}
	close(to_child[0]);
	close(to_parent[1]);
	return parent_main(pid, to_parent[0], to_child[1]);
}
