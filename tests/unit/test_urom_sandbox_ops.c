/*
 * worker_sandbox's worker half driven directly (no service, no worker process): two instances
 * of the plugin open in this process, each with its own UCP worker, and a domain lookup that
 * knows them as domain workers 0 and 1. Checked: the iface and version, the addr op's two-call
 * protocol, tagged sends and receives between the two (inline data byte for byte, receives
 * posted before and after the send, tag masks, a non-matching receive that stays pending until
 * its sender comes, send order, zero-length and truncated messages), and the refusals: unknown
 * destination, inline receive larger than a notification, command lengths that disagree with
 * the command, unknown memh ids and command types, undersized notif_pack buffers. Every
 * notification goes through notif_pack and is checked as the host would see it.
 *
 * usage: test_urom_sandbox_ops <worker_sandbox.so>
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <dlfcn.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doca_urom_plugin.h"
#include "doca_version.h"
#include "t_helpers.h"
#include "worker_sandbox.h"

#define PLUGIN_ID 0x4ull /* the command type the runtime would route by */
#define HOST_DEST 77	 /* dest_id of the host connection the answers go to */
#define OTHER_DEST 78	 /* a second host connected to the same worker */
#define MSG_SIZE 4096	 /* the runtime's default message size */
#define WAIT_MS 5000
#define PENDING_MS 100 /* how long a receive that must not complete is watched */
#define NOTIFY_HDR 32
#define MAX_INLINE_RECV (MSG_SIZE - NOTIFY_HDR - sizeof(struct urom_worker_notify_sandbox))

typedef doca_error_t (*get_iface_fn)(struct urom_plugin_iface *iface);
typedef doca_error_t (*get_version_fn)(uint64_t *version);
typedef doca_error_t (*wakeup_fd_fn)(struct urom_worker_ctx *ctx, int *fd);
typedef doca_error_t (*arm_fn)(struct urom_worker_ctx *ctx);

/* One plugin instance (one worker) and the notifications it produced so far. */
struct peer {
	struct urom_worker_ctx ctx;
	void *addr;
	size_t addr_len;
	ucs_list_link_t notifs;
};

static struct urom_plugin_iface iface;
static wakeup_fd_fn plugin_wakeup_fd; /* softdpu/urom_plugin.h */
static arm_fn plugin_arm;
static struct peer peers[2];
static int member_of[2] = {0, 1}; /* domain id -> instance: a "new domain" may swap them */
static uint64_t next_context = 1000;
static uint64_t host_dest = HOST_DEST; /* the host connection commands come from */

