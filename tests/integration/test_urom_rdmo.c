/*
 * Integration: the worker_rdmo plugin end to end, against a private softdpu-uromd. This process
 * plays the three roles in one thread: the target host (a UROM worker context running
 * worker_rdmo, a UCP worker whose mapped buffer is the memory operations write), and two
 * initiators (UCP workers that send APPEND / SCATTER / FLUSH active messages straight to the
 * plugin's worker). Every byte of the target buffer is compared with a model after each step.
 *
 * Covered: CLIENT_INIT (the plugin's address comes back; twice, and the same id from another
 * host connection, ALREADY_EXIST), MR_REG / MR_DEREG, RQ_CREATE (twice for one initiator:
 * ALREADY_EXIST) / RQ_DESTROY; APPEND (pointer read once, then cached), SCATTER, FLUSH with its
 * status; a FENCE'd APPEND that sees the pointer an earlier SCATTER wrote; a rendezvous-sized
 * APPEND; out-of-range SCATTER and APPEND refused with no byte moved; operations on a
 * deregistered rkey id refused; malformed operations and a foreign client id refused and
 * counted; operations from an endpoint without an rq dropped; malformed commands answered with
 * their error, the notification typed as the command. Then the urom_rdmo sample as two
 * processes (both must print PASS), and worker_rdmo.so loaded into this process (entry points,
 * the wakeup extension, addr, a command through worker_cmd / progress, notif_pack's capacity
 * check). Run twice by meson: with the default transports (shared memory) and with
 * UCX_TLS=tcp. Finally no worker log reports a sanitizer error.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "doca_buf.h"
#include "doca_urom_plugin.h"
#include "sdp_rdmo_wire.h"
#include "softdpu/urom_plugin.h"
#include "t_urom.h"
#include "t_uromd.h"
#include "urom_rdmo.h"
#include "worker_rdmo.h"

#define BUF_LEN (1u << 20)
#define PTR_AREA 64u		  /* [0, 64): pointer slots, rkey id ptr_rkey */
#define APPEND_AREA PTR_AREA	  /* [64, 512 KiB): appends */
#define SCATTER_AREA (512u << 10) /* [512 KiB, 1 MiB): scatter targets */
#define FILL 0xee
#define CLIENT_ID 0x5eed
#define MAX_RSP 64

static struct t_uromd d;
static struct t_svc s;

/* An initiator: its own UCP context and worker, an endpoint to the plugin, the answers. */
struct ini {
	ucp_context_h ctx;
	ucp_worker_h w;
	int efd;
	ucp_ep_h ep;
	void *addr;
	size_t addr_len;
	int nrsp;
	struct sdp_rdmo_rsp rsp[MAX_RSP];
	int bad_rsp;
};

/* The target host. */
static struct {
	uint64_t rdmo_id;
	struct doca_urom_worker *w;
	ucp_context_h ctx;
	ucp_worker_h uw;
	int efd;
	uint8_t *buf;
	uint8_t *model;
	ucp_mem_h memh;
	void *rkey;
	size_t rkey_len;
	uint8_t plugin_addr[8192];
	size_t plugin_addr_len;
	uint64_t ptr_rkey;
	uint64_t data_rkey;
} tg;

static struct ini *inis[2];

/* ---- progress and waits --------------------------------------------------------------------- */

/* Progress the PE and every UCP worker once; when idle, sleep on their descriptors (2 ms). */
static void pump(void)
{
	struct pollfd p[4];
	doca_notification_handle_t h;
	int did = 0, n = 0, i;

	did |= doca_pe_progress(s.pe);
	did |= ucp_worker_progress(tg.uw) != 0;
	for (i = 0; i < 2; i++)
		if (inis[i] != NULL)
			did |= ucp_worker_progress(inis[i]->w) != 0;
	if (did)
		return;
	if (ucp_worker_arm(tg.uw) != UCS_OK)
		return;
	p[n++] = (struct pollfd){.fd = tg.efd, .events = POLLIN};
	for (i = 0; i < 2; i++) {
		if (inis[i] == NULL)
			continue;
		if (ucp_worker_arm(inis[i]->w) != UCS_OK)
			return;
		p[n++] = (struct pollfd){.fd = inis[i]->efd, .events = POLLIN};
	}
	if (doca_pe_get_notification_handle(s.pe, &h) == DOCA_SUCCESS &&
	    doca_pe_request_notification(s.pe) == DOCA_SUCCESS)
		p[n++] = (struct pollfd){.fd = (int)h, .events = POLLIN};
	if (poll(p, (nfds_t)n, 2) > 0 && p[n - 1].fd == (int)h && (p[n - 1].revents & POLLIN))
		doca_pe_clear_notification(s.pe, h);
}

static int wait_count(const int *counter, int want)
{
	int64_t deadline = t_now_ms() + T_WAIT_MS;

	while (*counter < want && t_now_ms() < deadline)
		pump();
	return *counter >= want;
}

static ucs_status_t wait_req(ucs_status_ptr_t req)
{
	int64_t deadline = t_now_ms() + T_WAIT_MS;
	ucs_status_t st;

	if (req == NULL)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS && t_now_ms() < deadline)
		pump();
	if (st == UCS_INPROGRESS)
		ucp_request_cancel(tg.uw, req); /* never: the test fails below */
	ucp_request_free(req);
	return st;
}

/* ---- the target's commands (synchronous wrappers of the host half) ---------------------------- */

static struct {
	int done;
	doca_error_t status;
	uint64_t value;
	uint8_t addr[8192];
	size_t addr_len;
} last;

static void client_init_cb(doca_error_t result, union doca_data cookie, void *addr,
			   uint64_t addr_len)
{
	(void)cookie;
	last.status = result;
	last.addr_len = 0;
	if (result == DOCA_SUCCESS && addr_len <= sizeof(last.addr)) {
		memcpy(last.addr, addr, addr_len);
		last.addr_len = addr_len;
	}
	last.done++;
}

static void value_cb(doca_error_t result, union doca_data cookie, uint64_t value)
{
	(void)cookie;
	last.status = result;
	last.value = value;
	last.done++;
}

/* Wait for the callback of a submit that returned st; its status. */
static doca_error_t cmd_wait(doca_error_t st, int before)
{
	if (st != DOCA_SUCCESS)
		return st;
	if (!wait_count(&last.done, before + 1))
		return DOCA_ERROR_TIME_OUT;
	return last.status;
}

