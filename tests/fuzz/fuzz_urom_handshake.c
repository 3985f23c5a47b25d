/*
 * libFuzzer target for the host side of the UROM handshake (issue 15): doca_ctx_start of a real
 * service context (libdoca_urom) against a fake service in a thread of this process, on a
 * loopback listener of its own, that answers with the fuzzed bytes at a point the input picks:
 *   mode 0  right after accepting (before the host's HELLO is read);
 *   mode 1  after reading the HELLO, instead of the CHALLENGE;
 *   mode 2  after a valid CHALLENGE (its MAC made with the secret the host reads) and the
 *           host's AUTH, instead of the WELCOME;
 *   mode 3  after a CHALLENGE whose MAC was made with another secret.
 * The fake service then closes its side, so every start ends without waiting for a timeout.
 * Input: byte 0 the mode, the rest the bytes sent. Checked beyond "no crash" (ASan + UBSan):
 * modes 0, 1 and 3 never start (no service proved it knows the secret), mode 3 fails with
 * DOCA_ERROR_AUTHENTICATION; every failure is a doca_error_t other than IN_PROGRESS (the
 * context would wait in STARTING for ever); a start that succeeds (mode 2, a well-formed WELCOME) reports at
 * most SDP_UROM_MAX_PLUGINS plugins with terminated names and stops; the context always ends
 * IDLE and destroyable, and no file descriptor is left open.
 *
 * With -DSDP_FUZZ_MAIN this file has its own main() (tests/fuzz/fuzz_main.h): the replay test,
 * whose generator makes well-formed WELCOMEs too.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_pe.h"
#include "doca_urom.h"
#include "sdp_urom_auth.h"
#include "sdp_urom_chan.h"
#include "sdp_urom_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FZ_STEP_MS 2000 /* the fake service's bound on each of its waits */

static int fz_lfd = -1;
static uint8_t fz_secret[SDP_UROM_SECRET_LEN];
static char fz_dir[256];

struct fz_job {
	int mode;
	const uint8_t *bytes;
	size_t len;
};

static void fz_die(const char *what)
{
	fprintf(stderr, "fuzz_urom_handshake: %s\n", what);
	abort();
}

static void fz_cleanup(void)
{
	char path[300];

	if (fz_lfd >= 0)
		close(fz_lfd);
	snprintf(path, sizeof(path), "%s/secret", fz_dir);
	unlink(path);
	rmdir(fz_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	const char *tmp = getenv("TMPDIR");
	char path[300], addr[64];
	uint16_t port = 0;
	FILE *f;

	(void)argc;
	(void)argv;
	if (fz_lfd >= 0)
		return 0;
	snprintf(fz_dir, sizeof(fz_dir), "%s/softdpu-fuzz-hs.XXXXXX", tmp ? tmp : "/tmp");
	if (mkdtemp(fz_dir) == NULL)
		fz_die("mkdtemp");
	snprintf(path, sizeof(path), "%s/secret", fz_dir);
	sdp_urom_random(fz_secret, sizeof(fz_secret));
	f = fopen(path, "wx");
	if (f == NULL || chmod(path, 0600) != 0 ||
	    fwrite(fz_secret, 1, sizeof(fz_secret), f) != sizeof(fz_secret) || fclose(f) != 0)
		fz_die("cannot write the secret file");
	if (sdp_urom_chan_listen((struct sockaddr *)&sa, sizeof(sa), &fz_lfd, &port) !=
	    DOCA_SUCCESS)
		fz_die("cannot listen on loopback");
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	setenv("SOFTDPU_UROM_SERVICE_ADDR", addr, 1);
	setenv("SOFTDPU_UROM_SECRET_FILE", path, 1);
	setenv("SOFTDPU_UROM_CONNECT_TIMEOUT_MS", "5000", 1);
	atexit(fz_cleanup);
	return 0;
}

/* ---- the fake service ------------------------------------------------------------------------ */

struct fz_rx {
	uint16_t want;
	int got;
	struct sdp_urom_msg msg;
	uint8_t copy[4096];
};

static int fz_frame(void *arg, const uint8_t *frame, size_t len)
{
	struct fz_rx *rx = arg;

	if (len > sizeof(rx->copy))
		return 1;
	memcpy(rx->copy, frame, len);
	if (sdp_urom_msg_unpack(rx->copy, len, &rx->msg) == DOCA_SUCCESS &&
	    rx->msg.hdr.type == rx->want)
		rx->got = 1;
	return 1;
}

/* Read until a message of type want arrives (bounded); 0 when it did. */
static int fz_expect(struct sdp_urom_chan *chan, uint16_t want, struct fz_rx *rx)
{
	struct pollfd p = {.fd = chan->fd, .events = POLLIN};
	int made;

	rx->want = want;
	rx->got = 0;
	while (!rx->got) {
		if (poll(&p, 1, FZ_STEP_MS) != 1)
			return -1;
		if (sdp_urom_chan_read(chan, fz_frame, rx, &made) != DOCA_SUCCESS && !rx->got)
			return -1;
	}
	return 0;
}

/* Write all of buf (bounded), then close our side and read until the host closes (bounded). */
static void fz_send_and_close(int fd, const uint8_t *buf, size_t len)
{
	struct pollfd p = {.fd = fd};
	uint8_t sink[4096];

	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		p.events = POLLOUT;
		if (n < 0 && poll(&p, 1, FZ_STEP_MS) == 1)
			continue;
		break;
	}
	(void)shutdown(fd, SHUT_WR);
	p.events = POLLIN;
	while (poll(&p, 1, FZ_STEP_MS) == 1 && recv(fd, sink, sizeof(sink), 0) > 0)
		;
}

