/*
 * Integration: connecting a service context. Service not running (NOT_CONNECTED, bounded),
 * wrong secret (AUTHENTICATION, nothing spawned), protocol mismatch both ways (a raw client of
 * another version gets VERSION_REJECT from the real daemon; the host library against a fake
 * service that answers VERSION_REJECT returns NOT_SUPPORTED), and the service context's
 * argument and state checks around a real connection.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include "t_urom.h"
#include "t_urom_raw.h"
#include "t_uromd.h"

/* A port nothing listens on: bind to port 0, read the port, close. */
static uint16_t free_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	uint16_t port = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static void test_not_running(const char *tmp_dir)
{
	char addr[64], secret[PATH_MAX + 16];
	uint8_t key[SDP_UROM_SECRET_LEN];
	struct t_svc s;
	enum doca_ctx_states state = DOCA_CTX_STATE_RUNNING;
	uint16_t port = free_port();
	int64_t t0, elapsed;

	T_TRUE(port != 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	if (snprintf(secret, sizeof(secret), "%s/secret-not-running", tmp_dir) >=
	    (int)sizeof(secret))
		return;
	T_OK(sdp_urom_secret_load_or_create(secret, key));
	setenv("SOFTDPU_UROM_SERVICE_ADDR", addr, 1);
	setenv("SOFTDPU_UROM_SECRET_FILE", secret, 1);
	setenv("SOFTDPU_UROM_CONNECT_TIMEOUT_MS", "2000", 1);

	t0 = t_now_ms();
	T_STATUS(t_svc_open(&s, 0), DOCA_ERROR_NOT_CONNECTED);
	elapsed = t_now_ms() - t0;
	if (elapsed > 2000 + 3000)
		t_fail("start against a closed port took %lld ms, expected at most ~2000",
		       (long long)elapsed);
	T_OK(doca_ctx_get_state(doca_urom_service_as_ctx(s.svc), &state));
	T_EQ_INT(state, DOCA_CTX_STATE_IDLE);
	T_STATUS(sdp_ctx_get_last_error(doca_urom_service_as_ctx(s.svc)), DOCA_ERROR_NOT_CONNECTED);
	/* Still configurable and destroyable after the failure. */
	T_OK(doca_urom_service_set_max_workers(s.svc, 4));
	t_svc_close(&s);
	unsetenv("SOFTDPU_UROM_CONNECT_TIMEOUT_MS");
}

static void test_wrong_secret(struct t_uromd *d)
{
	char other[PATH_MAX + 16], json[65536];
	uint8_t key[SDP_UROM_SECRET_LEN];
	struct t_svc s;

	if (snprintf(other, sizeof(other), "%s/other-secret", d->tmp_dir) >= (int)sizeof(other))
		return;
	T_OK(sdp_urom_secret_load_or_create(other, key));
	setenv("SOFTDPU_UROM_SECRET_FILE", other, 1);
	T_STATUS(t_svc_open(&s, 0), DOCA_ERROR_AUTHENTICATION);
	t_svc_close(&s);
	t_uromd_export_env(d);

	T_TRUE(t_uromd_alive(d));
	T_EQ_INT(t_uromd_worker_pids(d, NULL, 0), 0);
	T_OK(t_raw_status(d->port, d->secret_file, json, sizeof(json)));
	T_EQ_INT(t_status_num_workers(json), 0);

	/* The right secret still gets in. */
	T_OK(t_svc_open(&s, 0));
	t_svc_close(&s);
}

/* A client of protocol version 99 gets VERSION_REJECT naming the daemon's version. */
static void test_raw_version_mismatch(struct t_uromd *d)
{
	static struct t_raw r;
	struct sdp_urom_msg msg;
	struct t_svc s;

	T_OK(t_raw_connect(&r, d->port));
	t_raw_hello(&r, &msg, 99, 99);
	T_OK(t_raw_send(&r, &msg, 99));
	T_OK(t_raw_recv(&r, &msg, 5000));
	T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_VERSION_REJECT);
	T_EQ_INT(msg.u.version_reject.version, SDP_UROM_PROTO_VERSION);
	t_raw_close(&r);

	/* A HELLO of the right version that offers only a future range is refused too. */
	T_OK(t_raw_connect(&r, d->port));
	t_raw_hello(&r, &msg, SDP_UROM_PROTO_VERSION + 1, SDP_UROM_PROTO_VERSION + 5);
	T_OK(t_raw_send(&r, &msg, 0));
	T_OK(t_raw_recv(&r, &msg, 5000));
	T_EQ_INT(msg.hdr.type, SDP_UROM_MSG_VERSION_REJECT);
	t_raw_close(&r);

	T_TRUE(t_uromd_alive(d));
	T_OK(t_svc_open(&s, 0));
	t_svc_close(&s);
}