static doca_error_t do_client_init(struct doca_urom_worker *w, uint64_t id, void *addr, size_t len)
{
	union doca_data c = {.u64 = 0};
	int before = last.done;

	return cmd_wait(urom_rdmo_task_client_init(w, c, id, addr, len, client_init_cb), before);
}

static doca_error_t do_mr_reg(uint64_t off, uint64_t len, uint64_t *id_p)
{
	union doca_data c = {.u64 = 0};
	int before = last.done;
	doca_error_t st;

	st = cmd_wait(urom_rdmo_task_mr_register(tg.w, c, (uint64_t)(uintptr_t)(tg.buf + off), len,
						 tg.rkey, tg.rkey_len, NULL, 0, value_cb),
		      before);
	*id_p = last.value;
	return st;
}

static doca_error_t do_mr_dereg(uint64_t id)
{
	union doca_data c = {.u64 = 0};
	int before = last.done;
	doca_error_t st;

	st = cmd_wait(urom_rdmo_task_mr_deregister(tg.w, c, id, value_cb), before);
	if (st == DOCA_SUCCESS && last.value != id)
		t_fail("MR_DEREG answered rkey id %lu, expected %lu", (unsigned long)last.value,
		       (unsigned long)id);
	return st;
}

static doca_error_t do_rq_create(struct ini *in, uint64_t *rq_id_p)
{
	union doca_data c = {.u64 = 0};
	int before = last.done;
	doca_error_t st;

	st = cmd_wait(urom_rdmo_task_rq_create(tg.w, c, in->addr, in->addr_len, value_cb), before);
	*rq_id_p = last.value;
	return st;
}

static doca_error_t do_rq_destroy(uint64_t rq_id)
{
	union doca_data c = {.u64 = 0};
	int before = last.done;

	return cmd_wait(urom_rdmo_task_rq_destroy(tg.w, c, rq_id, value_cb), before);
}

/* ---- raw commands (what a buggy host half could send) ----------------------------------------- */

static struct {
	int done;
	doca_error_t status;
	size_t len;
	uint8_t data[256];
} raw;

static void raw_cb(struct doca_urom_worker_cmd_task *task, union doca_data task_user_data,
		   union doca_data ctx_user_data)
{
	struct doca_buf *resp = doca_urom_worker_cmd_task_get_response(task);
	void *p = NULL;
	size_t len = 0;

	(void)task_user_data;
	(void)ctx_user_data;
	raw.status = doca_task_get_status(doca_urom_worker_cmd_task_as_task(task));
	raw.len = 0;
	if (resp != NULL && doca_buf_get_data(resp, &p) == DOCA_SUCCESS &&
	    doca_buf_get_data_len(resp, &len) == DOCA_SUCCESS && p != NULL &&
	    len <= sizeof(raw.data)) {
		memcpy(raw.data, p, len);
		raw.len = len;
	}
	doca_urom_worker_cmd_task_release(task);
	raw.done++;
}

static doca_error_t raw_cmd(const void *bytes, size_t len)
{
	struct doca_urom_worker_cmd_task *task;
	struct doca_buf *payload;
	int before = raw.done;
	void *p = NULL;

	T_OK(doca_urom_worker_cmd_task_allocate_init(tg.w, tg.rdmo_id, &task));
	payload = doca_urom_worker_cmd_task_get_payload(task);
	T_OK(doca_buf_get_data(payload, &p));
	memcpy(p, bytes, len);
	T_OK(doca_buf_set_data(payload, p, len));
	doca_urom_worker_cmd_task_set_cb(task, raw_cb);
	T_OK(doca_task_submit(doca_urom_worker_cmd_task_as_task(task)));
	if (!wait_count(&raw.done, before + 1))
		return DOCA_ERROR_TIME_OUT;
	return raw.status;
}

/* ---- UCX set-up ------------------------------------------------------------------------------ */

static int ucx_open(uint64_t features, ucp_context_h *ctx_p, ucp_worker_h *w_p, int *efd_p)
{
	ucp_params_t up = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = features};
	ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
				  .thread_mode = UCS_THREAD_MODE_SINGLE};
	ucp_config_t *cfg;

	if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
		return -1;
	if (ucp_init(&up, cfg, ctx_p) != UCS_OK) {
		ucp_config_release(cfg);
		return -1;
	}
	ucp_config_release(cfg);
	if (ucp_worker_create(*ctx_p, &wp, w_p) != UCS_OK)
		return -1;
	return ucp_worker_get_efd(*w_p, efd_p) == UCS_OK ? 0 : -1;
}

static ucs_status_t ini_am_cb(void *arg, const void *header, size_t header_length, void *data,
			      size_t length, const ucp_am_recv_param_t *param)
{
	struct ini *in = arg;
	struct sdp_rdmo_rsp rsp;
	const char *why = NULL;

	(void)param;
	if (sdp_rdmo_rsp_parse(header, header_length, data, length, &rsp, &why) != DOCA_SUCCESS) {
		t_fail("malformed response from the plugin: %s", why);
		in->bad_rsp++;
		return UCS_OK;
	}
	if (in->nrsp < MAX_RSP)
		in->rsp[in->nrsp] = rsp;
	in->nrsp++;
	return UCS_OK;
}

static int ini_open(struct ini *in, int slot)
{
	ucp_am_handler_param_t am = {
		.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
			      UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG,
		.id = UROM_RDMO_AM_ID,
		.flags = UCP_AM_FLAG_WHOLE_MSG,
		.cb = ini_am_cb,
		.arg = in,
	};
	ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
			      .address = (const ucp_address_t *)tg.plugin_addr};
	ucp_address_t *a;

	memset(in, 0, sizeof(*in));
	if (ucx_open(UCP_FEATURE_AM | UCP_FEATURE_WAKEUP, &in->ctx, &in->w, &in->efd) != 0 ||
	    ucp_worker_set_am_recv_handler(in->w, &am) != UCS_OK ||
	    ucp_worker_get_address(in->w, &a, &in->addr_len) != UCS_OK)
		return -1;
	in->addr = malloc(in->addr_len);
	memcpy(in->addr, a, in->addr_len);
	ucp_worker_release_address(in->w, a);
	if (ucp_ep_create(in->w, &ep, &in->ep) != UCS_OK)
		return -1;
	inis[slot] = in;
	return 0;
}

