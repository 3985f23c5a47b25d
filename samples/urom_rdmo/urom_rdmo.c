/*
 * UROM RDMO sample: Remote Direct Memory Operations through the worker_rdmo plugin.
 *
 * Server (-m server, the target): starts a UROM worker running worker_rdmo, maps a 64 KiB
 * buffer in its own UCP context and hands the plugin the means to reach it (CLIENT_INIT with its
 * UCP worker address, two MR_REGs: the 8-byte append pointer and the data areas). It then
 * listens on a TCP socket; for the client that connects it creates an RQ (RQ_CREATE with the
 * client's UCP worker address) and sends the client what it needs: the plugin's address, the
 * rkey ids, the buffer's areas. It keeps progressing its UCP worker (over TCP, bytes land only
 * while it does) until the client reports back, then checks every byte of the buffer and
 * prints PASS or FAIL.
 *
 * Client (-m client, the initiator): connects, then sends APPENDs, a SCATTER, a FENCE'd APPEND
 * and a FENCE'd FLUSH as UCX active messages straight to the plugin's worker, without the
 * server's involvement; it waits for the FLUSH answer and reports it to the server.
 *
 * Both sides derive the same data from a seed the server picks, so the server knows what must
 * have landed where. Every wait is bounded (-t seconds) and sleeps on descriptors.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include <doca_argp.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_urom.h>

#include "sdp_rdmo_wire.h"
#include "urom_rdmo.h"
#include "urom_rdmo_xchg.h"
#include "worker_rdmo.h"

DOCA_LOG_REGISTER(UROM_RDMO);

#define DEFAULT_PORT 18515
#define DEFAULT_TIMEOUT_S 30
#define SLICE_MS 100
#define RDMO_PAD 256 /* zero bytes kept after a received UCP address (see run_client) */

/* The server's buffer. */
#define BUF_LEN (64u << 10)
#define PTR_OFF 0u		/* the append pointer, rkey id ptr_rkey: [0, 8) */
#define APPEND_OFF 64u		/* [64, 32 KiB): appends, rkey id data_rkey ... */
#define SCATTER_OFF (32u << 10) /* [32 KiB, 64 KiB): scatter targets (... also) */
#define APPEND_LEN (SCATTER_OFF - APPEND_OFF)
#define SCATTER_LEN (BUF_LEN - SCATTER_OFF)
#define FILL 0x5a
#define CLIENT_ID 0x1dea
#define FLUSH_ID 0x600d

/* The workload: appends in order (the last one FENCE'd), then scatter entries, then FLUSH. */
static const uint16_t append_lens[] = {37, 1, 500, 4000, 100};
#define NUM_APPENDS (sizeof(append_lens) / sizeof(append_lens[0]))
#define NUM_SCATTER 8u

enum rdmo_mode {
	MODE_NONE,
	MODE_SERVER,
	MODE_CLIENT,
};

struct rdmo_config {
	enum rdmo_mode mode;
	char device[64]; /* IB device name, empty: none */
	char addr[64];	 /* server: listen address; client: server address */
	int port;
	int timeout_s;
};

static atomic_int force_quit;

static void signal_handler(int signum)
{
	(void)signum;
	atomic_store(&force_quit, 1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Byte i of data stream `stream` (one per append, one per scatter entry). */
static uint8_t pattern_byte(uint64_t seed, unsigned int stream, size_t i)
{
	uint64_t x = seed ^ ((uint64_t)stream << 32) ^ (uint64_t)i * 0x9e3779b97f4a7c15ull;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return (uint8_t)(x >> 56);
}

static void pattern_fill(uint8_t *p, size_t len, uint64_t seed, unsigned int stream)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern_byte(seed, stream, i);
}

/* Scatter entry k: its offset in the scatter area and its length. */
static void scatter_entry(unsigned int k, uint64_t *off_p, uint16_t *len_p)
{
	*off_p = (uint64_t)k * 3000u + (k * 17u) % 100u;
	*len_p = (uint16_t)(64u + k * 100u);
}

static size_t append_total(void)
{
	size_t i, total = 0;

	for (i = 0; i < NUM_APPENDS; i++)
		total += append_lens[i];
	return total;
}

/* ---- TCP exchange ---------------------------------------------------------------------------- */

/* Wait for events on fd until deadline (ms, monotonic); 1 ready, 0 timeout or quit. */
static int fd_wait(int fd, short events, uint64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	uint64_t now;
	int n;

	while (!atomic_load(&force_quit) && (now = now_ms()) < deadline) {
		n = poll(&p, 1, (int)(deadline - now < SLICE_MS ? deadline - now : SLICE_MS));
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR) {
			DOCA_LOG_ERR("poll failed: %s", strerror(errno));
			return 0;
		}
	}
	return 0;
}

static doca_error_t send_all(int fd, const void *buf, size_t len, uint64_t deadline)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		if (!fd_wait(fd, POLLOUT, deadline)) {
			DOCA_LOG_ERR("timed out sending to the peer");
			return DOCA_ERROR_TIME_OUT;
		}
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			DOCA_LOG_ERR("send to the peer failed: %s", strerror(errno));
			return DOCA_ERROR_IO_FAILED;
		}
		p += n;
		len -= (size_t)n;
	}
	return DOCA_SUCCESS;
}

static doca_error_t recv_all(int fd, void *buf, size_t len, uint64_t deadline)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		if (!fd_wait(fd, POLLIN, deadline)) {
			DOCA_LOG_ERR("timed out waiting for the peer");
			return DOCA_ERROR_TIME_OUT;
		}
		n = recv(fd, p, len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n == 0) {
			DOCA_LOG_ERR("the peer closed the connection");
			return DOCA_ERROR_CONNECTION_RESET;
		}
		if (n < 0) {
			DOCA_LOG_ERR("receive from the peer failed: %s", strerror(errno));
			return DOCA_ERROR_IO_FAILED;
		}
		p += n;
		len -= (size_t)n;
	}
	return DOCA_SUCCESS;
}

static doca_error_t xchg_send(int fd, uint16_t type, const void *a, size_t a_len, const void *b,
			      size_t b_len, uint64_t deadline)
{
	uint8_t hdr[SDP_RDMO_XCHG_HDR_LEN];
	doca_error_t result;

	sdp_rdmo_xchg_hdr_pack(type, (uint32_t)(a_len + b_len), hdr);
	result = send_all(fd, hdr, sizeof(hdr), deadline);
	if (result == DOCA_SUCCESS && a_len > 0)
		result = send_all(fd, a, a_len, deadline);
	if (result == DOCA_SUCCESS && b_len > 0)
		result = send_all(fd, b, b_len, deadline);
	return result;
}