/* The domain: members 0 and 1 are the two instances; anything else is unknown. */
static doca_error_t lookup_addr(struct urom_worker_ctx *ctx, uint64_t domain_id, void **addr)
{
	(void)ctx;
	if (addr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (domain_id >= 2 || peers[member_of[domain_id]].addr == NULL)
		return DOCA_ERROR_NOT_FOUND;
	*addr = peers[member_of[domain_id]].addr;
	return DOCA_SUCCESS;
}

static doca_error_t lookup_seg(struct urom_worker_ctx *ctx, uint64_t domain_id, uint64_t va,
			       int *seg)
{
	(void)ctx;
	(void)domain_id;
	(void)va;
	(void)seg;
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t lookup_key(struct urom_worker_ctx *ctx, uint64_t domain_id, int seg,
			       size_t *len, void **key)
{
	(void)ctx;
	(void)domain_id;
	(void)seg;
	(void)len;
	(void)key;
	return DOCA_ERROR_NOT_FOUND;
}

static void nap_ms(int ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};

	nanosleep(&ts, NULL);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Hand one command to p: cmd, then inline bytes; len_override >= 0 replaces the header len. */
static doca_error_t submit_raw(struct peer *p, uint64_t urom_context, const void *cmd,
			       size_t cmd_len, const void *inline_data, size_t inline_len,
			       long long len_override)
{
	struct urom_worker_cmd_desc *desc = calloc(1, sizeof(*desc) + cmd_len + inline_len);
	ucs_list_link_t list;

	if (desc == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(T_EXIT_FAIL);
	}
	desc->dest_id = host_dest;
	desc->worker_cmd.type = PLUGIN_ID;
	desc->worker_cmd.urom_context = urom_context;
	desc->worker_cmd.len = len_override >= 0 ? (uint64_t)len_override : cmd_len + inline_len;
	memcpy(desc->worker_cmd.plugin_cmd, cmd, cmd_len);
	if (inline_len > 0)
		memcpy(desc->worker_cmd.plugin_cmd + cmd_len, inline_data, inline_len);
	ucs_list_head_init(&list);
	ucs_list_add_tail(&list, &desc->entry);
	return iface.worker_cmd(&p->ctx, &list);
}

static doca_error_t submit(struct peer *p, uint64_t urom_context,
			   const struct urom_worker_sandbox_cmd *cmd, const void *inline_data,
			   size_t inline_len)
{
	return submit_raw(p, urom_context, cmd, sizeof(*cmd), inline_data, inline_len, -1);
}

/* Progress instance i once, collecting what it notifies. */
static void progress_one(int i)
{
	ucs_list_link_t list;
	doca_error_t st;
	int round;

	for (round = 0; round < 8; round++) {
		ucs_list_head_init(&list);
		st = iface.progress(&peers[i].ctx, &list);
		if (st != DOCA_SUCCESS && st != DOCA_ERROR_EMPTY)
			t_fail("progress of instance %d: %s", i, doca_error_get_name(st));
		if (ucs_list_is_empty(&list))
			break;
		ucs_list_splice_tail(&peers[i].notifs, &list);
	}
}

/* Progress both instances once. */
static void progress_all(void)
{
	progress_one(0);
	progress_one(1);
}

static struct urom_worker_notif_desc *find_notif(struct peer *p, uint64_t urom_context)
{
	struct urom_worker_notif_desc *desc;

	ucs_list_for_each(desc, &p->notifs, entry)
		if (desc->worker_notif.urom_context == urom_context)
			return desc;
	return NULL;
}

/* A packed notification as the host receives it. */
struct packed {
	struct urom_worker_notify hdr;
	struct urom_worker_notify_sandbox n; /* valid when has_payload */
	int has_payload;
	uint8_t data[MSG_SIZE];
	size_t data_len;
};

/*
 * Wait (bounded) for p's notification of urom_context, pack it with notif_pack and check the
 * header fields every notification must carry. 0 when it came, -1 (and a failure) if not.
 */
static int wait_notif(struct peer *p, uint64_t urom_context, struct packed *out)
{
	static uint8_t buf[MSG_SIZE];
	int64_t deadline = now_ms() + WAIT_MS;
	struct urom_worker_notif_desc *desc;
	size_t len = sizeof(buf);
	doca_error_t st;

	for (;;) {
		progress_all();
		desc = find_notif(p, urom_context);
		if (desc != NULL)
			break;
		if (now_ms() >= deadline) {
			t_fail("no notification for context %" PRIu64 " within %d ms", urom_context,
			       WAIT_MS);
			return -1;
		}
		nap_ms(1);
	}
	ucs_list_del(&desc->entry);

	st = iface.notif_pack(&desc->worker_notif, &len, buf);
	memset(out, 0, sizeof(*out));
	if (st != DOCA_SUCCESS) {
		t_fail("notif_pack of context %" PRIu64 ": %s", urom_context,
		       doca_error_get_name(st));
		free(desc);
		return -1;
	}
	if (len != NOTIFY_HDR + desc->worker_notif.len)
		t_fail("packed %zu bytes, expected %d + %" PRIu64, len, NOTIFY_HDR,
		       (uint64_t)desc->worker_notif.len);
	memcpy(&out->hdr, buf, NOTIFY_HDR);
	if (desc->dest_id != host_dest)
		t_fail("notification for dest %" PRIu64 ", expected %" PRIu64, desc->dest_id,
		       host_dest);
	if (out->hdr.type != PLUGIN_ID || out->hdr.urom_context != urom_context)
		t_fail("notification header type %" PRIu64 " context %" PRIu64, out->hdr.type,
		       out->hdr.urom_context);
	if (len >= NOTIFY_HDR + sizeof(out->n)) {
		out->has_payload = 1;
		memcpy(&out->n, buf + NOTIFY_HDR, sizeof(out->n));
		out->data_len = len - NOTIFY_HDR - sizeof(out->n);
		memcpy(out->data, buf + NOTIFY_HDR + sizeof(out->n), out->data_len);
	} else if (len != NOTIFY_HDR) {
		t_fail("packed notification of %zu bytes: neither header-only nor a payload", len);
	}
	free(desc);
	return 0;
}

/* Progress for PENDING_MS and fail if p's notification of urom_context arrives. */
static void expect_pending(struct peer *p, uint64_t urom_context)
{
	int64_t deadline = now_ms() + PENDING_MS;

	while (now_ms() < deadline) {
		progress_all();
		if (find_notif(p, urom_context) != NULL) {
			t_fail("context %" PRIu64 " completed, expected it still pending",
			       urom_context);
			return;
		}
		nap_ms(2);
	}
}

/*
 * Every command answered exactly once: after a while of progress nothing is left in p's list
 * that no check took (a second notification of a command would be).
 */
static void expect_no_leftover(struct peer *p, const char *when)
{
	struct urom_worker_notif_desc *desc;

	expect_pending(p, UINT64_MAX); /* progress for a while; no command has that context */
	while (!ucs_list_is_empty(&p->notifs)) {
		desc = ucs_list_extract_head(&p->notifs, struct urom_worker_notif_desc, entry);
		t_fail("%s: an extra notification for context %" PRIu64 " (status %s)", when,
		       (uint64_t)desc->worker_notif.urom_context,
		       doca_error_get_name(desc->worker_notif.status));
		free(desc);
	}
}

/* ---- command builders ---------------------------------------------------------------------- */

static uint64_t post_recv(struct peer *p, uint64_t ctx_value, uint64_t count, uint64_t tag,
			  uint64_t mask, uint64_t memh_id, uint64_t buffer)
{
	struct urom_worker_sandbox_cmd cmd;
	uint64_t urom_context = next_context++;

	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_TAG_RECV;
	cmd.tag_recv.context = ctx_value;
	cmd.tag_recv.buffer = buffer;
	cmd.tag_recv.count = count;
	cmd.tag_recv.tag = tag;
	cmd.tag_recv.tag_mask = mask;
	cmd.tag_recv.memh_id = memh_id;
	(void)submit(p, urom_context, &cmd, NULL, 0);
	return urom_context;
}

static uint64_t post_send(struct peer *p, uint64_t ctx_value, uint64_t dest, const void *data,
			  uint64_t count, uint64_t tag)
{
	struct urom_worker_sandbox_cmd cmd;
	uint64_t urom_context = next_context++;

	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_TAG_SEND;
	cmd.tag_send.context = ctx_value;
	cmd.tag_send.dest = dest;
	cmd.tag_send.buffer = (uint64_t)(uintptr_t)data;
	cmd.tag_send.count = count;
	cmd.tag_send.tag = tag;
	cmd.tag_send.memh_id = 0;
	(void)submit(p, urom_context, &cmd, data, count);
	return urom_context;
}

static void fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

/* The send notification of urom_context must say success with context ctx_value. */
static void check_send_ok(struct peer *p, uint64_t urom_context, uint64_t ctx_value)
{
	struct packed pk;

	if (wait_notif(p, urom_context, &pk) != 0)
		return;
	if (pk.hdr.status != DOCA_SUCCESS || !pk.has_payload ||
	    pk.n.type != UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND ||
	    pk.n.tag_send.context != ctx_value || pk.n.tag_send.status != UCS_OK ||
	    pk.data_len != 0)
		t_fail("send %" PRIu64 ": status %s, payload %d, type %" PRIu64
		       ", context %#" PRIx64 ", ucs %d",
		       urom_context, doca_error_get_name(pk.hdr.status), pk.has_payload, pk.n.type,
		       pk.n.tag_send.context, (int)pk.n.tag_send.status);
}

/* The inline receive of urom_context must have brought exactly want[0..len) with tag. */
static void check_recv_ok(struct peer *p, uint64_t urom_context, uint64_t ctx_value,
			  const uint8_t *want, size_t len, uint64_t tag)
{
	struct packed pk;

	if (wait_notif(p, urom_context, &pk) != 0)
		return;
	if (pk.hdr.status != DOCA_SUCCESS || !pk.has_payload ||
	    pk.n.type != UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV ||
	    pk.n.tag_recv.context != ctx_value || pk.n.tag_recv.status != UCS_OK ||
	    pk.n.tag_recv.buffer == NULL) {
		t_fail("recv %" PRIu64 ": status %s, payload %d, type %" PRIu64
		       ", context %#" PRIx64 ", ucs %d, buffer %p",
		       urom_context, doca_error_get_name(pk.hdr.status), pk.has_payload, pk.n.type,
		       pk.n.tag_recv.context, (int)pk.n.tag_recv.status, pk.n.tag_recv.buffer);
		return;
	}
	if (pk.n.tag_recv.count != len || pk.data_len != len)
		t_fail("recv %" PRIu64 ": count %" PRIu64 " with %zu inline bytes, expected %zu",
		       urom_context, pk.n.tag_recv.count, pk.data_len, len);
	else if (len > 0 && memcmp(pk.data, want, len) != 0)
		t_fail("recv %" PRIu64 ": the %zu bytes differ from what was sent", urom_context,
		       len);
	if (pk.n.tag_recv.sender_tag != tag)
		t_fail("recv %" PRIu64 ": sender tag %#" PRIx64 ", expected %#" PRIx64,
		       urom_context, pk.n.tag_recv.sender_tag, tag);
}

/* A refusal with payload: the status, the notification type and the echoed context. */
static void check_refused(struct peer *p, uint64_t urom_context, doca_error_t want, uint64_t type,
			  uint64_t ctx_value)
{
	struct packed pk;

	if (wait_notif(p, urom_context, &pk) != 0)
		return;
	if (pk.hdr.status != want)
		t_fail("context %" PRIu64 ": expected %s, got %s", urom_context,
		       doca_error_get_name(want), doca_error_get_name(pk.hdr.status));
	if (!pk.has_payload || pk.n.type != type || pk.data_len != 0) {
		t_fail("context %" PRIu64 ": payload %d type %" PRIu64
		       " (+%zu), expected type %" PRIu64,
		       urom_context, pk.has_payload, pk.n.type, pk.data_len, type);
		return;
	}
	/* The context sits first in every notification struct of the union. */
	if (pk.n.mem_map.context != ctx_value)
		t_fail("context %" PRIu64 ": echoed %#" PRIx64 ", expected %#" PRIx64, urom_context,
		       pk.n.mem_map.context, ctx_value);
	if (type == UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND && pk.n.tag_send.status == UCS_OK)
		t_fail("context %" PRIu64 ": refused send with UCX status OK", urom_context);
	if (type == UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV &&
	    (pk.n.tag_recv.status == UCS_OK || pk.n.tag_recv.buffer != NULL ||
	     pk.n.tag_recv.count != 0))
		t_fail("context %" PRIu64
		       ": refused recv with status %d, buffer %p, count %" PRIu64,
		       urom_context, (int)pk.n.tag_recv.status, pk.n.tag_recv.buffer,
		       pk.n.tag_recv.count);
}

/* A header-only refusal. */
static void check_bare(struct peer *p, uint64_t urom_context, doca_error_t want)
{
	struct packed pk;

	if (wait_notif(p, urom_context, &pk) != 0)
		return;
	if (pk.hdr.status != want || pk.has_payload || pk.hdr.len != 0)
		t_fail("context %" PRIu64 ": expected a header-only %s, got %s with %" PRIu64
		       " payload bytes",
		       urom_context, doca_error_get_name(want), doca_error_get_name(pk.hdr.status),
		       (uint64_t)pk.hdr.len);
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_entry_points(void *dl)
{
	get_version_fn get_version = (get_version_fn)dlsym(dl, "urom_plugin_get_version");
	get_iface_fn get_iface = (get_iface_fn)dlsym(dl, "urom_plugin_get_iface");
	uint64_t version = 0;

	if (get_version == NULL || get_iface == NULL) {
		fprintf(stderr, "worker_sandbox.so lacks the plugin entry points\n");
		exit(T_EXIT_FAIL);
	}
	T_STATUS(get_version(NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(get_iface(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(get_version(&version));
	T_EQ_INT(version, UROM_WORKER_SANDBOX_VERSION);
	T_OK(get_iface(&iface));
	T_EQ_INT(iface.__doca_api_version, DOCA_VERSION_EXACT);
	T_TRUE(iface.open != NULL && iface.close != NULL && iface.addr != NULL &&
	       iface.worker_cmd != NULL && iface.progress != NULL && iface.notif_pack != NULL);

	/* softdpu's optional wakeup entry points: both or none, here both. */
	plugin_wakeup_fd = (wakeup_fd_fn)dlsym(dl, "softdpu_plugin_wakeup_fd");
	plugin_arm = (arm_fn)dlsym(dl, "softdpu_plugin_arm");
	if (plugin_wakeup_fd == NULL || plugin_arm == NULL) {
		fprintf(stderr, "worker_sandbox.so lacks softdpu_plugin_wakeup_fd/arm\n");
		exit(T_EXIT_FAIL);
	}
}

static void open_peer(struct peer *p)
{
	size_t len = 0;
	doca_error_t st;

	memset(p, 0, sizeof(*p));
	ucs_list_head_init(&p->notifs);
	p->ctx.iface = iface;
	p->ctx.domain_iface.addr_lookup = lookup_addr;
	p->ctx.domain_iface.seg_lookup = lookup_seg;
	p->ctx.domain_iface.memh_lookup = lookup_key;
	p->ctx.domain_iface.mkey_lookup = lookup_key;
	st = iface.open(&p->ctx);
	if (st != DOCA_SUCCESS) {
		fprintf(stderr, "open: %s\n", doca_error_get_name(st));
		exit(T_EXIT_FAIL);
	}

	/* The addr op's two calls: the size first, then the bytes. */
	T_STATUS(iface.addr(&p->ctx, NULL, &len), DOCA_ERROR_INVALID_VALUE);
	T_TRUE(len > 0);
	p->addr = calloc(1, len + 8);
	p->addr_len = len;
	len -= 1;
	T_STATUS(iface.addr(&p->ctx, p->addr, &len), DOCA_ERROR_INVALID_VALUE);
	T_EQ_INT(len, p->addr_len);
	T_OK(iface.addr(&p->ctx, p->addr, &len));
	T_EQ_INT(len, p->addr_len);
	T_STATUS(iface.addr(&p->ctx, p->addr, NULL), DOCA_ERROR_INVALID_VALUE);
}

static void close_peer(struct peer *p)
{
	struct urom_worker_notif_desc *desc;

	iface.close(&p->ctx);
	while (!ucs_list_is_empty(&p->notifs)) {
		desc = ucs_list_extract_head(&p->notifs, struct urom_worker_notif_desc, entry);
		t_fail("notification of context %" PRIu64 " was never checked",
		       (uint64_t)desc->worker_notif.urom_context);
		free(desc);
	}
	free(p->addr);
}

/* Receive posted before and after the send, both directions, and to oneself. */
static void test_inline_exchange(void)
{
	uint8_t a[1000], b[1000], c[3000];
	uint64_t r, s;

	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	fill(c, sizeof(c), 3);

	/* Posted before: 0 waits, 1 sends. */
	r = post_recv(&peers[0], 0xdead, sizeof(a), 0x1234, 0xffff, 0, 0);
	expect_pending(&peers[0], r);
	s = post_send(&peers[1], 0xbeef, 0, a, sizeof(a), 0x1234);
	check_send_ok(&peers[1], s, 0xbeef);
	check_recv_ok(&peers[0], r, 0xdead, a, sizeof(a), 0x1234);

	/* Posted after: the message waits in UCX until a receive matches it. */
	s = post_send(&peers[0], 0xbeef, 1, b, sizeof(b), 0x5678);
	check_send_ok(&peers[0], s, 0xbeef);
	r = post_recv(&peers[1], 0xdead, sizeof(b), 0x5678, 0xffff, 0, 0);
	check_recv_ok(&peers[1], r, 0xdead, b, sizeof(b), 0x5678);

	/* To oneself, with a receive larger than the message. */
	r = post_recv(&peers[1], 0x11, MAX_INLINE_RECV, 77, ~0ull, 0, 0);
	s = post_send(&peers[1], 0x22, 1, c, sizeof(c), 77);
	check_send_ok(&peers[1], s, 0x22);
	check_recv_ok(&peers[1], r, 0x11, c, sizeof(c), 77);

	/* The largest inline receive a notification carries, full. */
	{
		static uint8_t big[MAX_INLINE_RECV];

		fill(big, sizeof(big), 4);
		r = post_recv(&peers[0], 0x33, sizeof(big), 0xb16, ~0ull, 0, 0);
		s = post_send(&peers[1], 0x44, 0, big, sizeof(big), 0xb16);
		check_send_ok(&peers[1], s, 0x44);
		check_recv_ok(&peers[0], r, 0x33, big, sizeof(big), 0xb16);
	}

	/* Zero bytes. */
	r = post_recv(&peers[0], 0x55, 0, 0, ~0ull, 0, 0);
	s = post_send(&peers[1], 0x66, 0, NULL, 0, 0);
	check_send_ok(&peers[1], s, 0x66);
	check_recv_ok(&peers[0], r, 0x55, NULL, 0, 0);
}

/*
 * The wakeup fd: armed the way the runtime arms it before sleeping, it turns readable when a
 * message for a posted receive arrives, with nobody progressing the receiving instance.
 */
static void test_wakeup(void)
{
	struct pollfd pfd;
	int64_t deadline;
	uint8_t m[100];
	doca_error_t st = DOCA_ERROR_AGAIN;
	uint64_t r, s;
	int fd = -1, i, woke = 0;

	T_STATUS(plugin_wakeup_fd(NULL, &fd), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(plugin_wakeup_fd(&peers[0].ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(plugin_arm(NULL), DOCA_ERROR_INVALID_VALUE);
	T_OK(plugin_wakeup_fd(&peers[0].ctx, &fd));
	T_TRUE(fd >= 0);

	fill(m, sizeof(m), 40);
	r = post_recv(&peers[0], 0x77, sizeof(m), 0x3131, ~0ull, 0, 0);
	for (i = 0; i < 100; i++) {
		st = plugin_arm(&peers[0].ctx);
		if (st != DOCA_ERROR_AGAIN)
			break;
		progress_one(0);
	}
	T_OK(st);

	s = post_send(&peers[1], 0x78, 0, m, sizeof(m), 0x3131);
	deadline = now_ms() + WAIT_MS;
	while (!woke && now_ms() < deadline) {
		progress_one(1);
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		woke = poll(&pfd, 1, 5) > 0;
	}
	if (!woke)
		t_fail("the wakeup fd did not turn readable within %d ms", WAIT_MS);
	check_send_ok(&peers[1], s, 0x78);
	check_recv_ok(&peers[0], r, 0x77, m, sizeof(m), 0x3131);
}

/* Masks: ignored bits match anything; a receive that matches nothing stays pending. */
static void test_tag_matching(void)
{
	uint8_t x[64], y[64], z[64];
	uint64_t r_mask, r_pending, r_other, s;

	fill(x, sizeof(x), 5);
	fill(y, sizeof(y), 6);
	fill(z, sizeof(z), 7);

	/* 0x12ab matches 0x1200 under 0xff00, and the receiver learns the real tag. */
	r_mask = post_recv(&peers[0], 1, sizeof(x), 0x1200, 0xff00, 0, 0);
	s = post_send(&peers[1], 2, 0, x, sizeof(x), 0x12ab);
	check_send_ok(&peers[1], s, 2);
	check_recv_ok(&peers[0], r_mask, 1, x, sizeof(x), 0x12ab);

	/* 0x7001 passes the receive for 0x7000 by and goes to the one after it. */
	r_pending = post_recv(&peers[0], 3, sizeof(y), 0x7000, 0xffff, 0, 0);
	r_other = post_recv(&peers[0], 4, sizeof(y), 0x7001, 0xffff, 0, 0);
	s = post_send(&peers[1], 5, 0, y, sizeof(y), 0x7001);
	check_send_ok(&peers[1], s, 5);
	check_recv_ok(&peers[0], r_other, 4, y, sizeof(y), 0x7001);
	expect_pending(&peers[0], r_pending);
	/* Its sender comes. */
	s = post_send(&peers[1], 6, 0, z, sizeof(z), 0x17000); /* bit 16 lies outside the mask */
	check_send_ok(&peers[1], s, 6);
	check_recv_ok(&peers[0], r_pending, 3, z, sizeof(z), 0x17000);
}

/* A domain id that names another worker now (a new domain): the cached endpoint is replaced. */
static void test_member_moves(void)
{
	uint8_t m[50];
	uint64_t r, s;

	fill(m, sizeof(m), 50);
	/* Peer 1 has an endpoint to domain id 0 = instance 0 by now; id 0 becomes instance 1. */
	member_of[0] = 1;
	r = post_recv(&peers[1], 0x91, sizeof(m), 0x4242, ~0ull, 0, 0);
	s = post_send(&peers[1], 0x92, 0, m, sizeof(m), 0x4242);
	check_send_ok(&peers[1], s, 0x92);
	check_recv_ok(&peers[1], r, 0x91, m, sizeof(m), 0x4242);
	member_of[0] = 0;
	r = post_recv(&peers[0], 0x93, sizeof(m), 0x4243, ~0ull, 0, 0);
	s = post_send(&peers[1], 0x94, 0, m, sizeof(m), 0x4243);
	check_send_ok(&peers[1], s, 0x94);
	check_recv_ok(&peers[0], r, 0x93, m, sizeof(m), 0x4243);
}

/* Sends with one tag arrive in command order. */
static void test_order(void)
{
	uint8_t m[8][100];
	uint64_t r[8], s[8];
	int i;

	for (i = 0; i < 8; i++) {
		fill(m[i], sizeof(m[i]), 10 + (unsigned int)i);
		s[i] = post_send(&peers[0], 100 + (uint64_t)i, 1, m[i], sizeof(m[i]), 0x99);
	}
	for (i = 0; i < 8; i++)
		r[i] = post_recv(&peers[1], 200 + (uint64_t)i, sizeof(m[i]), 0x99, ~0ull, 0, 0);
	for (i = 0; i < 8; i++)
		check_send_ok(&peers[0], s[i], 100 + (uint64_t)i);
	for (i = 0; i < 8; i++)
		check_recv_ok(&peers[1], r[i], 200 + (uint64_t)i, m[i], sizeof(m[i]), 0x99);
}

/* A message longer than its receive: UCX reports truncation, the status is DRIVER. */
static void test_truncated(void)
{
	uint8_t m[100];
	struct packed pk;
	uint64_t r, s;

	fill(m, sizeof(m), 20);
	r = post_recv(&peers[0], 7, 10, 0xabc, ~0ull, 0, 0);
	s = post_send(&peers[1], 8, 0, m, sizeof(m), 0xabc);
	check_send_ok(&peers[1], s, 8);
	if (wait_notif(&peers[0], r, &pk) == 0 &&
	    (pk.hdr.status != DOCA_ERROR_DRIVER || !pk.has_payload ||
	     pk.n.type != UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV ||
	     pk.n.tag_recv.status != UCS_ERR_MESSAGE_TRUNCATED || pk.n.tag_recv.buffer != NULL ||
	     pk.n.tag_recv.context != 7 || pk.data_len != 0))
		t_fail("truncated recv: status %s, ucs %d, buffer %p, %zu bytes",
		       doca_error_get_name(pk.hdr.status), (int)pk.n.tag_recv.status,
		       pk.n.tag_recv.buffer, pk.data_len);
}

/* Every refusal answers with one notification, and nothing is sent or posted. */
static void test_refusals(void)
{
	struct urom_worker_sandbox_cmd cmd;
	uint8_t m[32], junk[40];
	uint64_t c, r;

	fill(m, sizeof(m), 30);
	memset(junk, 0x5a, sizeof(junk));

	/* Unknown destination. */
	c = post_send(&peers[0], 0xd1, 9, m, sizeof(m), 1);
	check_refused(&peers[0], c, DOCA_ERROR_NOT_FOUND, UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND,
		      0xd1);

	/* One byte more than a notification of the message size carries. */
	c = post_recv(&peers[0], 0xd2, MAX_INLINE_RECV + 1, 1, ~0ull, 0, 0);
	check_refused(&peers[0], c, DOCA_ERROR_INVALID_VALUE, UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV,
		      0xd2);

	/* Inline data shorter and longer than count; a receive with trailing bytes. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_TAG_SEND;
	cmd.tag_send.context = 0xd3;
	cmd.tag_send.dest = 1;
	cmd.tag_send.count = 10;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, m, 5), DOCA_ERROR_INVALID_VALUE);
	check_refused(&peers[0], c, DOCA_ERROR_INVALID_VALUE, UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND,
		      0xd3);
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, m, 15), DOCA_ERROR_INVALID_VALUE);
	check_refused(&peers[0], c, DOCA_ERROR_INVALID_VALUE, UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND,
		      0xd3);
	/* A count that wraps the length check around. */
	cmd.tag_send.count = UINT64_MAX - sizeof(cmd) + 1 + 5;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, m, 5), DOCA_ERROR_INVALID_VALUE);
	check_refused(&peers[0], c, DOCA_ERROR_INVALID_VALUE, UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND,
		      0xd3);

	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_TAG_RECV;
	cmd.tag_recv.context = 0xd4;
	cmd.tag_recv.count = 8;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, m, 1), DOCA_ERROR_INVALID_VALUE);
	check_refused(&peers[0], c, DOCA_ERROR_INVALID_VALUE, UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV,
		      0xd4);

	/* Unknown memh ids, for both directions. */
	cmd.tag_recv.memh_id = 0x12345;
	cmd.tag_recv.buffer = 0x1000;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, NULL, 0), DOCA_ERROR_NOT_FOUND);
	check_refused(&peers[0], c, DOCA_ERROR_NOT_FOUND, UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV,
		      0xd4);
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_TAG_SEND;
	cmd.tag_send.context = 0xd5;
	cmd.tag_send.dest = 1;
	cmd.tag_send.count = 16;
	cmd.tag_send.buffer = 0x1000;
	cmd.tag_send.memh_id = 0x12345;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, NULL, 0), DOCA_ERROR_NOT_FOUND);
	check_refused(&peers[0], c, DOCA_ERROR_NOT_FOUND, UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND,
		      0xd5);

	/* MEM_MAP: an empty descriptor, a length mismatch, bytes that are no descriptor. */
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_MEM_MAP;
	cmd.mem_map.context = 0xd6;
	cmd.mem_map.exported_memh_buffer_len = 0;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	check_refused(&peers[0], c, DOCA_ERROR_INVALID_VALUE, UROM_WORKER_NOTIFY_SANDBOX_MEM_MAP,
		      0xd6);
	cmd.mem_map.exported_memh_buffer_len = sizeof(junk) + 1;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, junk, sizeof(junk)), DOCA_ERROR_INVALID_VALUE);
	check_refused(&peers[0], c, DOCA_ERROR_INVALID_VALUE, UROM_WORKER_NOTIFY_SANDBOX_MEM_MAP,
		      0xd6);
	cmd.mem_map.exported_memh_buffer_len = sizeof(junk);
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, junk, sizeof(junk)), DOCA_ERROR_INVALID_VALUE);
	check_refused(&peers[0], c, DOCA_ERROR_INVALID_VALUE, UROM_WORKER_NOTIFY_SANDBOX_MEM_MAP,
		      0xd6);

	/* Too short to be a command, and an unknown command type: header-only answers. */
	c = next_context++;
	T_STATUS(submit_raw(&peers[0], c, &cmd, 8, NULL, 0, -1), DOCA_ERROR_INVALID_VALUE);
	check_bare(&peers[0], c, DOCA_ERROR_INVALID_VALUE);
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = 7;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	check_bare(&peers[0], c, DOCA_ERROR_INVALID_VALUE);

	/* None of the refused sends reached peer 1: its receive for tag 1 is still pending. */
	r = post_recv(&peers[1], 0xd7, sizeof(m), 1, ~0ull, 0, 0);
	expect_pending(&peers[1], r);
	c = post_send(&peers[0], 0xd8, 1, m, sizeof(m), 1);
	check_send_ok(&peers[0], c, 0xd8);
	check_recv_ok(&peers[1], r, 0xd7, m, sizeof(m), 1);
	expect_no_leftover(&peers[0], "refusals");
	expect_no_leftover(&peers[1], "refusals");
}