/* ---- a fake service that answers every HELLO with VERSION_REJECT ---- */

struct fake_svc {
	int listen_fd;
	struct sdp_urom_chan chan; /* the accepted host */
	int chan_ok;
	uint16_t port;
	uint16_t wire_version; /* header version of the reject */
	uint16_t body_version; /* version the reject announces */
	int got_hello;
	int hellos;
	volatile int stop;
	pthread_t thread;
};

static int fake_frame(void *arg, const uint8_t *data, size_t len)
{
	struct fake_svc *f = arg;
	struct sdp_urom_msg msg;
	doca_error_t st = sdp_urom_msg_unpack(data, len, &msg);

	if ((st == DOCA_SUCCESS || st == DOCA_ERROR_NOT_SUPPORTED) &&
	    msg.hdr.type == SDP_UROM_MSG_HELLO)
		f->got_hello = 1;
	return 0;
}

static void fake_reject(struct fake_svc *f)
{
	static const char sw[] = "fake-service 9.9";
	static uint8_t out[1024];
	struct sdp_urom_msg msg;
	size_t len = 0;

	f->got_hello = 0;
	f->hellos++;
	memset(&msg, 0, sizeof(msg));
	msg.hdr.type = SDP_UROM_MSG_VERSION_REJECT;
	msg.u.version_reject.version = f->body_version;
	msg.u.version_reject.software.data = (const uint8_t *)sw;
	msg.u.version_reject.software.len = sizeof(sw) - 1;
	if (sdp_urom_msg_pack(&msg, out, sizeof(out), &len) == DOCA_SUCCESS) {
		out[4] = (uint8_t)(f->wire_version & 0xff);
		out[5] = (uint8_t)(f->wire_version >> 8);
		if (send(f->chan.fd, out, len, MSG_NOSIGNAL) != (ssize_t)len)
			t_fail("fake service: send failed");
	}
}

static void *fake_main(void *arg)
{
	struct fake_svc *f = arg;

	while (!f->stop) {
		struct pollfd p[2] = {{.fd = f->listen_fd, .events = POLLIN},
				      {.fd = f->chan_ok ? f->chan.fd : -1, .events = POLLIN}};
		int made;

		if (poll(p, 2, 20) <= 0)
			continue;
		if (p[0].revents & POLLIN) {
			int fd = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0) {
				if (f->chan_ok)
					sdp_urom_chan_fini(&f->chan);
				f->chan_ok = sdp_urom_chan_init(&f->chan, fd, 4096) == DOCA_SUCCESS;
			}
		}
		if (f->chan_ok && (p[1].revents & (POLLIN | POLLHUP)) &&
		    sdp_urom_chan_read(&f->chan, fake_frame, f, &made) != DOCA_SUCCESS) {
			sdp_urom_chan_fini(&f->chan);
			f->chan_ok = 0;
		}
		if (f->got_hello && f->chan_ok)
			fake_reject(f);
	}
	return NULL;
}

static int fake_start(struct fake_svc *f, uint16_t wire_version, uint16_t body_version)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};

	memset(f, 0, sizeof(*f));
	f->wire_version = wire_version;
	f->body_version = body_version;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (sdp_urom_chan_listen((struct sockaddr *)&sa, sizeof(sa), &f->listen_fd, &f->port) !=
	    DOCA_SUCCESS)
		return -1;
	return pthread_create(&f->thread, NULL, fake_main, f) == 0 ? 0 : -1;
}

static void fake_stop(struct fake_svc *f)
{
	f->stop = 1;
	pthread_join(f->thread, NULL);
	if (f->chan_ok)
		sdp_urom_chan_fini(&f->chan);
	close(f->listen_fd);
}