/* Receive one message of type `want` into buf (cap bytes); its payload length in *len_p. */
static doca_error_t xchg_recv(int fd, uint16_t want, void *buf, size_t cap, size_t *len_p,
			      uint64_t deadline)
{
	uint8_t raw[SDP_RDMO_XCHG_HDR_LEN];
	struct sdp_rdmo_xchg_hdr hdr;
	doca_error_t result;

	result = recv_all(fd, raw, sizeof(raw), deadline);
	if (result != DOCA_SUCCESS)
		return result;
	if (sdp_rdmo_xchg_hdr_parse(raw, sizeof(raw), &hdr) != DOCA_SUCCESS || hdr.type != want ||
	    hdr.len > cap) {
		DOCA_LOG_ERR("malformed or unexpected message from the peer (type %u, %u bytes)",
			     hdr.type, hdr.len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	result = recv_all(fd, buf, hdr.len, deadline);
	if (result == DOCA_SUCCESS)
		*len_p = hdr.len;
	return result;
}

/* ---- UCX ------------------------------------------------------------------------------------- */

static doca_error_t ucx_open(uint64_t features, ucp_context_h *ctx_p, ucp_worker_h *worker_p,
			     int *efd_p)
{
	ucp_params_t up = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = features};
	ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				  .thread_mode = UCS_THREAD_MODE_SINGLE};
	ucp_config_t *config;
	ucs_status_t status;

	status = ucp_config_read(NULL, NULL, &config);
	if (status == UCS_OK) {
		status = ucp_init(&up, config, ctx_p);
		ucp_config_release(config);
	}
	if (status != UCS_OK) {
		DOCA_LOG_ERR("ucp_init failed: %s", ucs_status_string(status));
		return DOCA_ERROR_DRIVER;
	}
	status = ucp_worker_create(*ctx_p, &wp, worker_p);
	if (status == UCS_OK)
		status = ucp_worker_get_efd(*worker_p, efd_p);
	if (status != UCS_OK) {
		DOCA_LOG_ERR("UCP worker set-up failed: %s", ucs_status_string(status));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

static doca_error_t ucx_address(ucp_worker_h worker, uint8_t *buf, size_t cap, size_t *len_p)
{
	ucp_address_t *addr;
	size_t len;

	if (ucp_worker_get_address(worker, &addr, &len) != UCS_OK) {
		DOCA_LOG_ERR("ucp_worker_get_address failed");
		return DOCA_ERROR_DRIVER;
	}
	if (len > cap) {
		DOCA_LOG_ERR("UCP worker address of %zu bytes, at most %zu supported", len, cap);
		ucp_worker_release_address(worker, addr);
		return DOCA_ERROR_TOO_BIG;
	}
	memcpy(buf, addr, len);
	*len_p = len;
	ucp_worker_release_address(worker, addr);
	return DOCA_SUCCESS;
}

/*
 * Progress worker (and pe, when given) once; when idle, sleep until the worker's or the PE's
 * descriptor fires (at most SLICE_MS).
 */
static void progress_or_wait(ucp_worker_h worker, int efd, struct doca_pe *pe)
{
	doca_notification_handle_t handle;
	struct pollfd p[2];
	int n = 0;

	if (worker != NULL && ucp_worker_progress(worker) != 0)
		return;
	if (pe != NULL && doca_pe_progress(pe) != 0)
		return;
	if (worker != NULL) {
		if (ucp_worker_arm(worker) != UCS_OK)
			return;
		p[n++] = (struct pollfd){.fd = efd, .events = POLLIN};
	}
	if (pe != NULL && doca_pe_get_notification_handle(pe, &handle) == DOCA_SUCCESS &&
	    doca_pe_request_notification(pe) == DOCA_SUCCESS)
		p[n++] = (struct pollfd){.fd = (int)handle, .events = POLLIN};
	if (n > 0 && poll(p, (nfds_t)n, SLICE_MS) > 0 && pe != NULL && (p[n - 1].revents & POLLIN))
		(void)doca_pe_clear_notification(pe, handle);
}

/* ---- server ---------------------------------------------------------------------------------- */

struct server {
	const struct rdmo_config *cfg;
	uint64_t deadline_ms; /* per step: cfg->timeout_s */
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_urom_service *service;
	struct doca_urom_worker *worker;
	int worker_started;
	ucp_context_h ucp_ctx;
	ucp_worker_h ucp_worker;
	int efd;
	uint8_t *buf;
	ucp_mem_h memh;
	void *rkey;
	size_t rkey_len;
	uint8_t plugin_addr[SDP_RDMO_XCHG_ADDR_MAX];
	size_t plugin_addr_len;
	uint64_t ptr_rkey;
	uint64_t data_rkey;
	uint64_t rq_id;
	uint64_t seed; /* the workload's, sent to the client */
	int listen_fd;
	int conn_fd;
};

/* The outcome of the command in flight (the server issues one at a time). */
static struct {
	int done;
	doca_error_t result;
	uint64_t value;
	uint8_t addr[SDP_RDMO_XCHG_ADDR_MAX];
	size_t addr_len;
} cmd;

static void client_init_finished(doca_error_t result, union doca_data cookie, void *addr,
				 uint64_t addr_len)
{
	(void)cookie;
	cmd.result = result;
	cmd.addr_len = 0;
	if (result == DOCA_SUCCESS) {
		if (addr_len > sizeof(cmd.addr)) {
			cmd.result = DOCA_ERROR_TOO_BIG;
		} else {
			memcpy(cmd.addr, addr, addr_len);
			cmd.addr_len = addr_len;
		}
	}
	cmd.done = 1;
}

static void value_finished(doca_error_t result, union doca_data cookie, uint64_t value)
{
	(void)cookie;
	cmd.result = result;
	cmd.value = value;
	cmd.done = 1;
}

/* After a submit that returned result: wait for its callback, return the command's status. */
static doca_error_t server_cmd_wait(struct server *s, doca_error_t result, const char *what)
{
	uint64_t deadline = now_ms() + (uint64_t)s->cfg->timeout_s * 1000u;

	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("%s: submit failed: %s", what, doca_error_get_descr(result));
		return result;
	}
	while (!cmd.done && now_ms() < deadline && !atomic_load(&force_quit))
		progress_or_wait(s->ucp_worker, s->efd, s->pe);
	if (!cmd.done) {
		DOCA_LOG_ERR("%s: no answer", what);
		return DOCA_ERROR_TIME_OUT;
	}
	if (cmd.result != DOCA_SUCCESS)
		DOCA_LOG_ERR("%s failed: %s", what, doca_error_get_descr(cmd.result));
	return cmd.result;
}

static doca_error_t open_device(const char *name, struct doca_dev **dev_p)
{
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	struct doca_devinfo **list = NULL;
	doca_error_t result;
	uint32_t n = 0, i;

	result = doca_devinfo_create_list(&list, &n);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_get_ibdev_name(list[i], ibdev, sizeof(ibdev)) == DOCA_SUCCESS &&
		    strcmp(ibdev, name) == 0) {
			result = doca_dev_open(list[i], dev_p);
			break;
		}
	}
	doca_devinfo_destroy_list(list);
	return result;
}