/*
 * A memh descriptor by hand (layout in src/urom/proto/sdp_urom_memh.h): [va, va + len) owned
 * by the UCP worker at owner, with an empty remote key (UCX's packed key of no memory domain).
 */
static size_t make_memh(uint8_t *out, size_t cap, uint64_t va, uint64_t len, const void *owner,
			size_t owner_len)
{
	const uint32_t rkey_len = 9; /* an md map of 0 and the host memory type */
	uint32_t addr_len = (uint32_t)owner_len;
	uint16_t version = 1, flags = 0;

	if (32 + owner_len + rkey_len > cap)
		return 0;
	memset(out, 0, 32 + owner_len + rkey_len);
	memcpy(out, "SDMH", 4);
	memcpy(out + 4, &version, 2); /* (little-endian machine) */
	memcpy(out + 6, &flags, 2);
	memcpy(out + 8, &va, 8);
	memcpy(out + 16, &len, 8);
	memcpy(out + 24, &addr_len, 4);
	memcpy(out + 28, &rkey_len, 4);
	memcpy(out + 32, owner, owner_len);
	return 32 + owner_len + rkey_len;
}

/*
 * A memh id belongs to the host that mapped it: another host on the same worker (another
 * dest_id) naming it gets NOT_FOUND, like an unknown id, in both directions, and nothing moves.
 */