static void *fz_service(void *arg)
{
	const struct fz_job *job = arg;
	struct pollfd p = {.fd = fz_lfd, .events = POLLIN};
	struct sdp_urom_chan chan;
	struct sdp_urom_msg reply;
	struct fz_rx *rx;
	uint8_t key[SDP_UROM_SECRET_LEN];
	uint8_t client_nonce[SDP_UROM_NONCE_LEN];
	int fd;

	if (poll(&p, 1, FZ_STEP_MS) != 1 || (fd = accept(fz_lfd, NULL, NULL)) < 0)
		return NULL;
	if (job->mode == 0) {
		fz_send_and_close(fd, job->bytes, job->len);
		close(fd);
		return NULL;
	}
	rx = calloc(1, sizeof(*rx));
	if (rx == NULL || sdp_urom_chan_init(&chan, fd, 65536) != DOCA_SUCCESS) {
		free(rx);
		close(fd);
		return NULL;
	}
	if (fz_expect(&chan, SDP_UROM_MSG_HELLO, rx) != 0)
		goto out;
	memcpy(client_nonce, rx->msg.u.hello.nonce, sizeof(client_nonce));
	if (job->mode >= 2) {
		memcpy(key, fz_secret, sizeof(key));
		if (job->mode == 3)
			key[0] ^= 0x5a; /* another secret */
		memset(&reply, 0, sizeof(reply));
		reply.hdr.type = SDP_UROM_MSG_CHALLENGE;
		reply.hdr.req_id = rx->msg.hdr.req_id;
		sdp_urom_random(reply.u.challenge.nonce, sizeof(reply.u.challenge.nonce));
		sdp_urom_auth_mac(key, "svc", client_nonce, reply.u.challenge.nonce,
				  reply.u.challenge.mac);
		if (sdp_urom_chan_send(&chan, &reply) != DOCA_SUCCESS)
			goto out;
		while (sdp_urom_chan_out_pending(&chan))
			if (sdp_urom_chan_wait(&chan, FZ_STEP_MS) != DOCA_SUCCESS &&
			    sdp_urom_chan_out_pending(&chan))
				goto out;
		if (job->mode == 2 && fz_expect(&chan, SDP_UROM_MSG_AUTH, rx) != 0)
			goto out;
	}
	fz_send_and_close(chan.fd, job->bytes, job->len);
out:
	sdp_urom_chan_fini(&chan);
	free(rx);
	return NULL;
}

/* ---- the host ------------------------------------------------------------------------------- */