/* Progress pe until ctx reaches want, bounded. */
static doca_error_t wait_for_state(struct server *s, struct doca_ctx *ctx,
				   enum doca_ctx_states want)
{
	uint64_t deadline = now_ms() + (uint64_t)s->cfg->timeout_s * 1000u;
	enum doca_ctx_states state;
	doca_error_t result;
	struct pollfd p;
	doca_notification_handle_t h;

	for (;;) {
		result = doca_ctx_get_state(ctx, &state);
		if (result != DOCA_SUCCESS)
			return result;
		if (state == want)
			return DOCA_SUCCESS;
		if (want == DOCA_CTX_STATE_RUNNING && state == DOCA_CTX_STATE_IDLE)
			return DOCA_ERROR_BAD_STATE;
		if (now_ms() > deadline)
			return DOCA_ERROR_TIME_OUT;
		if (doca_pe_progress(s->pe) != 0)
			continue;
		if (doca_pe_get_notification_handle(s->pe, &h) == DOCA_SUCCESS &&
		    doca_pe_request_notification(s->pe) == DOCA_SUCCESS) {
			p.fd = (int)h;
			p.events = POLLIN;
			if (poll(&p, 1, SLICE_MS) > 0)
				(void)doca_pe_clear_notification(s->pe, h);
		}
	}
}

/* Service, worker_rdmo lookup, worker context RUNNING. */
static doca_error_t server_urom_start(struct server *s)
{
	const struct doca_urom_service_plugin_info *plugins = NULL;
	size_t num = 0, i;
	uint64_t plugin_id = 0;
	doca_error_t result;
	struct doca_ctx *ctx;

	if (s->cfg->device[0] != '\0') {
		result = open_device(s->cfg->device, &s->dev);
		if (result != DOCA_SUCCESS) {
			DOCA_LOG_ERR("failed to open device %s: %s", s->cfg->device,
				     doca_error_get_descr(result));
			return result;
		}
	}
	result = doca_pe_create(&s->pe);
	if (result == DOCA_SUCCESS)
		result = doca_urom_service_create(&s->service);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(s->pe, doca_urom_service_as_ctx(s->service));
	if (result == DOCA_SUCCESS)
		result = doca_urom_service_set_max_workers(s->service, 1);
	if (result == DOCA_SUCCESS && s->dev != NULL)
		result = doca_urom_service_set_dev(s->service, s->dev);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(doca_urom_service_as_ctx(s->service));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to connect to the UROM service: %s",
			     doca_error_get_descr(result));
		return result;
	}

	result = doca_urom_service_get_plugins_list(s->service, &plugins, &num);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < num; i++) {
		if (strcmp(plugins[i].plugin_name, "worker_rdmo") == 0) {
			result = urom_rdmo_init(plugins[i].id, plugins[i].version);
			plugin_id = plugins[i].id;
			break;
		}
	}
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("the service offers no usable worker_rdmo plugin: %s",
			     doca_error_get_descr(result));
		return result;
	}

	result = doca_urom_worker_create(&s->worker);
	if (result != DOCA_SUCCESS)
		return result;
	ctx = doca_urom_worker_as_ctx(s->worker);
	result = doca_urom_worker_set_service(s->worker, s->service);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(s->pe, ctx);
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_set_id(s->worker, DOCA_UROM_WORKER_ID_ANY);
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_set_max_inflight_tasks(s->worker, 16);
	if (result == DOCA_SUCCESS)
		result = doca_urom_worker_set_plugins(s->worker, plugin_id);
	if (result == DOCA_SUCCESS) {
		result = doca_ctx_start(ctx);
		if (result == DOCA_ERROR_IN_PROGRESS || result == DOCA_SUCCESS) {
			s->worker_started = 1;
			result = wait_for_state(s, ctx, DOCA_CTX_STATE_RUNNING);
		}
	}
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("the UROM worker did not start: %s", doca_error_get_descr(result));
	return result;
}