static void ini_close(struct ini *in, int slot)
{
	ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				 .flags = UCP_EP_CLOSE_FLAG_FORCE};

	if (in->ep != NULL)
		(void)wait_req(ucp_ep_close_nbx(in->ep, &p));
	inis[slot] = NULL;
	if (in->w != NULL)
		ucp_worker_destroy(in->w);
	if (in->ctx != NULL)
		ucp_cleanup(in->ctx);
	free(in->addr);
	memset(in, 0, sizeof(*in));
}

/* ---- operations ------------------------------------------------------------------------------ */

static void send_op(struct ini *in, const struct sdp_rdmo_req *req, const void *data, size_t len)
{
	ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				 .flags = UCP_AM_SEND_FLAG_REPLY};
	uint8_t hdr[UROM_RDMO_HDR_LEN_MAX];
	size_t hlen = sdp_rdmo_req_pack(req, hdr, sizeof(hdr));
	ucs_status_t st;

	if (hlen == 0) {
		t_fail("cannot pack operation %u", req->hdr.op_id);
		return;
	}
	st = wait_req(ucp_am_send_nbx(in->ep, UROM_RDMO_AM_ID, hdr, hlen, data, len, &p));
	if (st != UCS_OK)
		t_fail("sending operation %u: %s", req->hdr.op_id, ucs_status_string(st));
}

/* Raw bytes as an operation header (malformed on purpose). */
static void send_raw(struct ini *in, const void *hdr, size_t hlen, const void *data, size_t len)
{
	ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				 .flags = UCP_AM_SEND_FLAG_REPLY};
	ucs_status_t st;

	st = wait_req(ucp_am_send_nbx(in->ep, UROM_RDMO_AM_ID, hdr, hlen, data, len, &p));
	if (st != UCS_OK)
		t_fail("sending a raw operation: %s", ucs_status_string(st));
}

static void op_append(struct ini *in, uint32_t flags, uint64_t ptr_off, const void *data,
		      size_t len)
{
	struct sdp_rdmo_req r = {
		.hdr = {.id = CLIENT_ID, .op_id = UROM_RDMO_OP_APPEND, .flags = flags}};

	r.append.ptr_addr = (uint64_t)(uintptr_t)(tg.buf + ptr_off);
	r.append.ptr_rkey = tg.ptr_rkey;
	r.append.data_rkey = tg.data_rkey;
	send_op(in, &r, data, len);
}

struct sc {
	uint64_t off; /* into the target buffer */
	uint64_t rkey;
	const void *data;
	uint16_t len;
};

static void op_scatter(struct ini *in, uint32_t flags, const struct sc *e, size_t n)
{
	struct sdp_rdmo_req r = {
		.hdr = {.id = CLIENT_ID, .op_id = UROM_RDMO_OP_SCATTER, .flags = flags}};
	static uint8_t payload[128 << 10];
	size_t off = 0, i;

	r.scatter.count = n;
	for (i = 0; i < n; i++)
		T_OK(sdp_rdmo_scatter_pack(payload, sizeof(payload), &off,
					   (uint64_t)(uintptr_t)(tg.buf + e[i].off), e[i].rkey,
					   e[i].data, e[i].len));
	send_op(in, &r, payload, off);
}

/* FLUSH (FENCE'd or not) and wait for its answer; *status_p, *failed_p from the status. */
static int op_flush(struct ini *in, uint32_t flags, uint64_t id, doca_error_t *status_p,
		    uint64_t *failed_p)
{
	struct sdp_rdmo_req r = {
		.hdr = {.id = CLIENT_ID, .op_id = UROM_RDMO_OP_FLUSH, .flags = flags}};
	int before = in->nrsp;
	struct sdp_rdmo_rsp *rsp;

	r.flush.flush_id = id;
	send_op(in, &r, NULL, 0);
	if (!wait_count(&in->nrsp, before + 1)) {
		t_fail("no answer to FLUSH %lu", (unsigned long)id);
		return -1;
	}
	rsp = &in->rsp[before < MAX_RSP ? before : MAX_RSP - 1];
	if (rsp->flush.flush_id != id || !rsp->has_status) {
		t_fail("FLUSH %lu answered as %lu (status %s)", (unsigned long)id,
		       (unsigned long)rsp->flush.flush_id, rsp->has_status ? "given" : "missing");
		return -1;
	}
	*status_p = (doca_error_t)rsp->status.status;
	*failed_p = rsp->status.failed;
	return 0;
}

/* FLUSH and require the given outcome. */
static void expect_flush(struct ini *in, uint64_t id, doca_error_t want, uint64_t want_failed,
			 const char *what)
{
	doca_error_t st = DOCA_ERROR_UNKNOWN;
	uint64_t failed = 0;

	if (op_flush(in, UROM_RDMO_REQ_FLAG_FENCE, id, &st, &failed) != 0)
		return;
	if (st != want || failed != want_failed)
		t_fail("%s: FLUSH reported %s with %lu failed, expected %s with %lu", what,
		       doca_error_get_name(st), (unsigned long)failed, doca_error_get_name(want),
		       (unsigned long)want_failed);
}

/* The whole target buffer equals the model. */
static void check_buf(const char *what)
{
	size_t i;

	for (i = 0; i < BUF_LEN; i++) {
		if (tg.buf[i] != tg.model[i]) {
			t_fail("%s: target byte %zu is 0x%02x, expected 0x%02x", what, i, tg.buf[i],
			       tg.model[i]);
			return;
		}
	}
}