static void test_map_owner(void)
{
	static uint8_t memh[8192], area[256];
	struct urom_worker_sandbox_cmd cmd;
	uint64_t c, r, memh_id = 0;
	struct packed pk;
	size_t memh_len;

	memh_len = make_memh(memh, sizeof(memh), (uintptr_t)area, sizeof(area), peers[1].addr,
			     peers[1].addr_len);
	T_TRUE(memh_len != 0);
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_MEM_MAP;
	cmd.mem_map.context = 0xa1;
	cmd.mem_map.exported_memh_buffer_len = memh_len;
	c = next_context++;
	T_OK(submit(&peers[0], c, &cmd, memh, memh_len));
	if (wait_notif(&peers[0], c, &pk) != 0)
		return;
	T_OK(pk.hdr.status);
	T_TRUE(pk.has_payload && pk.n.type == UROM_WORKER_NOTIFY_SANDBOX_MEM_MAP);
	T_EQ_INT(pk.n.mem_map.context, 0xa1);
	memh_id = pk.n.mem_map.memh_id;
	T_TRUE(memh_id != 0);

	/* The other host: a send from and a receive into host A's mapping, refused. */
	host_dest = OTHER_DEST;
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_TAG_SEND;
	cmd.tag_send.context = 0xa2;
	cmd.tag_send.dest = 1;
	cmd.tag_send.buffer = (uintptr_t)area;
	cmd.tag_send.count = 0;
	cmd.tag_send.tag = 0xa0;
	cmd.tag_send.memh_id = memh_id;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, NULL, 0), DOCA_ERROR_NOT_FOUND);
	check_refused(&peers[0], c, DOCA_ERROR_NOT_FOUND, UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND,
		      0xa2);
	cmd.tag_send.count = 16;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, NULL, 0), DOCA_ERROR_NOT_FOUND);
	check_refused(&peers[0], c, DOCA_ERROR_NOT_FOUND, UROM_WORKER_NOTIFY_SANDBOX_TAG_SEND,
		      0xa2);
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_TAG_RECV;
	cmd.tag_recv.context = 0xa3;
	cmd.tag_recv.buffer = (uintptr_t)area;
	cmd.tag_recv.count = 0;
	cmd.tag_recv.tag = 0xa0;
	cmd.tag_recv.tag_mask = ~0ull;
	cmd.tag_recv.memh_id = memh_id;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, NULL, 0), DOCA_ERROR_NOT_FOUND);
	check_refused(&peers[0], c, DOCA_ERROR_NOT_FOUND, UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV,
		      0xa3);
	cmd.tag_recv.count = 16;
	c = next_context++;
	T_STATUS(submit(&peers[0], c, &cmd, NULL, 0), DOCA_ERROR_NOT_FOUND);
	check_refused(&peers[0], c, DOCA_ERROR_NOT_FOUND, UROM_WORKER_NOTIFY_SANDBOX_TAG_RECV,
		      0xa3);
	expect_no_leftover(&peers[0], "the other host's refusals");
	host_dest = HOST_DEST;

	/* Its owner may: a send of 0 bytes through the mapping reaches peer 1. */
	r = post_recv(&peers[1], 0xa4, 0, 0xa0, ~0ull, 0, 0);
	memset(&cmd, 0, sizeof(cmd));
	cmd.type = UROM_WORKER_CMD_SANDBOX_TAG_SEND;
	cmd.tag_send.context = 0xa5;
	cmd.tag_send.dest = 1;
	cmd.tag_send.buffer = (uintptr_t)area;
	cmd.tag_send.count = 0;
	cmd.tag_send.tag = 0xa0;
	cmd.tag_send.memh_id = memh_id;
	c = next_context++;
	T_OK(submit(&peers[0], c, &cmd, NULL, 0));
	check_send_ok(&peers[0], c, 0xa5);
	check_recv_ok(&peers[1], r, 0xa4, NULL, 0, 0xa0);
	expect_no_leftover(&peers[0], "the owner's send");
	expect_no_leftover(&peers[1], "the owner's send");
}