/* Map the buffer; CLIENT_INIT; MR_REG of the pointer and of the data areas. */
static doca_error_t server_rdmo_setup(struct server *s)
{
	union doca_data cookie = {.u64 = 0};
	ucp_mem_map_params_t mp;
	uint8_t addr[SDP_RDMO_XCHG_ADDR_MAX];
	size_t addr_len = 0;
	uint64_t ptr;
	doca_error_t result;

	result = ucx_open(UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP, &s->ucp_ctx, &s->ucp_worker,
			  &s->efd);
	if (result != DOCA_SUCCESS)
		return result;
	s->buf = aligned_alloc(4096, BUF_LEN);
	if (s->buf == NULL) {
		DOCA_LOG_ERR("no memory for the %u-byte buffer", BUF_LEN);
		return DOCA_ERROR_NO_MEMORY;
	}
	memset(s->buf, FILL, BUF_LEN);
	ptr = (uint64_t)(uintptr_t)(s->buf + APPEND_OFF);
	memcpy(s->buf + PTR_OFF, &ptr, sizeof(ptr));

	memset(&mp, 0, sizeof(mp));
	mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	mp.address = s->buf;
	mp.length = BUF_LEN;
	if (ucp_mem_map(s->ucp_ctx, &mp, &s->memh) != UCS_OK ||
	    ucp_rkey_pack(s->ucp_ctx, s->memh, &s->rkey, &s->rkey_len) != UCS_OK) {
		DOCA_LOG_ERR("failed to map and pack the buffer");
		return DOCA_ERROR_DRIVER;
	}
	result = ucx_address(s->ucp_worker, addr, sizeof(addr), &addr_len);
	if (result != DOCA_SUCCESS)
		return result;

	cmd.done = 0;
	result = server_cmd_wait(s,
				 urom_rdmo_task_client_init(s->worker, cookie, CLIENT_ID, addr,
							    addr_len, client_init_finished),
				 "CLIENT_INIT");
	if (result != DOCA_SUCCESS)
		return result;
	memcpy(s->plugin_addr, cmd.addr, cmd.addr_len);
	s->plugin_addr_len = cmd.addr_len;

	/* softdpu has no exported memory handles: no memh (the plugin ignores one anyway). */
	cmd.done = 0;
	result = server_cmd_wait(s,
				 urom_rdmo_task_mr_register(s->worker, cookie,
							    (uint64_t)(uintptr_t)(s->buf + PTR_OFF),
							    sizeof(uint64_t), s->rkey, s->rkey_len,
							    NULL, 0, value_finished),
				 "MR_REG of the pointer");
	if (result != DOCA_SUCCESS)
		return result;
	s->ptr_rkey = cmd.value;
	cmd.done = 0;
	result = server_cmd_wait(
		s,
		urom_rdmo_task_mr_register(
			s->worker, cookie, (uint64_t)(uintptr_t)(s->buf + APPEND_OFF),
			BUF_LEN - APPEND_OFF, s->rkey, s->rkey_len, NULL, 0, value_finished),
		"MR_REG of the data areas");
	if (result != DOCA_SUCCESS)
		return result;
	s->data_rkey = cmd.value;
	DOCA_LOG_INFO("buffer of %u bytes registered: pointer rkey id %" PRIu64
		      ", data rkey id %" PRIu64,
		      BUF_LEN, s->ptr_rkey, s->data_rkey);
	return DOCA_SUCCESS;
}