static void test_host_vs_fake_service(const char *secret_file, uint16_t wire_version,
				      uint16_t body_version)
{
	static struct fake_svc f;
	struct t_svc s;
	char addr[64];
	int64_t t0;

	if (fake_start(&f, wire_version, body_version) != 0) {
		t_fail("fake service did not start");
		return;
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", f.port);
	setenv("SOFTDPU_UROM_SERVICE_ADDR", addr, 1);
	setenv("SOFTDPU_UROM_SECRET_FILE", secret_file, 1);
	t0 = t_now_ms();
	T_STATUS(t_svc_open(&s, 0), DOCA_ERROR_NOT_SUPPORTED);
	T_TRUE(t_now_ms() - t0 < 6000);
	T_EQ_INT(f.hellos, 1);
	t_svc_close(&s);
	fake_stop(&f);
}

/* Argument and state checks of the service context around a live connection. */
static void test_service_states(struct t_uromd *d)
{
	const struct doca_urom_service_plugin_info *plugins = NULL;
	struct doca_urom_service *svc;
	struct doca_pe *pe;
	doca_cpu_set_t cpus;
	size_t n = 0;

	T_STATUS(doca_urom_service_create(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_pe_create(&pe));
	T_OK(doca_urom_service_create(&svc));
	T_OK(doca_pe_connect_ctx(pe, doca_urom_service_as_ctx(svc)));
	T_STATUS(doca_urom_service_set_max_workers(NULL, 4), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_set_max_workers(svc, 3), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_set_max_workers(svc, 0), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_set_dev(svc, NULL), DOCA_ERROR_INVALID_VALUE);
	/* Not running yet. */
	T_STATUS(doca_urom_service_get_plugins_list(svc, &plugins, &n), DOCA_ERROR_BAD_STATE);
	T_TRUE(plugins == NULL && n == 0);
	T_STATUS(doca_urom_service_get_cpuset(svc, &cpus), DOCA_ERROR_BAD_STATE);

	t_uromd_export_env(d);
	T_OK(doca_ctx_start(doca_urom_service_as_ctx(svc)));
	T_STATUS(doca_urom_service_get_plugins_list(svc, NULL, &n), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_get_plugins_list(svc, &plugins, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(doca_urom_service_get_cpuset(svc, NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(doca_urom_service_get_plugins_list(svc, &plugins, &n));
	T_TRUE(n >= 1);
	T_OK(doca_urom_service_get_cpuset(svc, &cpus));
	/* Running: configuration and destroy are refused, the context keeps working. */
	T_STATUS(doca_urom_service_set_max_workers(svc, 8), DOCA_ERROR_BAD_STATE);
	T_STATUS(doca_urom_service_set_max_comm_msg_size(svc, 2048), DOCA_ERROR_BAD_STATE);
	/* DOCA documents NOT_PERMITTED for destroying a context that is not IDLE. */
	T_STATUS(doca_urom_service_destroy(svc), DOCA_ERROR_NOT_PERMITTED);
	T_STATUS(doca_ctx_start(doca_urom_service_as_ctx(svc)), DOCA_ERROR_BAD_STATE);
	T_OK(doca_urom_service_get_plugins_list(svc, &plugins, &n));

	T_OK(doca_ctx_stop(doca_urom_service_as_ctx(svc)));
	T_EQ_INT(t_ctx_wait_state(doca_urom_service_as_ctx(svc), pe, NULL, DOCA_CTX_STATE_IDLE,
				  T_WAIT_MS),
		 DOCA_CTX_STATE_IDLE);
	T_STATUS(doca_urom_service_get_plugins_list(svc, &plugins, &n), DOCA_ERROR_BAD_STATE);
	/* Restartable after a stop. */
	T_OK(doca_ctx_start(doca_urom_service_as_ctx(svc)));
	T_OK(doca_ctx_stop(doca_urom_service_as_ctx(svc)));
	t_ctx_wait_state(doca_urom_service_as_ctx(svc), pe, NULL, DOCA_CTX_STATE_IDLE, T_WAIT_MS);
	T_OK(doca_urom_service_destroy(svc));
	T_OK(doca_pe_destroy(pe));
}

int main(void)
{
	struct t_uromd d;
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "/tmp/softdpu-it-connect-%d-XXXXXX", (int)getpid());
	if (mkdtemp(tmp) == NULL) {
		perror("mkdtemp");
		return T_EXIT_FAIL;
	}
	setenv("UCX_NET_DEVICES", "lo", 1);
	test_not_running(tmp);
	{
		char secret[PATH_MAX + 16];
		uint8_t key[SDP_UROM_SECRET_LEN];

		if (snprintf(secret, sizeof(secret), "%s/secret-fake", tmp) >= (int)sizeof(secret))
			return T_EXIT_FAIL;
		T_OK(sdp_urom_secret_load_or_create(secret, key));
		/* A future service: its reject carries its own version in header and body. */
		test_host_vs_fake_service(secret, SDP_UROM_PROTO_VERSION + 1,
					  SDP_UROM_PROTO_VERSION + 1);
		/* A reject framed in our version announcing another one. */
		test_host_vs_fake_service(secret, SDP_UROM_PROTO_VERSION,
					  SDP_UROM_PROTO_VERSION + 1);
	}
	t_rm_rf(tmp);

	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	test_wrong_secret(&d);
	test_raw_version_mismatch(&d);
	test_service_states(&d);
	t_uromd_stop(&d);
	T_DONE();
}