/* notif_pack on its own: bad arguments and a buffer too small. */
static void test_notif_pack(void)
{
	struct urom_worker_notif_desc *desc;
	uint8_t buf[256];
	size_t len;
	uint64_t c;

	T_STATUS(iface.notif_pack(NULL, &len, buf), DOCA_ERROR_INVALID_VALUE);

	/* A refused send: any notification will do. */
	c = post_send(&peers[0], 0xe1, 9, NULL, 0, 1);
	progress_all();
	desc = find_notif(&peers[0], c);
	if (desc == NULL) {
		t_fail("a refused command must be answered by the next progress");
		return;
	}
	ucs_list_del(&desc->entry);
	len = NOTIFY_HDR + sizeof(struct urom_worker_notify_sandbox) - 1;
	T_STATUS(iface.notif_pack(&desc->worker_notif, &len, buf), DOCA_ERROR_TOO_BIG);
	T_STATUS(iface.notif_pack(&desc->worker_notif, NULL, buf), DOCA_ERROR_INVALID_VALUE);
	len = sizeof(buf);
	T_STATUS(iface.notif_pack(&desc->worker_notif, &len, NULL), DOCA_ERROR_INVALID_VALUE);
	/* A length this plugin never produces. */
	desc->worker_notif.len = 3;
	T_STATUS(iface.notif_pack(&desc->worker_notif, &len, buf), DOCA_ERROR_INVALID_VALUE);
	free(desc);
}