static doca_error_t server_listen(struct server *s)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)s->cfg->port);
	if (inet_pton(AF_INET, s->cfg->addr, &sa.sin_addr) != 1) {
		DOCA_LOG_ERR("listen address %s is not an IPv4 address", s->cfg->addr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->listen_fd < 0 ||
	    setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(s->listen_fd, 1) != 0 ||
	    getsockname(s->listen_fd, (struct sockaddr *)&sa, &sl) != 0) {
		DOCA_LOG_ERR("failed to listen on %s:%d: %s", s->cfg->addr, s->cfg->port,
			     strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	printf("urom_rdmo server: listening on %s:%u\n", s->cfg->addr, ntohs(sa.sin_port));
	fflush(stdout);
	return DOCA_SUCCESS;
}

/* Accept the client, admit it (RQ_CREATE) and tell it what it needs. */
static doca_error_t server_admit(struct server *s)
{
	uint64_t deadline = now_ms() + (uint64_t)s->cfg->timeout_s * 1000u;
	union doca_data cookie = {.u64 = 0};
	static uint8_t hello[SDP_RDMO_XCHG_ADDR_MAX];
	struct sdp_rdmo_xchg_info info;
	size_t hello_len = 0;
	doca_error_t result;

	if (!fd_wait(s->listen_fd, POLLIN, deadline)) {
		DOCA_LOG_ERR("no client connected within %d s", s->cfg->timeout_s);
		return DOCA_ERROR_TIME_OUT;
	}
	s->conn_fd = accept(s->listen_fd, NULL, NULL);
	if (s->conn_fd < 0 || fcntl(s->conn_fd, F_SETFL, O_NONBLOCK) != 0 ||
	    fcntl(s->conn_fd, F_SETFD, FD_CLOEXEC) != 0) {
		DOCA_LOG_ERR("accept failed: %s", strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	result = xchg_recv(s->conn_fd, SDP_RDMO_XCHG_HELLO, hello, sizeof(hello), &hello_len,
			   deadline);
	if (result != DOCA_SUCCESS)
		return result;

	cmd.done = 0;
	result = server_cmd_wait(
		s, urom_rdmo_task_rq_create(s->worker, cookie, hello, hello_len, value_finished),
		"RQ_CREATE");
	if (result != DOCA_SUCCESS)
		return result;
	s->rq_id = cmd.value;
	DOCA_LOG_INFO("client admitted: rq %" PRIu64, s->rq_id);

	memset(&info, 0, sizeof(info));
	info.client_id = CLIENT_ID;
	info.ptr_rkey = s->ptr_rkey;
	info.data_rkey = s->data_rkey;
	info.ptr_va = (uint64_t)(uintptr_t)(s->buf + PTR_OFF);
	info.append_va = (uint64_t)(uintptr_t)(s->buf + APPEND_OFF);
	info.append_len = APPEND_LEN;
	info.scatter_va = (uint64_t)(uintptr_t)(s->buf + SCATTER_OFF);
	info.scatter_len = SCATTER_LEN;
	info.seed = (uint64_t)now_ms() * 0x2545f4914f6cdd1dull ^ (uint64_t)getpid();
	s->seed = info.seed;
	return xchg_send(s->conn_fd, SDP_RDMO_XCHG_INFO, &info, sizeof(info), s->plugin_addr,
			 s->plugin_addr_len, deadline);
}

/* Every byte of the buffer as the workload leaves it? Logs the first difference. */
static int server_verify(const struct server *s)
{
	uint64_t seed = s->seed;
	uint8_t *want = malloc(BUF_LEN);
	size_t i, at = APPEND_OFF;
	uint64_t off, ptr;
	uint16_t len;
	unsigned int k;
	int ok = 1;

	if (want == NULL) {
		DOCA_LOG_ERR("no memory to verify");
		return 0;
	}
	memset(want, FILL, BUF_LEN);
	for (k = 0; k < NUM_APPENDS; k++) {
		pattern_fill(want + at, append_lens[k], seed, k);
		at += append_lens[k];
	}
	ptr = (uint64_t)(uintptr_t)(s->buf + at);
	memcpy(want + PTR_OFF, &ptr, sizeof(ptr));
	for (k = 0; k < NUM_SCATTER; k++) {
		scatter_entry(k, &off, &len);
		pattern_fill(want + SCATTER_OFF + off, len, seed, 100 + k);
	}
	for (i = 0; i < BUF_LEN; i++) {
		if (s->buf[i] != want[i]) {
			DOCA_LOG_ERR("byte %zu of the buffer is 0x%02x, expected 0x%02x (%s)", i,
				     s->buf[i], want[i],
				     i < APPEND_OFF  ? "pointer" :
				     i < SCATTER_OFF ? "append area" :
						       "scatter area");
			ok = 0;
			break;
		}
	}
	free(want);
	return ok;
}

/* Wait (progressing our UCP worker: TCP moves the bytes only then) for the client's report. */
static doca_error_t server_wait_done(struct server *s, struct sdp_rdmo_xchg_done *done)
{
	uint64_t deadline = now_ms() + (uint64_t)s->cfg->timeout_s * 1000u;
	uint8_t payload[sizeof(*done)];
	size_t len = 0;
	struct pollfd p[2];

	while (!atomic_load(&force_quit) && now_ms() < deadline) {
		while (ucp_worker_progress(s->ucp_worker) != 0)
			;
		(void)doca_pe_progress(s->pe);
		if (ucp_worker_arm(s->ucp_worker) != UCS_OK)
			continue;
		p[0] = (struct pollfd){.fd = s->conn_fd, .events = POLLIN};
		p[1] = (struct pollfd){.fd = s->efd, .events = POLLIN};
		if (poll(p, 2, SLICE_MS) > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (xchg_recv(s->conn_fd, SDP_RDMO_XCHG_DONE, payload, sizeof(payload),
				      &len, deadline) != DOCA_SUCCESS ||
			    sdp_rdmo_xchg_done_parse(payload, len, done) != DOCA_SUCCESS) {
				DOCA_LOG_ERR("bad report from the client");
				return DOCA_ERROR_INVALID_VALUE;
			}
			return DOCA_SUCCESS;
		}
	}
	DOCA_LOG_ERR("no report from the client within %d s", s->cfg->timeout_s);
	return DOCA_ERROR_TIME_OUT;
}

static void server_teardown(struct server *s)
{
	union doca_data cookie = {.u64 = 0};
	enum doca_ctx_states state;
	struct doca_ctx *ctx;
	doca_error_t result;

	if (s->conn_fd >= 0)
		close(s->conn_fd);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->rq_id != 0) {
		cmd.done = 0;
		(void)server_cmd_wait(
			s, urom_rdmo_task_rq_destroy(s->worker, cookie, s->rq_id, value_finished),
			"RQ_DESTROY");
	}
	if (s->data_rkey != 0) {
		cmd.done = 0;
		(void)server_cmd_wait(s,
				      urom_rdmo_task_mr_deregister(s->worker, cookie, s->data_rkey,
								   value_finished),
				      "MR_DEREG");
	}
	if (s->ptr_rkey != 0) {
		cmd.done = 0;
		(void)server_cmd_wait(s,
				      urom_rdmo_task_mr_deregister(s->worker, cookie, s->ptr_rkey,
								   value_finished),
				      "MR_DEREG");
	}
	/* Our memory goes before the worker: nothing may reach it once it is unmapped. */
	if (s->rkey != NULL)
		ucp_rkey_buffer_release(s->rkey);
	if (s->memh != NULL)
		ucp_mem_unmap(s->ucp_ctx, s->memh);
	if (s->ucp_worker != NULL)
		ucp_worker_destroy(s->ucp_worker);
	s->ucp_worker = NULL;
	if (s->ucp_ctx != NULL)
		ucp_cleanup(s->ucp_ctx);
	if (s->worker != NULL) {
		ctx = doca_urom_worker_as_ctx(s->worker);
		if (s->worker_started && doca_ctx_get_state(ctx, &state) == DOCA_SUCCESS &&
		    state != DOCA_CTX_STATE_IDLE) {
			result = doca_ctx_stop(ctx);
			if (result == DOCA_SUCCESS || result == DOCA_ERROR_IN_PROGRESS)
				result = wait_for_state(s, ctx, DOCA_CTX_STATE_IDLE);
			if (result != DOCA_SUCCESS)
				DOCA_LOG_ERR("the UROM worker did not stop: %s",
					     doca_error_get_descr(result));
		}
		(void)doca_urom_worker_destroy(s->worker);
	}
	if (s->service != NULL) {
		ctx = doca_urom_service_as_ctx(s->service);
		if (doca_ctx_get_state(ctx, &state) == DOCA_SUCCESS &&
		    state != DOCA_CTX_STATE_IDLE) {
			result = doca_ctx_stop(ctx);
			if (result == DOCA_ERROR_IN_PROGRESS)
				(void)wait_for_state(s, ctx, DOCA_CTX_STATE_IDLE);
		}
		(void)doca_urom_service_destroy(s->service);
	}
	if (s->pe != NULL)
		(void)doca_pe_destroy(s->pe);
	if (s->dev != NULL)
		(void)doca_dev_close(s->dev);
	free(s->buf);
}

static doca_error_t run_server(const struct rdmo_config *cfg)
{
	struct sdp_rdmo_xchg_result verdict = {0};
	struct sdp_rdmo_xchg_done done;
	struct server s;
	doca_error_t result;
	int pass = 0;

	memset(&s, 0, sizeof(s));
	s.cfg = cfg;
	s.listen_fd = -1;
	s.conn_fd = -1;

	result = server_urom_start(&s);
	if (result == DOCA_SUCCESS)
		result = server_rdmo_setup(&s);
	if (result == DOCA_SUCCESS)
		result = server_listen(&s);
	if (result == DOCA_SUCCESS)
		result = server_admit(&s);
	if (result == DOCA_SUCCESS)
		result = server_wait_done(&s, &done);
	if (result == DOCA_SUCCESS) {
		pass = done.status == DOCA_SUCCESS && done.failed == 0;
		if (!pass)
			DOCA_LOG_ERR("the client's FLUSH reported %s, %" PRIu64 " failed",
				     doca_error_get_descr((doca_error_t)done.status), done.failed);
		pass = server_verify(&s) && pass;
		printf("urom_rdmo server: %s (%zu appended bytes, %u scatter entries checked)\n",
		       pass ? "PASS" : "FAIL", append_total(), NUM_SCATTER);
		fflush(stdout);
		verdict.pass = (uint32_t)pass;
		(void)xchg_send(s.conn_fd, SDP_RDMO_XCHG_RESULT, &verdict, sizeof(verdict), NULL, 0,
				now_ms() + (uint64_t)cfg->timeout_s * 1000u);
		if (!pass)
			result = DOCA_ERROR_UNEXPECTED;
	} else {
		printf("urom_rdmo server: FAIL (%s)\n", doca_error_get_descr(result));
		fflush(stdout);
	}
	server_teardown(&s);
	return result;
}

/* ---- client ---------------------------------------------------------------------------------- */

struct client {
	const struct rdmo_config *cfg;
	int fd;
	ucp_context_h ucp_ctx;
	ucp_worker_h ucp_worker;
	int efd;
	ucp_ep_h ep;
	struct sdp_rdmo_xchg_info info;
	int answered;		 /* the FLUSH answer arrived */
	struct sdp_rdmo_rsp rsp; /* ... this one */
};

/* Answers from the plugin: parsed (they come from the network), the FLUSH one kept. */
static ucs_status_t client_am_cb(void *arg, const void *header, size_t header_length, void *data,
				 size_t length, const ucp_am_recv_param_t *param)
{
	struct client *c = arg;
	struct sdp_rdmo_rsp rsp;
	const char *why = NULL;

	(void)param;
	if (sdp_rdmo_rsp_parse(header, header_length, data, length, &rsp, &why) != DOCA_SUCCESS) {
		DOCA_LOG_WARN("malformed answer from the plugin dropped: %s", why);
		return UCS_OK;
	}
	if (rsp.flush.flush_id != FLUSH_ID) {
		DOCA_LOG_WARN("answer to an unknown FLUSH %" PRIu64 " dropped", rsp.flush.flush_id);
		return UCS_OK;
	}
	c->rsp = rsp;
	c->answered = 1;
	return UCS_OK;
}

/* Connect to the server, trying again (every SLICE_MS) until it listens or deadline passes. */
static doca_error_t client_connect(struct client *c, uint64_t deadline)
{
	struct sockaddr_in sa;
	socklen_t len;
	int err;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)c->cfg->port);
	if (inet_pton(AF_INET, c->cfg->addr, &sa.sin_addr) != 1) {
		DOCA_LOG_ERR("server address %s is not an IPv4 address", c->cfg->addr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	while (!atomic_load(&force_quit) && now_ms() < deadline) {
		c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (c->fd < 0) {
			DOCA_LOG_ERR("socket failed: %s", strerror(errno));
			return DOCA_ERROR_IO_FAILED;
		}
		err = 0;
		len = sizeof(err);
		if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
			err = errno;
		if (err == EINPROGRESS) {
			err = ETIMEDOUT;
			if (fd_wait(c->fd, POLLOUT, deadline) &&
			    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
				err = errno;
		}
		if (err == 0)
			return DOCA_SUCCESS;
		close(c->fd);
		c->fd = -1;
		if (err != ECONNREFUSED) {
			DOCA_LOG_ERR("connect to %s:%d failed: %s", c->cfg->addr, c->cfg->port,
				     strerror(err));
			return DOCA_ERROR_NOT_CONNECTED;
		}
		(void)poll(NULL, 0, SLICE_MS); /* not listening yet */
	}
	DOCA_LOG_ERR("no server listening on %s:%d within %d s", c->cfg->addr, c->cfg->port,
		     c->cfg->timeout_s);
	return DOCA_ERROR_NOT_CONNECTED;
}

/* Send one operation (header packed from req, payload data) and wait until it left. */
static doca_error_t client_send(struct client *c, const struct sdp_rdmo_req *req, const void *data,
				size_t len)
{
	uint64_t deadline = now_ms() + (uint64_t)c->cfg->timeout_s * 1000u;
	ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				 .flags = UCP_AM_SEND_FLAG_REPLY};
	uint8_t hdr[UROM_RDMO_HDR_LEN_MAX];
	size_t hlen = sdp_rdmo_req_pack(req, hdr, sizeof(hdr));
	ucs_status_ptr_t sreq;
	ucs_status_t status;

	/* REPLY: the plugin knows us (our rq) by the endpoint our messages arrive on. */
	sreq = ucp_am_send_nbx(c->ep, UROM_RDMO_AM_ID, hdr, hlen, data, len, &p);
	if (sreq == NULL)
		return DOCA_SUCCESS;
	if (UCS_PTR_IS_ERR(sreq)) {
		DOCA_LOG_ERR("ucp_am_send_nbx failed: %s", ucs_status_string(UCS_PTR_STATUS(sreq)));
		return DOCA_ERROR_DRIVER;
	}
	while ((status = ucp_request_check_status(sreq)) == UCS_INPROGRESS && now_ms() < deadline &&
	       !atomic_load(&force_quit))
		progress_or_wait(c->ucp_worker, c->efd, NULL);
	if (status == UCS_INPROGRESS)
		ucp_request_cancel(c->ucp_worker, sreq);
	ucp_request_free(sreq);
	if (status != UCS_OK) {
		DOCA_LOG_ERR("an operation was not sent: %s", ucs_status_string(status));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

static doca_error_t client_append(struct client *c, unsigned int k, uint32_t flags)
{
	struct sdp_rdmo_req r = {
		.hdr = {.id = c->info.client_id, .op_id = UROM_RDMO_OP_APPEND, .flags = flags}};
	uint8_t data[4096];

	r.append.ptr_addr = c->info.ptr_va;
	r.append.ptr_rkey = c->info.ptr_rkey;
	r.append.data_rkey = c->info.data_rkey;
	pattern_fill(data, append_lens[k], c->info.seed, k);
	return client_send(c, &r, data, append_lens[k]);
}

static doca_error_t client_scatter(struct client *c)
{
	struct sdp_rdmo_req r = {.hdr = {.id = c->info.client_id, .op_id = UROM_RDMO_OP_SCATTER}};
	static uint8_t payload[NUM_SCATTER * (SDP_RDMO_SCATTER_IOV_LEN + 1024)];
	uint8_t data[1024];
	size_t off = 0;
	uint64_t at;
	uint16_t len;
	unsigned int k;

	r.scatter.count = NUM_SCATTER;
	for (k = 0; k < NUM_SCATTER; k++) {
		scatter_entry(k, &at, &len);
		pattern_fill(data, len, c->info.seed, 100 + k);
		if (sdp_rdmo_scatter_pack(payload, sizeof(payload), &off, c->info.scatter_va + at,
					  c->info.data_rkey, data, len) != DOCA_SUCCESS) {
			DOCA_LOG_ERR("scatter entry %u does not fit", k);
			return DOCA_ERROR_NO_MEMORY;
		}
	}
	return client_send(c, &r, payload, off);
}

/* The server's areas must hold the workload, without wrapping. */
static doca_error_t client_check_info(const struct client *c)
{
	const struct sdp_rdmo_xchg_info *i = &c->info;
	uint64_t off;
	uint16_t len;

	scatter_entry(NUM_SCATTER - 1, &off, &len);
	if (i->append_len < append_total() || i->append_va > UINT64_MAX - i->append_len ||
	    i->scatter_len < off + len || i->scatter_va > UINT64_MAX - i->scatter_len) {
		DOCA_LOG_ERR("the server's areas (append %" PRIu64 " bytes, scatter %" PRIu64
			     ") cannot hold the workload",
			     i->append_len, i->scatter_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t client_work(struct client *c)
{
	uint64_t deadline = now_ms() + (uint64_t)c->cfg->timeout_s * 1000u;
	struct sdp_rdmo_req flush = {.hdr = {.id = c->info.client_id,
					     .op_id = UROM_RDMO_OP_FLUSH,
					     .flags = UROM_RDMO_REQ_FLAG_FENCE}};
	doca_error_t result = DOCA_SUCCESS;
	unsigned int k;

	for (k = 0; k + 1 < NUM_APPENDS && result == DOCA_SUCCESS; k++)
		result = client_append(c, k, 0);
	if (result == DOCA_SUCCESS)
		result = client_scatter(c);
	/* The last APPEND waits until everything before it is in the server's memory. */
	if (result == DOCA_SUCCESS)
		result = client_append(c, NUM_APPENDS - 1, UROM_RDMO_REQ_FLAG_FENCE);
	flush.flush.flush_id = FLUSH_ID;
	if (result == DOCA_SUCCESS)
		result = client_send(c, &flush, NULL, 0);
	if (result != DOCA_SUCCESS)
		return result;
	while (!c->answered && now_ms() < deadline && !atomic_load(&force_quit))
		progress_or_wait(c->ucp_worker, c->efd, NULL);
	if (!c->answered) {
		DOCA_LOG_ERR("no answer to FLUSH within %d s", c->cfg->timeout_s);
		return DOCA_ERROR_TIME_OUT;
	}
	DOCA_LOG_INFO("%zu operations sent, FLUSH answered: %s, %" PRIu64 " failed",
		      NUM_APPENDS + 2, doca_error_get_descr((doca_error_t)c->rsp.status.status),
		      c->rsp.status.failed);
	return DOCA_SUCCESS;
}

static doca_error_t run_client(const struct rdmo_config *cfg)
{
	uint64_t deadline = now_ms() + (uint64_t)cfg->timeout_s * 1000u;
	static uint8_t msg[sizeof(struct sdp_rdmo_xchg_info) + SDP_RDMO_XCHG_ADDR_MAX + RDMO_PAD];
	ucp_am_handler_param_t am;
	struct sdp_rdmo_xchg_result verdict = {0};
	struct sdp_rdmo_xchg_done done = {0};
	ucp_ep_params_t ep;
	uint8_t addr[SDP_RDMO_XCHG_ADDR_MAX];
	size_t addr_len = 0, len = 0;
	const void *plugin_addr = NULL;
	size_t plugin_addr_len = 0;
	struct client c;
	doca_error_t result;

	memset(&c, 0, sizeof(c));
	c.cfg = cfg;
	c.fd = -1;
	result = ucx_open(UCP_FEATURE_AM | UCP_FEATURE_WAKEUP, &c.ucp_ctx, &c.ucp_worker, &c.efd);
	if (result != DOCA_SUCCESS)
		goto out;
	memset(&am, 0, sizeof(am));
	am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
			UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
	am.id = UROM_RDMO_AM_ID;
	am.flags = UCP_AM_FLAG_WHOLE_MSG;
	am.cb = client_am_cb;
	am.arg = &c;
	if (ucp_worker_set_am_recv_handler(c.ucp_worker, &am) != UCS_OK) {
		DOCA_LOG_ERR("ucp_worker_set_am_recv_handler failed");
		result = DOCA_ERROR_DRIVER;
		goto out;
	}
	result = ucx_address(c.ucp_worker, addr, sizeof(addr), &addr_len);
	if (result == DOCA_SUCCESS)
		result = client_connect(&c, deadline);
	if (result == DOCA_SUCCESS)
		result = xchg_send(c.fd, SDP_RDMO_XCHG_HELLO, addr, addr_len, NULL, 0, deadline);
	if (result == DOCA_SUCCESS)
		result = xchg_recv(c.fd, SDP_RDMO_XCHG_INFO, msg, sizeof(msg) - RDMO_PAD, &len,
				   deadline);
	if (result == DOCA_SUCCESS && sdp_rdmo_xchg_info_parse(msg, len, &c.info, &plugin_addr,
							       &plugin_addr_len) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("malformed INFO from the server");
		result = DOCA_ERROR_INVALID_VALUE;
	}
	if (result == DOCA_SUCCESS)
		result = client_check_info(&c);
	if (result != DOCA_SUCCESS)
		goto out;

	/* msg is zero past the address: UCX reads an address without knowing its length. */
	memset(&ep, 0, sizeof(ep));
	ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
	ep.address = plugin_addr;
	if (ucp_ep_create(c.ucp_worker, &ep, &c.ep) != UCS_OK) {
		DOCA_LOG_ERR("no endpoint to the plugin's worker");
		result = DOCA_ERROR_NOT_CONNECTED;
		goto out;
	}
	(void)plugin_addr_len;

	result = client_work(&c);
	if (result == DOCA_SUCCESS) {
		done.status = c.rsp.status.status;
		done.failed = c.rsp.status.failed;
		result = xchg_send(c.fd, SDP_RDMO_XCHG_DONE, &done, sizeof(done), NULL, 0,
				   now_ms() + (uint64_t)cfg->timeout_s * 1000u);
	}
	if (result == DOCA_SUCCESS)
		result = xchg_recv(c.fd, SDP_RDMO_XCHG_RESULT, msg, sizeof(verdict), &len,
				   now_ms() + (uint64_t)cfg->timeout_s * 1000u);
	if (result == DOCA_SUCCESS &&
	    sdp_rdmo_xchg_result_parse(msg, len, &verdict) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("malformed RESULT from the server");
		result = DOCA_ERROR_INVALID_VALUE;
	}
	if (result == DOCA_SUCCESS && (!verdict.pass || done.status != DOCA_SUCCESS))
		result = DOCA_ERROR_UNEXPECTED;

out:
	if (result == DOCA_SUCCESS)
		printf("urom_rdmo client: PASS (the server found every byte in place)\n");
	else
		printf("urom_rdmo client: FAIL (%s)\n", doca_error_get_descr(result));
	fflush(stdout);
	if (c.ep != NULL) {
		ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
					 .flags = UCP_EP_CLOSE_FLAG_FORCE};
		ucs_status_ptr_t creq = ucp_ep_close_nbx(c.ep, &p);
		uint64_t until = now_ms() + 1000u;

		while (creq != NULL && !UCS_PTR_IS_ERR(creq) &&
		       ucp_request_check_status(creq) == UCS_INPROGRESS && now_ms() < until)
			progress_or_wait(c.ucp_worker, c.efd, NULL);
		if (creq != NULL && !UCS_PTR_IS_ERR(creq))
			ucp_request_free(creq);
	}
	if (c.fd >= 0)
		close(c.fd);
	if (c.ucp_worker != NULL)
		ucp_worker_destroy(c.ucp_worker);
	if (c.ucp_ctx != NULL)
		ucp_cleanup(c.ucp_ctx);
	return result;
}

/* ---- arguments ------------------------------------------------------------------------------- */

static doca_error_t mode_cb(void *param, void *config)
{
	struct rdmo_config *cfg = config;
	const char *mode = param;

	if (strcmp(mode, "server") == 0) {
		cfg->mode = MODE_SERVER;
	} else if (strcmp(mode, "client") == 0) {
		cfg->mode = MODE_CLIENT;
	} else {
		DOCA_LOG_ERR("mode %s: expected server or client", mode);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t device_cb(void *param, void *config)
{
	struct rdmo_config *cfg = config;
	const char *name = param;

	if (strlen(name) >= sizeof(cfg->device)) {
		DOCA_LOG_ERR("device name %s is too long", name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(cfg->device, name);
	return DOCA_SUCCESS;
}

static doca_error_t addr_cb(void *param, void *config)
{
	struct rdmo_config *cfg = config;
	const char *addr = param;
	struct in_addr in;

	if (strlen(addr) >= sizeof(cfg->addr) || inet_pton(AF_INET, addr, &in) != 1) {
		DOCA_LOG_ERR("server address %s is not an IPv4 address", addr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(cfg->addr, addr);
	return DOCA_SUCCESS;
}

static doca_error_t port_cb(void *param, void *config)
{
	struct rdmo_config *cfg = config;
	int port = *(int *)param;

	if (port < 0 || port > 65535) {
		DOCA_LOG_ERR("port %d out of range [0, 65535]", port);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->port = port;
	return DOCA_SUCCESS;
}

static doca_error_t timeout_cb(void *param, void *config)
{
	struct rdmo_config *cfg = config;
	int t = *(int *)param;

	if (t < 1 || t > 3600) {
		DOCA_LOG_ERR("timeout %d s out of range [1, 3600]", t);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->timeout_s = t;
	return DOCA_SUCCESS;
}

static doca_error_t register_param(const char *short_name, const char *long_name,
				   const char *description, enum doca_argp_type type,
				   doca_argp_param_cb_t cb, int mandatory)
{
	struct doca_argp_param *param;
	doca_error_t result;

	result = doca_argp_param_create(&param);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(param, short_name);
	doca_argp_param_set_long_name(param, long_name);
	doca_argp_param_set_description(param, description);
	doca_argp_param_set_callback(param, cb);
	doca_argp_param_set_type(param, type);
	if (mandatory)
		doca_argp_param_set_mandatory(param);
	return doca_argp_register_param(param);
}

int main(int argc, char **argv)
{
	struct rdmo_config cfg;
	struct sigaction sa;
	doca_error_t result;

	memset(&cfg, 0, sizeof(cfg));
	strcpy(cfg.addr, "127.0.0.1");
	cfg.port = DEFAULT_PORT;
	cfg.timeout_s = DEFAULT_TIMEOUT_S;

	result = doca_log_backend_create_standard();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = doca_argp_init("doca_urom_rdmo", &cfg);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to init ARGP: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	result = register_param("m", "mode", "server (the target) or client (the initiator)",
				DOCA_ARGP_TYPE_STRING, mode_cb, 1);
	if (result == DOCA_SUCCESS)
		result = register_param("d", "device",
					"IB device name whose PCI address selects the "
					"DOCA_UROM_SERVICE_FILE line (server; optional)",
					DOCA_ARGP_TYPE_STRING, device_cb, 0);
	if (result == DOCA_SUCCESS)
		result = register_param("s", "server-addr",
					"IPv4 address the server listens on / the client connects "
					"to (default 127.0.0.1)",
					DOCA_ARGP_TYPE_STRING, addr_cb, 0);
	if (result == DOCA_SUCCESS)
		result = register_param("p", "port",
					"TCP port of the server (default 18515; server: 0 picks "
					"one and prints it)",
					DOCA_ARGP_TYPE_INT, port_cb, 0);
	if (result == DOCA_SUCCESS)
		result = register_param("t", "timeout", "bound of every wait, seconds (default 30)",
					DOCA_ARGP_TYPE_INT, timeout_cb, 0);
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to parse the arguments: %s", doca_error_get_descr(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	if (cfg.mode == MODE_CLIENT && cfg.port == 0) {
		DOCA_LOG_ERR("the client needs the server's port (-p)");
		doca_argp_destroy();
		return EXIT_FAILURE;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = signal_handler;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	result = cfg.mode == MODE_SERVER ? run_server(&cfg) : run_client(&cfg);
	if (atomic_load(&force_quit))
		DOCA_LOG_INFO("urom_rdmo interrupted; everything was torn down");
	else if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("urom_rdmo %s failed: %s",
			     cfg.mode == MODE_SERVER ? "server" : "client",
			     doca_error_get_descr(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