static int fz_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_job job;
	struct doca_pe *pe = NULL;
	struct doca_urom_service *svc = NULL;
	enum doca_ctx_states state;
	pthread_t th;
	doca_error_t st;
	int fds;

	if (size < 1)
		return 0;
	if (fz_lfd < 0)
		LLVMFuzzerInitialize(NULL, NULL);
	job.mode = data[0] % 4;
	job.bytes = data + 1;
	job.len = size - 1;
	fds = fz_count_fds();
	if (doca_pe_create(&pe) != DOCA_SUCCESS || doca_urom_service_create(&svc) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(svc)) != DOCA_SUCCESS)
		fz_die("cannot make a service context");
	if (pthread_create(&th, NULL, fz_service, &job) != 0)
		fz_die("pthread_create");
	st = doca_ctx_start(doca_urom_service_as_ctx(svc));
	/* the service context starts synchronously: a refusal must never leave it STARTING */
	if (st == DOCA_ERROR_IN_PROGRESS)
		fz_die("the start returned IN_PROGRESS (a refusal taken for a background start)");
	if (st == DOCA_SUCCESS) {
		const struct doca_urom_service_plugin_info *plugins = NULL;
		size_t n = 0;

		if (job.mode != 2)
			fz_die("a service that does not know the secret was accepted");
		/* the list may be refused once the service has gone, never be malformed */
		if (doca_urom_service_get_plugins_list(svc, &plugins, &n) != DOCA_SUCCESS)
			n = 0;
		if (n > SDP_UROM_MAX_PLUGINS)
			fz_die("the plugin list is too long");
		for (size_t i = 0; i < n; i++)
			if (memchr(plugins[i].plugin_name, '\0', sizeof(plugins[i].plugin_name)) ==
			    NULL)
				fz_die("a plugin name without its terminating NUL");
		(void)doca_ctx_stop(doca_urom_service_as_ctx(svc));
		for (int k = 0; k < 1000; k++) {
			if (doca_ctx_get_state(doca_urom_service_as_ctx(svc), &state) ==
				    DOCA_SUCCESS &&
			    state == DOCA_CTX_STATE_IDLE)
				break;
			(void)doca_pe_progress(pe);
			usleep(1000);
		}
	} else if (job.mode == 3 && st != DOCA_ERROR_AUTHENTICATION) {
		fz_die("a wrong CHALLENGE MAC did not fail with DOCA_ERROR_AUTHENTICATION");
	} else if ((unsigned)st > 31u) {
		fz_die("the start failed with a value outside doca_error_t");
	}
	pthread_join(th, NULL);
	if (doca_ctx_get_state(doca_urom_service_as_ctx(svc), &state) != DOCA_SUCCESS ||
	    state != DOCA_CTX_STATE_IDLE) {
		fprintf(stderr, "mode %d, start %s, state %d\n", job.mode, doca_error_get_name(st),
			(int)state);
		fz_die("the service context did not end IDLE");
	}
	if (doca_urom_service_destroy(svc) != DOCA_SUCCESS || doca_pe_destroy(pe) != DOCA_SUCCESS)
		fz_die("the service context or its PE could not be destroyed");
	if (fds >= 0 && fz_count_fds() != fds)
		fz_die("a file descriptor was left open");
	return 0;
}

#ifdef SDP_FUZZ_MAIN
#include "fuzz_main.h"

/* A mode, then either noise, a packed message (often a WELCOME) or a packed one mutated. */
static size_t fuzz_generate(uint8_t *buf, size_t cap)
{
	static const char name[] = "worker_graph";
	struct sdp_urom_msg m;
	size_t len = 0;

	if (cap < 2)
		return 0;
	buf[0] = (uint8_t)(fuzz_rnd() % 4);
	memset(&m, 0, sizeof(m));
	switch (fuzz_rnd() % 4) {
	case 0: /* noise */
		len = fuzz_rnd() % 64;
		if (len > cap - 1)
			len = cap - 1;
		for (size_t i = 0; i < len; i++)
			buf[1 + i] = (uint8_t)fuzz_rnd();
		return 1 + len;
	case 1:
		m.hdr.type = SDP_UROM_MSG_REJECT;
		m.u.reject.status = (uint32_t)(fuzz_rnd() % 40);
		m.u.reject.reason.data = (const uint8_t *)"no";
		m.u.reject.reason.len = 2;
		break;
	default:
		m.hdr.type = SDP_UROM_MSG_WELCOME;
		m.u.welcome.max_msg_size = fuzz_rnd() % 2 ? 65536 : fuzz_rnd() % 100000;
		m.u.welcome.num_plugins = (uint32_t)(fuzz_rnd() % 3);
		for (uint32_t i = 0; i < m.u.welcome.num_plugins; i++) {
			m.u.welcome.plugins[i].id = 1ull << i;
			m.u.welcome.plugins[i].version = fuzz_rnd() % 4;
			memcpy(m.u.welcome.plugins[i].name, name, sizeof(name));
		}
		m.u.welcome.service_version.data = (const uint8_t *)"fuzz";
		m.u.welcome.service_version.len = 4;
		break;
	}
	m.hdr.req_id = fuzz_rnd() % 4;
	if (sdp_urom_msg_pack(&m, buf + 1, cap - 1, &len) != DOCA_SUCCESS)
		return 1;
	if (fuzz_rnd() % 3 == 0 && len > 0)
		buf[1 + fuzz_rnd() % len] ^= (uint8_t)(1u << (fuzz_rnd() % 8));
	return 1 + len;
}
#endif /* SDP_FUZZ_MAIN */