int main(int argc, char **argv)
{
	void *dl;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <worker_sandbox.so>\n", argv[0]);
		return T_EXIT_FAIL;
	}
	setenv("UCX_NET_DEVICES", "lo", 0);
	dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
		return T_EXIT_FAIL;
	}
	test_entry_points(dl);

	T_STATUS(iface.open(NULL), DOCA_ERROR_INVALID_VALUE);
	open_peer(&peers[0]);
	open_peer(&peers[1]);
	T_STATUS(iface.worker_cmd(&peers[0].ctx, NULL), DOCA_ERROR_INVALID_VALUE);
	T_STATUS(iface.progress(&peers[0].ctx, NULL), DOCA_ERROR_INVALID_VALUE);

	test_inline_exchange();
	test_wakeup();
	test_tag_matching();
	test_order();
	test_member_moves();
	test_truncated();
	test_refusals();
	test_map_owner();
	test_notif_pack();

	/*
	 * Close with a receive still posted and a send nobody receives: both are cleaned up.
	 * Before that, every command of peer 0 got exactly one notification: the eager send is
	 * answered, the receive is not yet, and nothing else is left over.
	 */
	{
		uint64_t c_send;

		(void)post_recv(&peers[0], 0xf1, 16, 0xf00d, ~0ull, 0, 0);
		c_send = post_send(&peers[0], 0xf2, 1, "unreceived bytes", 16, 0xcafe);
		check_send_ok(&peers[0], c_send, 0xf2);
		expect_no_leftover(&peers[0], "before close");
	}
	iface.close(&peers[0].ctx);
	free(peers[0].addr);
	close_peer(&peers[1]);
	iface.close(NULL);
	dlclose(dl);
	T_DONE();
}