static void pattern(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

static void set_ptr(uint8_t *base, uint64_t slot_off, uint64_t value)
{
	memcpy(base + slot_off, &value, sizeof(value));
}

static uint64_t va(uint64_t off)
{
	return (uint64_t)(uintptr_t)(tg.buf + off);
}

/* How often needle occurs in the worker logs of this instance. */
static int worker_log_count(const char *needle)
{
	static char buf[1 << 20];
	struct dirent *de;
	DIR *dir = opendir(d.run_dir);
	int n = 0;

	if (dir == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL) {
		char path[PATH_MAX + 300];

		if (strncmp(de->d_name, "worker-", 7) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", d.run_dir, de->d_name);
		if (t_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		for (const char *p = buf; (p = strstr(p, needle)) != NULL; p += strlen(needle))
			n++;
	}
	closedir(dir);
	return n;
}

/* Wait (bounded, progressing) until the worker logs hold needle `want` times. */
static int wait_worker_log(const char *needle, int want)
{
	int64_t deadline = t_now_ms() + T_WAIT_MS;
	int n;

	while ((n = worker_log_count(needle)) < want && t_now_ms() < deadline)
		pump();
	return n >= want;
}

/* ---- the tests ------------------------------------------------------------------------------- */

static void test_commands(struct doca_urom_worker *w)
{
	struct urom_worker_rdmo_cmd cmd;
	struct urom_worker_notify_rdmo n;
	uint8_t big[sizeof(cmd) + 8];
	struct doca_urom_worker *w2 = NULL;
	struct t_worker_cfg cfg = {.plugins = tg.rdmo_id};
	ucp_address_t *a;
	size_t alen;
	uint64_t id = 0, x;

	/* A second CLIENT_INIT on this connection, and the same id from another connection. */
	if (ucp_worker_get_address(tg.uw, &a, &alen) != UCS_OK) {
		t_fail("ucp_worker_get_address failed");
		return;
	}
	T_STATUS(do_client_init(w, CLIENT_ID, a, alen), DOCA_ERROR_ALREADY_EXIST);
	T_STATUS(do_client_init(w, CLIENT_ID + 1, a, alen), DOCA_ERROR_ALREADY_EXIST);
	T_OK(doca_urom_worker_get_id(w, &id));
	cfg.id = id;
	T_OK(t_worker_start(&s, s.pe, &cfg, &w2));
	if (w2 != NULL) {
		struct doca_urom_worker *keep = tg.w;

		/* Commands before a CLIENT_INIT on that connection. */
		tg.w = w2;
		T_STATUS(do_mr_reg(0, 8, &x), DOCA_ERROR_NOT_FOUND);
		T_STATUS(do_rq_destroy(1), DOCA_ERROR_NOT_FOUND);
		T_STATUS(do_client_init(w2, CLIENT_ID, a, alen), DOCA_ERROR_ALREADY_EXIST);
		/* A client of its own (the "other client" the data plane test names later). */
		T_OK(do_client_init(w2, CLIENT_ID + 7, a, alen));
		T_OK(do_mr_reg(0, BUF_LEN, &x));
		T_TRUE(x != 0);
		tg.w = keep;
		t_worker_close(&s, s.pe, w2);
	}
	ucp_worker_release_address(tg.uw, a);

	/* The host half refuses what it cannot send. */
	{
		union doca_data c = {.u64 = 0};

		T_STATUS(urom_rdmo_task_client_init(w, c, 1, NULL, 0, client_init_cb),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rdmo_task_mr_register(w, c, va(0), 8, tg.rkey, 0, NULL, 0, value_cb),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rdmo_task_rq_destroy(w, c, 1, NULL), DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rdmo_task_rq_create(NULL, c, tg.rkey, 8, value_cb),
			 DOCA_ERROR_INVALID_VALUE);
		T_STATUS(urom_rdmo_init(tg.rdmo_id, UROM_WORKER_RDMO_VERSION + 1),
			 DOCA_ERROR_UNSUPPORTED_VERSION);
	}

	/* Raw commands: the notification carries the command's type and the error. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = 99;
	T_STATUS(raw_cmd(&cmd, sizeof(cmd)), DOCA_ERROR_NOT_SUPPORTED);
	T_EQ_INT(raw.len, sizeof(n));
	memcpy(&n, raw.data, sizeof(n));
	T_EQ_INT(n.type, 99);
	T_STATUS(raw_cmd(&cmd, 8), DOCA_ERROR_INVALID_VALUE); /* shorter than the struct */
	T_EQ_INT(raw.len, 0);
	cmd.type = UROM_WORKER_CMD_RDMO_MR_DEREG;
	memcpy(big, &cmd, sizeof(cmd));
	memset(big + sizeof(cmd), 0, 8);
	T_STATUS(raw_cmd(big, sizeof(big)), DOCA_ERROR_INVALID_VALUE); /* bytes after it */
	memcpy(&n, raw.data, sizeof(n));
	T_EQ_INT(n.type, UROM_WORKER_NOTIFY_RDMO_MR_DEREG);
	cmd.type = UROM_WORKER_CMD_RDMO_RQ_CREATE;
	cmd.rq_create.addr_len = 16; /* says 16 inline bytes, carries 8 */
	memcpy(big, &cmd, sizeof(cmd));
	T_STATUS(raw_cmd(big, sizeof(big)), DOCA_ERROR_INVALID_VALUE);
	memcpy(&n, raw.data, sizeof(n));
	T_EQ_INT(n.type, UROM_WORKER_NOTIFY_RDMO_RQ_CREATE);
	cmd.type = UROM_WORKER_CMD_RDMO_MR_REG;
	cmd.mr_reg.va = va(0);
	cmd.mr_reg.len = 0;
	cmd.mr_reg.packed_rkey_len = 8;
	memcpy(big, &cmd, sizeof(cmd));
	T_STATUS(raw_cmd(big, sizeof(big)), DOCA_ERROR_INVALID_VALUE); /* empty range */

	/* Unknown ids. */
	T_STATUS(do_mr_dereg(424242), DOCA_ERROR_NOT_FOUND);
	T_STATUS(do_rq_destroy(424242), DOCA_ERROR_NOT_FOUND);
}

static void test_data_plane(void)
{
	static uint8_t d1[100], d2[1], d3[1000], s1[300], s2[7], s3[65535], s4[18], big[300000];
	struct ini a, b;
	uint64_t rq_a = 0, rq_b = 0, x = 0, ptr, at;

	if (ini_open(&a, 0) != 0) {
		t_fail("initiator set-up failed");
		return;
	}
	T_OK(do_rq_create(&a, &rq_a));
	T_STATUS(do_rq_create(&a, &x), DOCA_ERROR_ALREADY_EXIST);

	/* APPENDs: the pointer (slot 0) starts at the append area. */
	set_ptr(tg.buf, 0, va(APPEND_AREA));
	set_ptr(tg.model, 0, va(APPEND_AREA));
	pattern(d1, sizeof(d1), 1);
	pattern(d2, sizeof(d2), 2);
	pattern(d3, sizeof(d3), 3);
	op_append(&a, 0, 0, d1, sizeof(d1));
	op_append(&a, 0, 0, d2, sizeof(d2));
	op_append(&a, 0, 0, d3, sizeof(d3));
	at = APPEND_AREA;
	memcpy(tg.model + at, d1, sizeof(d1));
	memcpy(tg.model + at + 100, d2, sizeof(d2));
	memcpy(tg.model + at + 101, d3, sizeof(d3));
	at += 1101;
	set_ptr(tg.model, 0, va(at));

	/* SCATTER: four entries, among them the largest length an entry can have. */
	{
		struct sc e[4] = {
			{SCATTER_AREA, tg.data_rkey, s1, sizeof(s1)},
			{SCATTER_AREA + 1000, tg.data_rkey, s2, sizeof(s2)},
			{SCATTER_AREA + 4096, tg.data_rkey, s3, sizeof(s3)},
			{BUF_LEN - sizeof(s4), tg.data_rkey, s4, sizeof(s4)},
		};

		pattern(s1, sizeof(s1), 11);
		pattern(s2, sizeof(s2), 12);
		pattern(s3, sizeof(s3), 13);
		pattern(s4, sizeof(s4), 14);
		op_scatter(&a, 0, e, 4);
		memcpy(tg.model + SCATTER_AREA, s1, sizeof(s1));
		memcpy(tg.model + SCATTER_AREA + 1000, s2, sizeof(s2));
		memcpy(tg.model + SCATTER_AREA + 4096, s3, sizeof(s3));
		memcpy(tg.model + BUF_LEN - sizeof(s4), s4, sizeof(s4));
	}
	expect_flush(&a, 1, DOCA_SUCCESS, 0, "appends and scatter");
	check_buf("after appends and scatter");

	/* FENCE: a SCATTER sets pointer slot 1, the fenced APPEND on it must see that value. */
	{
		uint64_t v = va(SCATTER_AREA + 100000);
		struct sc e = {8, tg.ptr_rkey, &v, sizeof(v)};

		op_scatter(&a, 0, &e, 1);
		pattern(d3, sizeof(d3), 4);
		op_append(&a, UROM_RDMO_REQ_FLAG_FENCE, 8, d3, sizeof(d3));
		memcpy(tg.model + SCATTER_AREA + 100000, d3, sizeof(d3));
		set_ptr(tg.model, 8, v + sizeof(d3));
		expect_flush(&a, 2, DOCA_SUCCESS, 0, "fenced append");
		check_buf("after the fenced append");
	}

	/* The pointer is read once: a change behind the plugin's back is not seen. */
	set_ptr(tg.buf, 0, 1);
	pattern(d1, sizeof(d1), 5);
	op_append(&a, 0, 0, d1, sizeof(d1));
	memcpy(tg.model + at, d1, sizeof(d1));
	at += sizeof(d1);
	set_ptr(tg.model, 0, va(at));
	/* A rendezvous-sized APPEND (larger than any eager threshold). */
	pattern(big, sizeof(big), 6);
	op_append(&a, 0, 0, big, sizeof(big));
	memcpy(tg.model + at, big, sizeof(big));
	at += sizeof(big);
	set_ptr(tg.model, 0, va(at));
	expect_flush(&a, 3, DOCA_SUCCESS, 0, "cached pointer, large append");
	check_buf("after the cached-pointer and large appends");

	/* Out of range: nothing moves, the FLUSH counts the refusals. */
	{
		uint64_t v = va(BUF_LEN - 10);
		struct sc in[2] = {{SCATTER_AREA + 50, tg.data_rkey, s1, 10},
				   {BUF_LEN - 4, tg.data_rkey, s2, 7}};
		struct sc wrong_key = {SCATTER_AREA, tg.ptr_rkey, s1, 10};
		struct sc ptr_slot = {16, tg.ptr_rkey, &v, sizeof(v)};
		struct sc below = {APPEND_AREA - 8, tg.data_rkey, s1, 10};

		op_scatter(&a, 0, in, 2);	  /* second entry crosses the end */
		op_scatter(&a, 0, &wrong_key, 1); /* outside the pointer MR */
		op_scatter(&a, 0, &below, 1);	  /* starts below the data MR */
		expect_flush(&a, 4, DOCA_ERROR_NOT_PERMITTED, 3, "out-of-range scatters");
		check_buf("after out-of-range scatters");

		/* An APPEND whose data would run past the end: pointer and bytes unchanged. */
		op_scatter(&a, 0, &ptr_slot, 1);
		set_ptr(tg.model, 16, v);
		op_append(&a, UROM_RDMO_REQ_FLAG_FENCE, 16, d1, 20);
		expect_flush(&a, 5, DOCA_ERROR_NOT_PERMITTED, 1, "out-of-range append");
		check_buf("after an out-of-range append");
		/* A pointer slot outside the pointer MR. */
		op_append(&a, 0, PTR_AREA, d1, 20);
		expect_flush(&a, 6, DOCA_ERROR_NOT_PERMITTED, 1, "pointer outside its MR");
		check_buf("after an append with a pointer outside its MR");
	}

	/* Malformed operations and a foreign client id: refused, counted. */
	{
		struct sdp_rdmo_req r = {.hdr = {.id = CLIENT_ID, .op_id = UROM_RDMO_OP_SCATTER}};
		uint8_t hdr[UROM_RDMO_HDR_LEN_MAX], junk[40];
		size_t hlen;

		memset(junk, 0xab, sizeof(junk));
		send_raw(&a, junk, 10, NULL, 0); /* header too short */
		r.scatter.count = 1;
		hlen = sdp_rdmo_req_pack(&r, hdr, sizeof(hdr));
		send_raw(&a, hdr, hlen, junk, sizeof(junk)); /* entry runs out of bytes */
		r.hdr.flags = 0x80;
		hlen = sdp_rdmo_req_pack(&r, hdr, sizeof(hdr));
		send_raw(&a, hdr, hlen, junk, sizeof(junk)); /* unknown flag */
		expect_flush(&a, 7, DOCA_ERROR_INVALID_VALUE, 3, "malformed operations");
		r.hdr.flags = 0;
		r.hdr.id = CLIENT_ID + 7; /* well-formed, but another client's (test_commands) */
		{
			static uint8_t p[64];
			size_t off = 0;

			T_OK(sdp_rdmo_scatter_pack(p, sizeof(p), &off, va(SCATTER_AREA),
						   tg.data_rkey, s1, 10));
			send_op(&a, &r, p, off);
		}
		expect_flush(&a, 8, DOCA_ERROR_NOT_PERMITTED, 1, "foreign client id");
		check_buf("after malformed operations");
	}

	/* An initiator without an rq is not heard; after RQ_CREATE it is. */
	if (ini_open(&b, 1) == 0) {
		struct sdp_rdmo_req r = {.hdr = {.id = CLIENT_ID, .op_id = UROM_RDMO_OP_FLUSH}};
		struct sc e = {SCATTER_AREA + 200000, tg.data_rkey, s1, 32};

		r.flush.flush_id = 900;
		op_scatter(&b, 0, &e, 1);
		send_op(&b, &r, NULL, 0);
		/* Dropped when the plugin handles them (no rq yet): wait until it says so. */
		if (!wait_worker_log("from an endpoint no rq was created for", 2))
			t_fail("the plugin did not report the stray operations");
		T_OK(do_rq_create(&b, &rq_b));
		T_TRUE(rq_b != rq_a);
		expect_flush(&b, 901, DOCA_SUCCESS, 0, "second initiator");
		T_EQ_INT(b.nrsp, 1); /* 900 was dropped (it was sent before 901, on one endpoint) */
		check_buf("after the stray initiator");
		/* Both initiators append to the same pointer: one sequence of bytes. */
		pattern(d1, sizeof(d1), 8);
		op_append(&b, 0, 0, d1, sizeof(d1));
		memcpy(tg.model + at, d1, sizeof(d1));
		at += sizeof(d1);
		pattern(d2, sizeof(d2), 9);
		expect_flush(&b, 902, DOCA_SUCCESS, 0, "append from the second initiator");
		op_append(&a, 0, 0, d2, sizeof(d2));
		memcpy(tg.model + at, d2, sizeof(d2));
		at += sizeof(d2);
		set_ptr(tg.model, 0, va(at));
		expect_flush(&a, 9, DOCA_SUCCESS, 0, "append after the second initiator's");
		check_buf("after appends from two initiators");
		T_OK(do_rq_destroy(rq_b));
		T_STATUS(do_rq_destroy(rq_b), DOCA_ERROR_NOT_FOUND);
		ini_close(&b, 1);
	} else {
		t_fail("second initiator set-up failed");
	}

	/* MR_DEREG, then use: refused, nothing moves; a second MR_DEREG finds nothing. */
	T_OK(do_mr_dereg(tg.data_rkey));
	T_STATUS(do_mr_dereg(tg.data_rkey), DOCA_ERROR_NOT_FOUND);
	{
		struct sc e = {SCATTER_AREA, tg.data_rkey, s1, 10};

		op_scatter(&a, 0, &e, 1);
		op_append(&a, 0, 0, d1, 10);
		expect_flush(&a, 10, DOCA_ERROR_NOT_FOUND, 2, "deregistered rkey id");
		check_buf("after use of a deregistered rkey id");
	}
	/* Registering the range again gives a new id that works. */
	ptr = tg.data_rkey;
	T_OK(do_mr_reg(APPEND_AREA, BUF_LEN - APPEND_AREA, &tg.data_rkey));
	T_TRUE(tg.data_rkey != ptr);
	pattern(d1, sizeof(d1), 10);
	op_append(&a, 0, 0, d1, sizeof(d1));
	memcpy(tg.model + at, d1, sizeof(d1));
	at += sizeof(d1);
	set_ptr(tg.model, 0, va(at));
	expect_flush(&a, 11, DOCA_SUCCESS, 0, "append with a new rkey id");
	check_buf("after an append with a new rkey id");

	T_OK(do_rq_destroy(rq_a));
	ini_close(&a, 0);
}

/* Start argv with stdout on a pipe (*out_p, non-blocking read end); its pid, -1 on failure. */
static pid_t spawn(char *const argv[], int *out_p)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	*out_p = fds[0];
	return pid;
}

/* Read what fd has into buf (NUL-terminated, appended at *len_p) until needle shows, bounded. */
static int read_until(int fd, char *buf, size_t cap, size_t *len_p, const char *needle,
		      int timeout_ms)
{
	int64_t deadline = t_now_ms() + timeout_ms;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n;

	while (strstr(buf, needle) == NULL) {
		int64_t left = deadline - t_now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return 0;
		n = read(fd, buf + *len_p, cap - 1 - *len_p);
		if (n <= 0)
			return strstr(buf, needle) != NULL;
		*len_p += (size_t)n;
		buf[*len_p] = '\0';
	}
	return 1;
}

/* The sample as two processes against this daemon: both exit 0, the server says PASS. */
static void test_sample(void)
{
	const char *bin = getenv("SDP_TEST_RDMO_SAMPLE");
	char srv_out[8192] = "", cli_out[4096] = "", port[16];
	size_t srv_len = 0, cli_len = 0;
	int srv_fd = -1, cli_fd = -1, st_srv = -1, st_cli = -1;
	pid_t srv, cli;
	const char *at;

	if (bin == NULL) {
		t_fail("SDP_TEST_RDMO_SAMPLE is not set");
		return;
	}
	{
		char *argv[] = {(char *)bin, "-m", "server", "-p", "0", "-t", "20", NULL};

		srv = spawn(argv, &srv_fd);
	}
	if (srv < 0) {
		t_fail("cannot start the sample server");
		return;
	}
	if (!read_until(srv_fd, srv_out, sizeof(srv_out), &srv_len,
			"listening on 127.0.0.1:", T_WAIT_MS) ||
	    (at = strstr(srv_out, "listening on 127.0.0.1:")) == NULL ||
	    sscanf(at + strlen("listening on 127.0.0.1:"), "%15[0-9]", port) != 1) {
		t_fail("the sample server did not say where it listens: %s", srv_out);
		kill(srv, SIGKILL);
		t_wait_child(srv, 5000, &st_srv);
		close(srv_fd);
		return;
	}
	{
		char *argv[] = {(char *)bin, "-m", "client", "-p", port, "-t", "20", NULL};

		cli = spawn(argv, &cli_fd);
	}
	if (cli < 0) {
		t_fail("cannot start the sample client");
	} else {
		(void)read_until(cli_fd, cli_out, sizeof(cli_out), &cli_len,
				 "urom_rdmo client: ", 30000);
		if (!t_wait_child(cli, 30000, &st_cli)) {
			t_fail("the sample client did not exit");
			kill(cli, SIGKILL);
			t_wait_child(cli, 5000, &st_cli);
		}
		(void)read_until(cli_fd, cli_out, sizeof(cli_out), &cli_len, "\n", 1000);
		close(cli_fd);
	}
	(void)read_until(srv_fd, srv_out, sizeof(srv_out), &srv_len, "urom_rdmo server: P", 30000);
	if (!t_wait_child(srv, 30000, &st_srv)) {
		t_fail("the sample server did not exit");
		kill(srv, SIGKILL);
		t_wait_child(srv, 5000, &st_srv);
	}
	close(srv_fd);
	if (!WIFEXITED(st_srv) || WEXITSTATUS(st_srv) != 0 || !WIFEXITED(st_cli) ||
	    WEXITSTATUS(st_cli) != 0)
		t_fail("sample exit status: server 0x%x, client 0x%x", st_srv, st_cli);
	if (strstr(srv_out, "urom_rdmo server: PASS") == NULL)
		t_fail("the sample server did not print PASS:\n%s", srv_out);
	if (strstr(cli_out, "urom_rdmo client: PASS") == NULL)
		t_fail("the sample client did not print PASS:\n%s", cli_out);
}

/*
 * The worker half loaded here, without the runtime: entry points, addr's two calls, commands
 * through worker_cmd / progress, and notif_pack's capacity check.
 */
static void test_plugin_direct(void)
{
	doca_error_t (*get_iface)(struct urom_plugin_iface *);
	doca_error_t (*get_version)(uint64_t *);
	softdpu_plugin_wakeup_fd_t wakeup_fd;
	softdpu_plugin_arm_t arm;
	struct urom_worker_cmd_desc *desc;
	struct urom_worker_notif_desc *nd;
	struct urom_worker_notify_rdmo n;
	struct urom_worker_rdmo_cmd cmd;
	struct urom_plugin_iface iface;
	struct urom_worker_ctx ctx;
	ucs_list_link_t list;
	uint8_t packed[4096];
	char path[PATH_MAX];
	size_t len = 0, need;
	uint64_t version = 0;
	void *dl;

	snprintf(path, sizeof(path), "%s/worker_rdmo.so", getenv("UROM_PLUGIN_PATH"));
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		t_fail("dlopen %s: %s", path, dlerror());
		return;
	}
	*(void **)&get_iface = dlsym(dl, "urom_plugin_get_iface");
	*(void **)&get_version = dlsym(dl, "urom_plugin_get_version");
	*(void **)&wakeup_fd = dlsym(dl, SOFTDPU_PLUGIN_WAKEUP_FD_SYMBOL);
	*(void **)&arm = dlsym(dl, SOFTDPU_PLUGIN_ARM_SYMBOL);
	if (get_iface == NULL || get_version == NULL || wakeup_fd == NULL || arm == NULL) {
		t_fail("worker_rdmo.so lacks its entry points");
		dlclose(dl);
		return;
	}
	T_STATUS(get_iface(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(get_version(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(get_version(&version));
	T_EQ_INT(version, UROM_WORKER_RDMO_VERSION);
	T_OK(get_iface(&iface));
	memset(&ctx, 0, sizeof(ctx));
	ctx.iface = iface;
	if (iface.open(&ctx) != DOCA_SUCCESS) {
		t_fail("worker_rdmo open failed");
		dlclose(dl);
		return;
	}

	/* The wakeup extension: a descriptor to sleep on, armed when nothing is pending. */
	{
		int fd = -1, i;
		doca_error_t st = DOCA_ERROR_AGAIN;

		T_STATUS(wakeup_fd(&ctx, NULL), DOCA_ERROR_INVALID_VALUE);
		T_OK(wakeup_fd(&ctx, &fd));
		T_TRUE(fd >= 0);
		ucs_list_head_init(&list);
		for (i = 0; i < 100 && st == DOCA_ERROR_AGAIN; i++) {
			(void)iface.progress(&ctx, &list);
			st = arm(&ctx);
		}
		T_OK(st);
		T_STATUS(arm(NULL), DOCA_ERROR_INVALID_VALUE);
	}

	/* addr: the size first, then the copy. */
	T_STATUS(iface.addr(&ctx, NULL, &len), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(len > 0 && len <= sizeof(packed));
	need = len;
	len = need - 1;
	T_STATUS(iface.addr(&ctx, packed, &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(len, need);
	T_OK(iface.addr(&ctx, packed, &len));
	T_EQ_INT(len, need);

	/* A CLIENT_INIT with the target's address: its notification carries the plugin's. */
	{
		ucp_address_t *a;
		size_t alen;

		T_TRUE(ucp_worker_get_address(tg.uw, &a, &alen) == UCS_OK);
		desc = calloc(1, sizeof(*desc) + sizeof(cmd) + alen);
		memset(&cmd, 0, sizeof(cmd));
		cmd.type = UROM_WORKER_CMD_RDMO_CLIENT_INIT;
		cmd.client_init.id = 77;
		cmd.client_init.addr_len = alen;
		desc->dest_id = 5;
		desc->worker_cmd.type = 0x40;
		desc->worker_cmd.urom_context = 0xc0ffee;
		desc->worker_cmd.len = sizeof(cmd) + alen;
		memcpy(desc->worker_cmd.plugin_cmd, &cmd, sizeof(cmd));
		memcpy(desc->worker_cmd.plugin_cmd + sizeof(cmd), a, alen);
		ucp_worker_release_address(tg.uw, a);
	}
	ucs_list_head_init(&list);
	ucs_list_add_tail(&list, &desc->entry);
	T_OK(iface.worker_cmd(&ctx, &list));
	T_TRUE(ucs_list_is_empty(&list)); /* taken, and freed by the plugin */
	ucs_list_head_init(&list);
	T_OK(iface.progress(&ctx, &list));
	if (ucs_list_is_empty(&list)) {
		t_fail("no notification for CLIENT_INIT");
	} else {
		nd = ucs_list_extract_head(&list, struct urom_worker_notif_desc, entry);
		T_TRUE(ucs_list_is_empty(&list)); /* exactly one */
		T_EQ_INT(nd->dest_id, 5);
		T_EQ_INT(nd->worker_notif.type, 0x40);
		T_EQ_INT(nd->worker_notif.urom_context, 0xc0ffee);
		T_OK(nd->worker_notif.status);
		T_EQ_INT(nd->worker_notif.len, sizeof(n) + need);
		/* notif_pack: too small a buffer is refused, the right size packs. */
		len = sizeof(struct urom_worker_notify) + sizeof(n) + need - 1;
		T_STATUS(iface.notif_pack(&nd->worker_notif, &len, packed), DOCA_ERROR_TOO_BIG);
		len = sizeof(packed);
		T_OK(iface.notif_pack(&nd->worker_notif, &len, packed));
		T_EQ_INT(len, sizeof(struct urom_worker_notify) + sizeof(n) + need);
		memcpy(&n, packed + sizeof(struct urom_worker_notify), sizeof(n));
		T_EQ_INT(n.type, UROM_WORKER_NOTIFY_RDMO_CLIENT_INIT);
		T_TRUE(n.client_init.addr == NULL); /* a pointer means nothing on the wire */
		T_EQ_INT(n.client_init.addr_len, need);
		T_STATUS(iface.notif_pack(NULL, &len, packed), DOCA_ERROR_INVALID_VALUE);
		free(nd);
	}
	ucs_list_head_init(&list);
	T_STATUS(iface.progress(&ctx, &list), DOCA_ERROR_EMPTY);
	T_STATUS(iface.worker_cmd(NULL, &list), DOCA_ERROR_INVALID_VALUE);
	iface.close(&ctx);
	T_TRUE(ctx.plugin_ctx == NULL);
	dlclose(dl);
}

/* No worker of this instance reported a sanitizer error in its log. */
static void check_worker_logs(void)
{
	struct dirent *de;
	DIR *dir = opendir(d.run_dir);
	static char buf[1 << 20];

	if (dir == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		char path[PATH_MAX + 300];

		if (strncmp(de->d_name, "worker-", 7) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", d.run_dir, de->d_name);
		if (t_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		if (strstr(buf, "Sanitizer") != NULL || strstr(buf, "runtime error") != NULL) {
			t_fail("worker log %s reports a sanitizer error", de->d_name);
			t_print_log_tail("worker log", path, 6000);
		} else if (t_failures > 0) {
			t_print_log_tail("worker log", path, 6000);
		}
	}
	closedir(dir);
}

int main(void)
{
	const struct doca_urom_service_plugin_info *plugins;
	struct t_worker_cfg cfg = {.id = DOCA_UROM_WORKER_ID_ANY};
	ucp_mem_map_params_t mp;
	ucp_address_t *a = NULL;
	size_t n = 0, alen = 0, i;

	tg.buf = aligned_alloc(4096, BUF_LEN);
	tg.model = malloc(BUF_LEN);
	if (tg.buf == NULL || tg.model == NULL)
		return T_EXIT_FAIL;
	memset(tg.buf, FILL, BUF_LEN);
	memset(tg.model, FILL, BUF_LEN);

	if (t_uromd_start(&d, NULL) != 0)
		return T_EXIT_FAIL;
	printf("UCX_TLS=%s\n", getenv("UCX_TLS") ? getenv("UCX_TLS") : "(default)");
	if (t_svc_open(&s, 0) != DOCA_SUCCESS ||
	    doca_urom_service_get_plugins_list(s.svc, &plugins, &n) != DOCA_SUCCESS) {
		t_fail("service start failed");
		goto out;
	}
	for (i = 0; i < n; i++)
		if (strcmp(plugins[i].plugin_name, "worker_rdmo") == 0)
			break;
	if (i == n) {
		t_fail("the service offers no worker_rdmo");
		goto out;
	}
	tg.rdmo_id = plugins[i].id;
	T_OK(urom_rdmo_init(plugins[i].id, plugins[i].version));
	cfg.plugins = tg.rdmo_id;
	T_OK(t_worker_start(&s, s.pe, &cfg, &tg.w));
	if (tg.w == NULL)
		goto out;

	/* The target: its memory mapped and packed for the plugin. */
	if (ucx_open(UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP, &tg.ctx, &tg.uw, &tg.efd) != 0) {
		t_fail("target UCX set-up failed");
		goto out_worker;
	}
	memset(&mp, 0, sizeof(mp));
	mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	mp.address = tg.buf;
	mp.length = BUF_LEN;
	if (ucp_mem_map(tg.ctx, &mp, &tg.memh) != UCS_OK ||
	    ucp_rkey_pack(tg.ctx, tg.memh, &tg.rkey, &tg.rkey_len) != UCS_OK ||
	    ucp_worker_get_address(tg.uw, &a, &alen) != UCS_OK) {
		t_fail("mapping the target buffer failed");
		goto out_worker;
	}

	/* CLIENT_INIT: the plugin's address comes back. */
	T_OK(do_client_init(tg.w, CLIENT_ID, a, alen));
	ucp_worker_release_address(tg.uw, a);
	T_TRUE(last.addr_len > 0);
	memcpy(tg.plugin_addr, last.addr, last.addr_len);
	tg.plugin_addr_len = last.addr_len;

	T_OK(do_mr_reg(0, PTR_AREA, &tg.ptr_rkey));
	T_OK(do_mr_reg(APPEND_AREA, BUF_LEN - APPEND_AREA, &tg.data_rkey));
	T_TRUE(tg.ptr_rkey != tg.data_rkey && tg.ptr_rkey != 0 && tg.data_rkey != 0);

	test_commands(tg.w);
	test_data_plane();
	check_buf("at the end");
	test_sample();
	test_plugin_direct();

out_worker:
	t_worker_close(&s, s.pe, tg.w);
	T_EQ_INT(t_uromd_wait_workers(&d, 0, 5000), 0);
	check_worker_logs();
	if (tg.rkey != NULL)
		ucp_rkey_buffer_release(tg.rkey);
	if (tg.memh != NULL)
		ucp_mem_unmap(tg.ctx, tg.memh);
	if (tg.uw != NULL)
		ucp_worker_destroy(tg.uw);
	if (tg.ctx != NULL)
		ucp_cleanup(tg.ctx);
out:
	t_svc_close(&s);
	t_uromd_stop(&d);
	free(tg.buf);
	free(tg.model);
	T_DONE();
}
