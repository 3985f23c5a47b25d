/*
 * softdpu-urom-worker: the runtime loop (see urom_worker.h for the protocol it plays).
 *
 * Received UCP messages are handled as sdp_ucx delivers them, after ucp_worker_progress has
 * returned, so handlers may send freely. Per command: a malloc'd struct urom_worker_cmd_desc
 * goes to the plugin whose id equals the command type (the plugin frees it); afterwards every
 * plugin's progress runs until it reports DOCA_ERROR_EMPTY and each notification is packed with
 * the plugin's notif_pack into max_msg_size bytes and sent to its dest id.
 *
 * Sleeping: for SDP_UROM_WORKER_POLL_US (50 us) after the last activity the loop keeps polling,
 * because the next command of a busy host usually arrives within microseconds and catching it
 * awake spares both processes a wakeup (measured on an idle 16-core machine: graph loopback
 * round trip 21 -> 13 us). After that quiet window the UCP worker is armed and the loop sleeps
 * in epoll, so an idle worker uses no CPU. A plugin that accepted commands without answering
 * them yet may need its own progress calls (it can have transports of its own that this loop
 * cannot see), so while such commands are outstanding the sleep is short (1 ms, growing to
 * 16 ms); with nothing outstanding it is 1 s, only to stay bounded.
 *
 * Counters (wstats.h): plain increments here; a snapshot goes to the service as SW_STATS right
 * after SW_READY, then when a counter changed, at most every SDP_UROM_STATS_INTERVAL_MS, sent
 * from the loop itself (its sleep is cut short to when a snapshot is due, never busy-waits).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "urom_worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "doca_urom_plugin.h"

#include "sdp_log.h"
#include "sdp_ucx.h"
#include "sdp_urom_auth.h"
#include "sdp_urom_hdr.h"
#include "sdp_urom_plugin.h"
#include "sdp_urom_proto.h"
#include "wdomain.h"
#include "wstats.h"

#include "softdpu/urom_plugin.h"

SDP_LOG_COMPONENT("urom_worker");

#define SDP_UROM_WORKER_CTRL_BUF (64 * 1024)
#define SDP_UROM_WORKER_MSG_OVERHEAD 256 /* W_NOTIF framing around a notification */
#define SDP_UROM_WORKER_PROGRESS_BURST 64
#define SDP_UROM_WORKER_PLUGIN_ROUNDS 256
#define SDP_UROM_WORKER_IDLE_MS 1000
#define SDP_UROM_WORKER_PENDING_MAX_MS 16
#ifndef SDP_UROM_WORKER_POLL_US
#define SDP_UROM_WORKER_POLL_US 50 /* keep polling this long after the last activity */
#endif
#define SDP_UROM_WORKER_POLL_FD_ROUNDS 32 /* while polling, look at the fds every N rounds */

/* One host connection the service announced. */
struct sdp_urom_worker_host {
	uint64_t dest_id;
	uint8_t token[SDP_UROM_TOKEN_LEN];
	ucp_ep_h ep; /* the host's endpoint once W_CONNECT succeeded, else NULL */
	/*
	 * Notifications for ep packed back to back (msg_cap bytes, allocated at the first), sent
	 * as one active message at the end of the loop's round or before anything else goes to
	 * ep (so the host sees every message in the order it was produced).
	 */
	uint8_t *batch;
	size_t batch_len;
	uint32_t batch_n;     /* notifications in it */
	uint64_t batch_bytes; /* their bytes as counted in notif_bytes */
};

struct sdp_urom_worker_plugin {
	struct sdp_urom_plugin p;
	uint64_t outstanding; /* commands consumed by worker_cmd, not yet answered */
	int wake_fd;	      /* softdpu/urom_plugin.h descriptor in the epoll set, or -1 */
};

struct sdp_urom_worker {
	uint64_t worker_id;
	size_t max_msg_size;
	uint64_t heartbeat_us; /* SW_STATS at least this often (liveness), 0 = only on change */
	int ctrl_fd;
	int epfd;
	int ctrl_closed;    /* EOF or error on the control socket */
	int exit_requested; /* SW_EXIT received */
	int sigfd;	    /* SIGTERM / SIGINT, blocked and read here */
	int signaled;	    /* the signal number that ends the loop, else 0 */
	ucp_context_h ucp_context;
	struct sdp_ucx_worker ucx;
	int ucx_ready;
	struct sdp_urom_worker_plugin *plugins;
	size_t num_plugins;
	struct sdp_urom_worker_host *hosts;
	size_t num_hosts;
	size_t hosts_cap;
	uint8_t *ctrl_buf;  /* SDP_UROM_WORKER_CTRL_BUF */
	uint8_t *notif_buf; /* max_msg_size */
	uint8_t *msg_buf;   /* max_msg_size + SDP_UROM_WORKER_MSG_OVERHEAD */
	size_t msg_cap;
	struct sdp_urom_wdoms doms;   /* what the domain lookups answer from (wdomain.h) */
	struct sdp_urom_msg msg;      /* decoded host message being handled */
	struct sdp_urom_msg ctrl_msg; /* decoded control message (may nest inside the above) */
	struct sdp_urom_wstats stats; /* what SW_STATS reports (wstats.h) */
	struct sdp_urom_msg stats_msg;
};

static struct sdp_urom_worker_host *urom_worker_host_find(struct sdp_urom_worker *w,
							  uint64_t dest_id)
{
	size_t i;

	for (i = 0; i < w->num_hosts; i++)
		if (w->hosts[i].dest_id == dest_id)
			return &w->hosts[i];
	return NULL;
}

static struct sdp_urom_worker_plugin *urom_worker_plugin_find(struct sdp_urom_worker *w,
							      uint64_t id)
{
	size_t i;

	for (i = 0; i < w->num_plugins; i++)
		if (w->plugins[i].p.id == id)
			return &w->plugins[i];
	return NULL;
}

/* Send one message on the control socket; the service reads whole frames. */
static doca_error_t urom_worker_ctrl_send(struct sdp_urom_worker *w, const struct sdp_urom_msg *msg,
					  int flags)
{
	size_t len = 0;
	doca_error_t status;
	ssize_t n;

	status = sdp_urom_msg_pack(msg, w->ctrl_buf, SDP_UROM_WORKER_CTRL_BUF, &len);
	if (status != DOCA_SUCCESS) {
		sdp_error("worker %lu: failed to pack %s: %s", (unsigned long)w->worker_id,
			  sdp_urom_msg_type_name(msg->hdr.type), doca_error_get_name(status));
		return status;
	}

	do {
		n = send(w->ctrl_fd, w->ctrl_buf, len, MSG_NOSIGNAL | flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (flags & MSG_DONTWAIT) && (errno == EAGAIN || errno == EWOULDBLOCK))
		return DOCA_ERROR_AGAIN; /* the caller tries again later */
	if (n < 0) {
		sdp_error("worker %lu: failed to send %s to the service: %m",
			  (unsigned long)w->worker_id, sdp_urom_msg_type_name(msg->hdr.type));
		return DOCA_ERROR_IO_FAILED;
	}
	return DOCA_SUCCESS;
}

/*
 * Send what host's batch holds (counted as sent when queued; a failed send moves them to
 * notifs_dropped). With drop set, or without an endpoint, the batch is thrown away instead.
 */
static void urom_worker_host_flush(struct sdp_urom_worker *w, struct sdp_urom_worker_host *host,
				   int drop)
{
	if (host->batch_len == 0)
		return;
	if (drop || host->ep == NULL ||
	    sdp_ucx_send(&w->ucx, host->ep, host->batch, host->batch_len) != DOCA_SUCCESS) {
		w->stats.notifs -= host->batch_n;
		w->stats.notif_bytes -= host->batch_bytes;
		w->stats.notifs_dropped += host->batch_n;
		sdp_warn("worker %lu: %u notifications for dest %lu dropped: %s",
			 (unsigned long)w->worker_id, host->batch_n, (unsigned long)host->dest_id,
			 drop || host->ep == NULL ? "the host went away" : "the send failed");
	}
	host->batch_len = 0;
	host->batch_n = 0;
	host->batch_bytes = 0;
}

/* Before a message goes to ep directly: what is batched for it goes first. */
static void urom_worker_flush_ep(struct sdp_urom_worker *w, ucp_ep_h ep)
{
	for (size_t i = 0; i < w->num_hosts; i++)
		if (w->hosts[i].ep == ep)
			urom_worker_host_flush(w, &w->hosts[i], 0);
}

/* The end of a round of the loop: every batch goes out. */
static void urom_worker_flush_all(struct sdp_urom_worker *w)
{
	for (size_t i = 0; i < w->num_hosts; i++)
		urom_worker_host_flush(w, &w->hosts[i], 0);
}

/* Send one message to a host endpoint (packed into msg_buf), after what is batched for it. */
static doca_error_t urom_worker_ep_send(struct sdp_urom_worker *w, ucp_ep_h ep,
					const struct sdp_urom_msg *msg)
{
	size_t len = 0;
	doca_error_t status;

	urom_worker_flush_ep(w, ep);
	status = sdp_urom_msg_pack(msg, w->msg_buf, w->msg_cap, &len);
	if (status != DOCA_SUCCESS) {
		sdp_error("worker %lu: failed to pack %s: %s", (unsigned long)w->worker_id,
			  sdp_urom_msg_type_name(msg->hdr.type), doca_error_get_name(status));
		return status;
	}
	return sdp_ucx_send(&w->ucx, ep, w->msg_buf, len);
}

/*
 * Queue msg in host's batch, sending the batch first when msg does not fit behind it. Without
 * memory for a batch msg goes out alone.
 */
static doca_error_t urom_worker_host_queue(struct sdp_urom_worker *w,
					   struct sdp_urom_worker_host *host,
					   const struct sdp_urom_msg *msg, size_t *len_p)
{
	doca_error_t status;

	if (host->batch == NULL && (host->batch = malloc(w->msg_cap)) == NULL) {
		*len_p = 0;
		return urom_worker_ep_send(w, host->ep, msg);
	}
	status = sdp_urom_msg_pack(msg, host->batch + host->batch_len, w->msg_cap - host->batch_len,
				   len_p);
	if (status == DOCA_ERROR_TOO_BIG && host->batch_len > 0) {
		urom_worker_host_flush(w, host, 0);
		status = sdp_urom_msg_pack(msg, host->batch, w->msg_cap, len_p);
	}
	if (status != DOCA_SUCCESS) {
		sdp_error("worker %lu: failed to pack %s: %s", (unsigned long)w->worker_id,
			  sdp_urom_msg_type_name(msg->hdr.type), doca_error_get_name(status));
		return status;
	}
	host->batch_len += *len_p;
	return DOCA_SUCCESS;
}

/*
 * Queue a packed notification (its status: notif_status) for dest_id, sent at the end of the
 * round; drop it (logged) when that host is not connected.
 */
static void urom_worker_notif_send(struct sdp_urom_worker *w, uint64_t dest_id, const void *notif,
				   size_t len, doca_error_t notif_status)
{
	struct sdp_urom_worker_host *host = urom_worker_host_find(w, dest_id);
	struct sdp_urom_msg msg;
	size_t packed;

	sdp_urom_wstats_touch(&w->stats);
	if (host == NULL || host->ep == NULL) {
		w->stats.notifs_dropped++;
		sdp_warn("worker %lu: notification for dest %lu dropped: %s",
			 (unsigned long)w->worker_id, (unsigned long)dest_id,
			 host == NULL ? "unknown dest id" : "host not connected");
		return;
	}

	memset(&msg.hdr, 0, sizeof(msg.hdr));
	msg.hdr.type = SDP_UROM_MSG_W_NOTIF;
	msg.u.w_notif.dest_id = dest_id;
	msg.u.w_notif.notif.data = notif;
	msg.u.w_notif.notif.len = (uint32_t)len;
	if (urom_worker_host_queue(w, host, &msg, &packed) != DOCA_SUCCESS) {
		w->stats.notifs_dropped++;
		sdp_warn("worker %lu: notification for dest %lu not sent",
			 (unsigned long)w->worker_id, (unsigned long)dest_id);
		return;
	}
	if (packed != 0) { /* batched (0: sent alone) */
		host->batch_n++;
		host->batch_bytes += len;
	}
	w->stats.notifs++;
	w->stats.notif_bytes += len;
	if (notif_status != DOCA_SUCCESS)
		w->stats.notifs_error++;
}

/* Answer a command with a header-only notification carrying status. */
static void urom_worker_notif_error(struct sdp_urom_worker *w, uint64_t dest_id, uint64_t type,
				    uint64_t urom_context, doca_error_t status)
{
	struct urom_worker_notify notif;

	memset(&notif, 0, sizeof(notif));
	notif.type = type;
	notif.urom_context = urom_context;
	notif.len = 0;
	notif.status = status;
	urom_worker_notif_send(w, dest_id, &notif, sizeof(notif), status);
}

/* Pack one notification a plugin produced and send it. The caller frees desc. */
static void urom_worker_notif_deliver(struct sdp_urom_worker *w,
				      struct sdp_urom_worker_plugin *plugin,
				      struct urom_worker_notif_desc *desc)
{
	struct urom_worker_notify *notif = &desc->worker_notif;
	size_t packed_len = w->max_msg_size;
	doca_error_t status;

	if (plugin->outstanding > 0)
		plugin->outstanding--;

	if (notif->len > w->max_msg_size - SDP_UROM_NOTIFY_HDR_LEN) {
		sdp_warn("worker %lu: plugin %s notification of %lu bytes exceeds the message size "
			 "%zu, answering TOO_BIG",
			 (unsigned long)w->worker_id, plugin->p.name, (unsigned long)notif->len,
			 w->max_msg_size);
		urom_worker_notif_error(w, desc->dest_id, notif->type, notif->urom_context,
					DOCA_ERROR_TOO_BIG);
		return;
	}

	status = plugin->p.ctx.iface.notif_pack(notif, &packed_len, w->notif_buf);
	if (status != DOCA_SUCCESS || packed_len < SDP_UROM_NOTIFY_HDR_LEN ||
	    packed_len > w->max_msg_size) {
		if (status == DOCA_SUCCESS)
			status = packed_len > w->max_msg_size ? DOCA_ERROR_TOO_BIG :
								DOCA_ERROR_INVALID_VALUE;
		sdp_warn("worker %lu: plugin %s notif_pack failed (%s, %zu bytes of %zu)",
			 (unsigned long)w->worker_id, plugin->p.name, doca_error_get_name(status),
			 packed_len, w->max_msg_size);
		urom_worker_notif_error(w, desc->dest_id, notif->type, notif->urom_context, status);
		return;
	}

	sdp_trace("worker %lu: notification of %zu bytes to dest %lu", (unsigned long)w->worker_id,
		  packed_len, (unsigned long)desc->dest_id);
	urom_worker_notif_send(w, desc->dest_id, w->notif_buf, packed_len, notif->status);
}

/* Run every plugin's progress until it has nothing more; returns notifications sent. */
static unsigned int urom_worker_plugins_progress(struct sdp_urom_worker *w)
{
	struct urom_worker_notif_desc *desc;
	struct sdp_urom_worker_plugin *plugin;
	ucs_list_link_t notifs;
	unsigned int count = 0, round;
	doca_error_t status;
	size_t i;

	for (i = 0; i < w->num_plugins; i++) {
		plugin = &w->plugins[i];
		for (round = 0; round < SDP_UROM_WORKER_PLUGIN_ROUNDS; round++) {
			ucs_list_head_init(&notifs);
			status = plugin->p.ctx.iface.progress(&plugin->p.ctx, &notifs);
			/* Whatever was appended is delivered, whatever progress returned. */
			while (!ucs_list_is_empty(&notifs)) {
				desc = ucs_list_extract_head(&notifs, struct urom_worker_notif_desc,
							     entry);
				urom_worker_notif_deliver(w, plugin, desc);
				free(desc);
				count++;
			}
			if (status != DOCA_SUCCESS) {
				if (status != DOCA_ERROR_EMPTY &&
				    status != DOCA_ERROR_NOT_SUPPORTED)
					sdp_debug("worker %lu: plugin %s progress: %s",
						  (unsigned long)w->worker_id, plugin->p.name,
						  doca_error_get_name(status));
				break;
			}
		}
	}
	return count;
}

static void urom_worker_handle_connect(struct sdp_urom_worker *w, ucp_ep_h ep,
				       const struct sdp_urom_msg *in);

static void urom_worker_ctrl_drain(struct sdp_urom_worker *w);

/* W_CMD: hand the command to its plugin, or answer it with an error notification. */
static void urom_worker_handle_cmd(struct sdp_urom_worker *w, ucp_ep_h ep,
				   const struct sdp_urom_msg *in)
{
	uint64_t dest_id = in->u.w_cmd.dest_id;
	const struct sdp_urom_bytes *bytes = &in->u.w_cmd.cmd;
	struct sdp_urom_worker_host *host = urom_worker_host_find(w, dest_id);
	struct sdp_urom_worker_plugin *plugin;
	struct urom_worker_cmd_desc *desc;
	struct urom_worker_cmd hdr;
	ucs_list_link_t cmds;
	doca_error_t status;

	/* Counted as refused first; a command a plugin takes is taken off that count below. */
	w->stats.cmds++;
	w->stats.cmd_bytes += bytes->len;
	w->stats.cmds_refused++;
	sdp_urom_wstats_touch(&w->stats);
	if (host == NULL || host->ep == NULL || host->ep != ep) {
		sdp_warn(
			"worker %lu: command for dest %lu from an endpoint that did not connect as "
			"it, dropped",
			(unsigned long)w->worker_id, (unsigned long)dest_id);
		return;
	}
	if (bytes->len < SDP_UROM_CMD_HDR_LEN) {
		sdp_warn(
			"worker %lu: command of %u bytes from dest %lu is shorter than its header, "
			"dropped",
			(unsigned long)w->worker_id, bytes->len, (unsigned long)dest_id);
		return;
	}

	memcpy(&hdr, bytes->data, SDP_UROM_CMD_HDR_LEN);
	if (hdr.len != bytes->len - SDP_UROM_CMD_HDR_LEN) {
		sdp_warn("worker %lu: command from dest %lu says %lu payload bytes, carries %zu",
			 (unsigned long)w->worker_id, (unsigned long)dest_id,
			 (unsigned long)hdr.len, (size_t)bytes->len - SDP_UROM_CMD_HDR_LEN);
		urom_worker_notif_error(w, dest_id, hdr.type, hdr.urom_context,
					DOCA_ERROR_INVALID_VALUE);
		return;
	}

	plugin = urom_worker_plugin_find(w, hdr.type);
	if (plugin == NULL) {
		sdp_warn("worker %lu: command from dest %lu for plugin id %#lx, which this worker "
			 "does not run",
			 (unsigned long)w->worker_id, (unsigned long)dest_id,
			 (unsigned long)hdr.type);
		urom_worker_notif_error(w, dest_id, hdr.type, hdr.urom_context,
					DOCA_ERROR_NOT_SUPPORTED);
		return;
	}

	desc = malloc(sizeof(*desc) + hdr.len);
	if (desc == NULL) {
		sdp_error("worker %lu: no memory for a command of %lu bytes",
			  (unsigned long)w->worker_id, (unsigned long)hdr.len);
		urom_worker_notif_error(w, dest_id, hdr.type, hdr.urom_context,
					DOCA_ERROR_NO_MEMORY);
		return;
	}
	desc->dest_id = dest_id;
	memcpy(&desc->worker_cmd, bytes->data, bytes->len);

	ucs_list_head_init(&cmds);
	ucs_list_add_tail(&cmds, &desc->entry);
	status = plugin->p.ctx.iface.worker_cmd(&plugin->p.ctx, &cmds);

	if (!ucs_list_is_empty(&cmds)) {
		/* Not taken: still ours, and the host still needs its one answer. */
		if (status == DOCA_SUCCESS)
			status = DOCA_ERROR_NOT_SUPPORTED;
		sdp_warn("worker %lu: plugin %s did not take a command: %s",
			 (unsigned long)w->worker_id, plugin->p.name, doca_error_get_name(status));
		ucs_list_del(&desc->entry);
		urom_worker_notif_error(w, dest_id, hdr.type, hdr.urom_context, status);
		free(desc);
		return;
	}

	/* Taken: the plugin owns the descriptor and answers even its failures. */
	w->stats.cmds_refused--;
	plugin->outstanding++;
	if (status != DOCA_SUCCESS)
		sdp_debug("worker %lu: plugin %s worker_cmd: %s", (unsigned long)w->worker_id,
			  plugin->p.name, doca_error_get_name(status));
}

static void urom_worker_reply_connect(struct sdp_urom_worker *w, ucp_ep_h ep, uint64_t req_id,
				      doca_error_t status, const char *reason)
{
	struct sdp_urom_msg msg;

	memset(&msg.hdr, 0, sizeof(msg.hdr));
	msg.hdr.type = SDP_UROM_MSG_W_CONNECT_REPLY;
	msg.hdr.req_id = req_id;
	msg.u.w_connect_reply.status = (uint32_t)status;
	msg.u.w_connect_reply.reason.data = (const uint8_t *)reason;
	msg.u.w_connect_reply.reason.len = (uint32_t)strlen(reason);
	if (urom_worker_ep_send(w, ep, &msg) != DOCA_SUCCESS)
		sdp_warn("worker %lu: W_CONNECT_REPLY not sent", (unsigned long)w->worker_id);
}

/* W_CONNECT: admit the endpoint for dest_id only with the token the service issued for it. */
static void urom_worker_handle_connect(struct sdp_urom_worker *w, ucp_ep_h ep,
				       const struct sdp_urom_msg *in)
{
	static const uint8_t no_token[SDP_UROM_TOKEN_LEN];
	uint8_t presented[SDP_UROM_TOKEN_LEN];
	uint8_t expected[SDP_UROM_TOKEN_LEN];
	uint64_t dest_id = in->u.w_connect.dest_id;
	struct sdp_urom_worker_host *host;
	int equal;

	sdp_urom_wstats_touch(&w->stats);
	if (ep == NULL) {
		w->stats.connects_refused++;
		sdp_warn("worker %lu: W_CONNECT for dest %lu without a reply endpoint, dropped",
			 (unsigned long)w->worker_id, (unsigned long)dest_id);
		return;
	}

	host = urom_worker_host_find(w, dest_id);
	if (host == NULL) {
		/* The service announces a host before telling it our address: read what is queued. */
		urom_worker_ctrl_drain(w);
		host = urom_worker_host_find(w, dest_id);
	}

	/*
	 * Compare even for an unknown dest id, so timing says nothing about which ids exist. Both
	 * tokens go through locals: gcc's object-size tracking loses the union member's bounds.
	 */
	memcpy(presented, in->u.w_connect.token, sizeof(presented));
	memcpy(expected, host != NULL ? host->token : no_token, sizeof(expected));
	equal = sdp_urom_token_equal(expected, presented);
	if (host == NULL || !equal) {
		w->stats.connects_refused++;
		sdp_warn("worker %lu: W_CONNECT for dest %lu rejected: %s",
			 (unsigned long)w->worker_id, (unsigned long)dest_id,
			 host == NULL ? "unknown dest id" : "wrong token");
		urom_worker_reply_connect(w, ep, in->hdr.req_id, DOCA_ERROR_AUTHENTICATION,
					  "token not valid for this dest id");
		return;
	}

	if (host->ep != NULL && host->ep != ep) {
		sdp_info("worker %lu: dest %lu reconnects from a new endpoint",
			 (unsigned long)w->worker_id, (unsigned long)dest_id);
		urom_worker_host_flush(w, host, 0);
	}
	host->ep = ep;
	if (w->stats.hosts_total < UINT32_MAX)
		w->stats.hosts_total++;
	sdp_debug("worker %lu: dest %lu connected", (unsigned long)w->worker_id,
		  (unsigned long)dest_id);
	urom_worker_reply_connect(w, ep, in->hdr.req_id, DOCA_SUCCESS, "");
}

static void urom_worker_handle_disconnect(struct sdp_urom_worker *w, ucp_ep_h ep,
					  const struct sdp_urom_msg *in)
{
	struct sdp_urom_worker_host *host = urom_worker_host_find(w, in->u.w_disconnect.dest_id);

	if (host == NULL || host->ep != ep) {
		sdp_warn(
			"worker %lu: W_DISCONNECT for dest %lu from an endpoint not connected as it",
			(unsigned long)w->worker_id, (unsigned long)in->u.w_disconnect.dest_id);
		return;
	}
	/* The token stays until the service sends SW_DEL_HOST: the host may connect again. */
	urom_worker_host_flush(w, host, 0);
	host->ep = NULL;
	sdp_urom_wstats_touch(&w->stats);
	sdp_urom_wdom_drop_owner(&w->doms, host->dest_id);
	sdp_debug("worker %lu: dest %lu disconnected", (unsigned long)w->worker_id,
		  (unsigned long)host->dest_id);
}

/* The host behind ep, when it connected as dest_id; else logged once and NULL. */
static struct sdp_urom_worker_host *urom_worker_host_of(struct sdp_urom_worker *w, ucp_ep_h ep,
							uint64_t dest_id, uint16_t type)
{
	struct sdp_urom_worker_host *host = urom_worker_host_find(w, dest_id);

	if (host == NULL || host->ep == NULL || host->ep != ep) {
		sdp_warn("worker %lu: %s for dest %lu from an endpoint that did not connect as it, "
			 "dropped",
			 (unsigned long)w->worker_id, sdp_urom_msg_type_name(type),
			 (unsigned long)dest_id);
		return NULL;
	}
	return host;
}

/* Send msg (which may be larger than a notification) from a buffer of its own. */
static void urom_worker_ep_send_big(struct sdp_urom_worker *w, ucp_ep_h ep,
				    const struct sdp_urom_msg *msg)
{
	size_t len = sdp_urom_msg_packed_size(msg);
	void *buf = len ? malloc(len) : NULL;

	if (buf == NULL || sdp_urom_msg_pack(msg, buf, len, &len) != DOCA_SUCCESS ||
	    sdp_ucx_send(&w->ucx, ep, buf, len) != DOCA_SUCCESS)
		sdp_warn("worker %lu: %s of %zu bytes not sent", (unsigned long)w->worker_id,
			 sdp_urom_msg_type_name(msg->hdr.type), len);
	free(buf);
}

static void urom_worker_domain_reply(struct sdp_urom_worker *w, ucp_ep_h ep, uint64_t req_id,
				     doca_error_t status, const char *reason)
{
	struct sdp_urom_msg msg;

	memset(&msg.hdr, 0, sizeof(msg.hdr));
	msg.hdr.type = SDP_UROM_MSG_W_DOMAIN_REPLY;
	msg.hdr.req_id = req_id;
	msg.u.w_domain_reply.status = (uint32_t)status;
	msg.u.w_domain_reply.reason.data = (const uint8_t *)reason;
	msg.u.w_domain_reply.reason.len = (uint32_t)strlen(reason);
	urom_worker_ep_send_big(w, ep, &msg);
}

/* W_DOMAIN_ADDR: every plugin's address, keyed by plugin name, in one member record. */
static void urom_worker_handle_domain_addr(struct sdp_urom_worker *w, ucp_ep_h ep,
					   const struct sdp_urom_msg *in)
{
	struct sdp_urom_dom_member *m;
	struct sdp_urom_msg msg;
	doca_error_t status;
	size_t i, len = 0;
	void *rec = NULL;

	if (urom_worker_host_of(w, ep, in->u.w_domain_addr.dest_id, in->hdr.type) == NULL)
		return;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		status = DOCA_ERROR_NO_MEMORY;
		goto reply;
	}
	for (i = 0; i < w->num_plugins && m->num_addrs < SDP_UROM_MAX_PLUGINS; i++) {
		const struct sdp_urom_plugin *p = &w->plugins[i].p;

		if (p->addr == NULL || p->addr_len == 0)
			continue;
		snprintf(m->addrs[m->num_addrs].name, sizeof(m->addrs[0].name), "%s", p->name);
		m->addrs[m->num_addrs].addr.data = p->addr;
		m->addrs[m->num_addrs].addr.len = (uint32_t)p->addr_len;
		m->num_addrs++;
	}
	status = sdp_urom_dom_member_pack(m, NULL, NULL, 0, &len);
	if (status == DOCA_ERROR_TOO_BIG) {
		rec = malloc(len);
		status = rec == NULL ? DOCA_ERROR_NO_MEMORY :
				       sdp_urom_dom_member_pack(m, NULL, rec, len, &len);
	}
reply:
	free(m);
	if (status != DOCA_SUCCESS) {
		sdp_error("worker %lu: cannot describe the plugins' addresses: %s",
			  (unsigned long)w->worker_id, doca_error_get_name(status));
		len = 0;
	}
	memset(&msg.hdr, 0, sizeof(msg.hdr));
	msg.hdr.type = SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY;
	msg.hdr.req_id = in->hdr.req_id;
	msg.u.w_domain_addr_reply.status = (uint32_t)status;
	msg.u.w_domain_addr_reply.record.data = status == DOCA_SUCCESS ? rec : NULL;
	msg.u.w_domain_addr_reply.record.len = (uint32_t)len;
	urom_worker_ep_send_big(w, ep, &msg);
	free(rec);
}

/*
 * W_DOMAIN_MEMBER / COMMIT / CLEAR. A bad record is remembered and fails the commit, which is
 * the one message the host waits for: it learns of the failure there, with the reason.
 */
static void urom_worker_handle_domain(struct sdp_urom_worker *w, ucp_ep_h ep,
				      const struct sdp_urom_msg *in)
{
	char why[200] = "";
	doca_error_t status;
	uint64_t dest_id;

	switch (in->hdr.type) {
	case SDP_UROM_MSG_W_DOMAIN_MEMBER:
		dest_id = in->u.w_domain_member.dest_id;
		if (urom_worker_host_of(w, ep, dest_id, in->hdr.type) == NULL)
			return;
		status = sdp_urom_wdom_add_member(
			&w->doms, dest_id, in->u.w_domain_member.domain_key,
			in->u.w_domain_member.record.data, in->u.w_domain_member.record.len, why,
			sizeof(why));
		if (status != DOCA_SUCCESS) {
			sdp_warn("worker %lu: domain record from dest %lu refused: %s (%s)",
				 (unsigned long)w->worker_id, (unsigned long)dest_id, why,
				 doca_error_get_name(status));
			/* this host's staging gets a key no commit names: its commit then fails */
			if (w->doms.staging.used && w->doms.staging.owner == dest_id)
				w->doms.staging.key = ~in->u.w_domain_member.domain_key;
		}
		return;
	case SDP_UROM_MSG_W_DOMAIN_COMMIT:
		dest_id = in->u.w_domain_commit.dest_id;
		if (urom_worker_host_of(w, ep, dest_id, in->hdr.type) == NULL)
			return;
		status = sdp_urom_wdom_commit(&w->doms, dest_id, in->u.w_domain_commit.domain_key,
					      in->u.w_domain_commit.num_members, why, sizeof(why));
		if (status != DOCA_SUCCESS) {
			sdp_warn("worker %lu: domain of dest %lu not taken: %s (%s)",
				 (unsigned long)w->worker_id, (unsigned long)dest_id, why,
				 doca_error_get_name(status));
		} else {
			w->stats.domains_committed++;
			sdp_urom_wstats_touch(&w->stats);
			sdp_info("worker %lu: domain of %u members from dest %lu in use",
				 (unsigned long)w->worker_id, in->u.w_domain_commit.num_members,
				 (unsigned long)dest_id);
		}
		break;
	case SDP_UROM_MSG_W_DOMAIN_CLEAR:
	default:
		dest_id = in->u.w_domain_clear.dest_id;
		if (urom_worker_host_of(w, ep, dest_id, in->hdr.type) == NULL)
			return;
		status = sdp_urom_wdom_clear(&w->doms, dest_id, in->u.w_domain_clear.domain_key);
		if (status != DOCA_SUCCESS)
			snprintf(why, sizeof(why), "no such domain");
		break;
	}
	urom_worker_domain_reply(w, ep, in->hdr.req_id, status, why);
}

static void urom_worker_version_reject(struct sdp_urom_worker *w, ucp_ep_h ep,
				       const struct sdp_urom_msg *in)
{
	static const char software[] = "softdpu-urom-worker";
	struct sdp_urom_msg msg;

	sdp_warn("worker %lu: message of protocol version %u, this worker speaks %u",
		 (unsigned long)w->worker_id, in->hdr.version, SDP_UROM_PROTO_VERSION);
	if (ep == NULL)
		return;

	memset(&msg.hdr, 0, sizeof(msg.hdr));
	msg.hdr.type = SDP_UROM_MSG_VERSION_REJECT;
	msg.hdr.req_id = in->hdr.req_id;
	msg.u.version_reject.version = SDP_UROM_PROTO_VERSION;
	msg.u.version_reject.software.data = (const uint8_t *)software;
	msg.u.version_reject.software.len = sizeof(software) - 1;
	(void)urom_worker_ep_send(w, ep, &msg);
}

static void urom_worker_handle_ep_msg(struct sdp_urom_worker *w, ucp_ep_h ep, const void *data,
				      size_t len)
{
	struct sdp_urom_msg *msg = &w->msg;
	doca_error_t status;
	char why[160];

	status = sdp_urom_msg_unpack_why(data, len, msg, why, sizeof(why));
	if (status == DOCA_ERROR_NOT_SUPPORTED) {
		urom_worker_version_reject(w, ep, msg);
		return;
	}
	if (status != DOCA_SUCCESS) {
		sdp_warn("worker %lu: malformed message from a host dropped: %s",
			 (unsigned long)w->worker_id, why);
		return;
	}

	switch (msg->hdr.type) {
	case SDP_UROM_MSG_W_CMD:
		urom_worker_handle_cmd(w, ep, msg);
		break;
	case SDP_UROM_MSG_W_CONNECT:
		urom_worker_handle_connect(w, ep, msg);
		break;
	case SDP_UROM_MSG_W_DISCONNECT:
		urom_worker_handle_disconnect(w, ep, msg);
		break;
	case SDP_UROM_MSG_W_DOMAIN_ADDR:
		urom_worker_handle_domain_addr(w, ep, msg);
		break;
	case SDP_UROM_MSG_W_DOMAIN_MEMBER:
	case SDP_UROM_MSG_W_DOMAIN_COMMIT:
	case SDP_UROM_MSG_W_DOMAIN_CLEAR:
		urom_worker_handle_domain(w, ep, msg);
		break;
	default:
		sdp_warn("worker %lu: unexpected %s from a host, dropped",
			 (unsigned long)w->worker_id, sdp_urom_msg_type_name(msg->hdr.type));
		break;
	}
}

/*
 * Receive callback. sdp_ucx delivers messages after ucp_worker_progress has returned (never
 * from inside a UCX callback), so the handlers may send and call plugins right here.
 */
static void urom_worker_recv(void *arg, ucp_ep_h reply_ep, const void *data, size_t len)
{
	struct sdp_urom_worker *w = arg;
	const uint8_t *p = data;
	char why[160];
	size_t n;

	/* One or more messages back to back (sdp_urom_proto.h). */
	while (len > 0) {
		if (sdp_urom_msg_next(p, len, &n, why, sizeof(why)) != DOCA_SUCCESS) {
			sdp_warn("worker %lu: the last %zu bytes of an active message from a host "
				 "dropped: %s",
				 (unsigned long)w->worker_id, len, why);
			return;
		}
		urom_worker_handle_ep_msg(w, reply_ep, p, n);
		p += n;
		len -= n;
	}
}

static void urom_worker_add_host(struct sdp_urom_worker *w, const struct sdp_urom_msg *in)
{
	struct sdp_urom_worker_host *host = urom_worker_host_find(w, in->u.sw_add_host.dest_id);
	struct sdp_urom_worker_host *hosts;
	size_t cap;

	if (host != NULL) {
		sdp_warn("worker %lu: dest %lu announced again, new token replaces the old one",
			 (unsigned long)w->worker_id, (unsigned long)host->dest_id);
		memcpy(host->token, in->u.sw_add_host.token, SDP_UROM_TOKEN_LEN);
		urom_worker_host_flush(w, host, 1);
		host->ep = NULL;
		return;
	}

	if (w->num_hosts == w->hosts_cap) {
		cap = w->hosts_cap ? w->hosts_cap * 2 : 8;
		hosts = realloc(w->hosts, cap * sizeof(*hosts));
		if (hosts == NULL) {
			sdp_error("worker %lu: no memory for %zu host entries, dest %lu refused",
				  (unsigned long)w->worker_id, cap,
				  (unsigned long)in->u.sw_add_host.dest_id);
			return;
		}
		w->hosts = hosts;
		w->hosts_cap = cap;
	}

	host = &w->hosts[w->num_hosts++];
	memset(host, 0, sizeof(*host));
	host->dest_id = in->u.sw_add_host.dest_id;
	memcpy(host->token, in->u.sw_add_host.token, SDP_UROM_TOKEN_LEN);
	sdp_debug("worker %lu: dest %lu may connect", (unsigned long)w->worker_id,
		  (unsigned long)host->dest_id);
}

static void urom_worker_del_host(struct sdp_urom_worker *w, uint64_t dest_id)
{
	struct sdp_urom_worker_host *host = urom_worker_host_find(w, dest_id);

	if (host == NULL) {
		sdp_warn("worker %lu: SW_DEL_HOST for unknown dest %lu",
			 (unsigned long)w->worker_id, (unsigned long)dest_id);
		return;
	}
	sdp_urom_wdom_drop_owner(&w->doms, dest_id);
	urom_worker_host_flush(w, host, 1);
	free(host->batch);
	*host = w->hosts[--w->num_hosts];
	sdp_urom_wstats_touch(&w->stats);
	sdp_debug("worker %lu: dest %lu removed, %zu left", (unsigned long)w->worker_id,
		  (unsigned long)dest_id, w->num_hosts);
}

static void urom_worker_handle_ctrl_msg(struct sdp_urom_worker *w, size_t len)
{
	struct sdp_urom_msg *msg = &w->ctrl_msg;
	doca_error_t status;
	char why[160];

	status = sdp_urom_msg_unpack_why(w->ctrl_buf, len, msg, why, sizeof(why));
	if (status != DOCA_SUCCESS) {
		sdp_error("worker %lu: bad message of %zu bytes from the service dropped: %s",
			  (unsigned long)w->worker_id, len,
			  status == DOCA_ERROR_NOT_SUPPORTED ? "another protocol version" : why);
		return;
	}

	switch (msg->hdr.type) {
	case SDP_UROM_MSG_SW_ADD_HOST:
		urom_worker_add_host(w, msg);
		break;
	case SDP_UROM_MSG_SW_DEL_HOST:
		urom_worker_del_host(w, msg->u.sw_del_host.dest_id);
		break;
	case SDP_UROM_MSG_SW_EXIT:
		sdp_debug("worker %lu: exit requested, %zu hosts left", (unsigned long)w->worker_id,
			  w->num_hosts);
		w->exit_requested = 1;
		break;
	default:
		sdp_warn("worker %lu: unexpected %s from the service, dropped",
			 (unsigned long)w->worker_id, sdp_urom_msg_type_name(msg->hdr.type));
		break;
	}
}

/* Read every frame queued on the control socket (never blocks). */
static void urom_worker_ctrl_drain(struct sdp_urom_worker *w)
{
	ssize_t n;

	while (!w->ctrl_closed) {
		n = recv(w->ctrl_fd, w->ctrl_buf, SDP_UROM_WORKER_CTRL_BUF,
			 MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			sdp_error("worker %lu: failed to read the control socket: %m",
				  (unsigned long)w->worker_id);
			w->ctrl_closed = 1;
			return;
		}
		if (n == 0) {
			sdp_info("worker %lu: the service closed the control socket",
				 (unsigned long)w->worker_id);
			w->ctrl_closed = 1;
			return;
		}
		if ((size_t)n > SDP_UROM_WORKER_CTRL_BUF) {
			sdp_error("worker %lu: control message of %zd bytes exceeds %d, dropped",
				  (unsigned long)w->worker_id, n, SDP_UROM_WORKER_CTRL_BUF);
			continue;
		}
		urom_worker_handle_ctrl_msg(w, (size_t)n);
	}
}

/* Tell the service how start-up went: SW_READY {pid, status, worker address}. */
static doca_error_t urom_worker_send_ready(struct sdp_urom_worker *w, doca_error_t result,
					   const void *addr, size_t addr_len)
{
	struct sdp_urom_msg msg;

	memset(&msg.hdr, 0, sizeof(msg.hdr));
	msg.hdr.type = SDP_UROM_MSG_SW_READY;
	msg.u.sw_ready.pid = (uint32_t)getpid();
	msg.u.sw_ready.status = (uint32_t)result;
	msg.u.sw_ready.worker_addr.data = addr;
	msg.u.sw_ready.worker_addr.len = (uint32_t)addr_len;
	return urom_worker_ctrl_send(w, &msg, 0);
}

/* Commands outstanding at plugins that must be polled (those without a wakeup fd). */
static uint64_t urom_worker_outstanding(const struct sdp_urom_worker *w)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < w->num_plugins; i++)
		if (w->plugins[i].wake_fd < 0)
			total += w->plugins[i].outstanding;
	return total;
}

/* Arm every plugin's wakeup fd; 1 when one says events are pending (do not sleep). */
static int urom_worker_plugins_arm(struct sdp_urom_worker *w)
{
	size_t i;

	for (i = 0; i < w->num_plugins; i++) {
		struct sdp_urom_worker_plugin *pl = &w->plugins[i];
		doca_error_t st;

		if (pl->wake_fd < 0)
			continue;
		st = pl->p.arm(&pl->p.ctx);
		if (st == DOCA_ERROR_AGAIN)
			return 1;
		if (st != DOCA_SUCCESS) {
			/* A broken arm would keep the loop awake for good: poll this one instead. */
			sdp_warn("worker %lu: plugin %s's arm failed (%s); polled from now on",
				 (unsigned long)w->worker_id, pl->p.name, doca_error_get_name(st));
			(void)epoll_ctl(w->epfd, EPOLL_CTL_DEL, pl->wake_fd, NULL);
			pl->wake_fd = -1;
			return 1;
		}
	}
	return 0;
}

static doca_error_t urom_worker_epoll_add(struct sdp_urom_worker *w, int fd);

/* Put the wakeup fds of the plugins that offer one into the epoll set. */
static void urom_worker_plugins_wake_init(struct sdp_urom_worker *w)
{
	size_t i;
	int fd;

	for (i = 0; i < w->num_plugins; i++) {
		struct sdp_urom_worker_plugin *pl = &w->plugins[i];

		fd = -1;
		if (pl->p.wakeup_fd == NULL || pl->p.wakeup_fd(&pl->p.ctx, &fd) != DOCA_SUCCESS ||
		    fd < 0)
			continue;
		if (urom_worker_epoll_add(w, fd) != DOCA_SUCCESS) {
			sdp_warn("worker %lu: plugin %s's wakeup fd not watched; polled instead",
				 (unsigned long)w->worker_id, pl->p.name);
			continue;
		}
		pl->wake_fd = fd;
		sdp_debug("worker %lu: plugin %s wakes the loop through fd %d",
			  (unsigned long)w->worker_id, pl->p.name, fd);
	}
}

/* SIGTERM / SIGINT end the loop like SW_EXIT, but at once: plugins still get closed. */
static void urom_worker_signal_read(struct sdp_urom_worker *w)
{
	struct signalfd_siginfo info;
	ssize_t n;

	n = read(w->sigfd, &info, sizeof(info));
	if (n != (ssize_t)sizeof(info))
		return; /* EAGAIN: nothing pending after all */
	w->signaled = (int)info.ssi_signo;
}

/* Receive SIGTERM and SIGINT through a descriptor the loop polls. */
static doca_error_t urom_worker_signals_init(struct sdp_urom_worker *w)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) {
		sdp_error("worker %lu: sigprocmask failed: %m", (unsigned long)w->worker_id);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	w->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (w->sigfd < 0) {
		sdp_error("worker %lu: signalfd failed: %m", (unsigned long)w->worker_id);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	return DOCA_SUCCESS;
}

static uint64_t urom_worker_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * Push a snapshot of the counters to the service (SW_STATS), without blocking: when the control
 * socket is full the snapshot stays due and goes out with the next one.
 */
static void urom_worker_stats_send(struct sdp_urom_worker *w, uint64_t now_us)
{
	uint32_t connected = 0;
	doca_error_t status;

	for (size_t i = 0; i < w->num_hosts; i++)
		if (w->hosts[i].ep != NULL)
			connected++;
	sdp_urom_wstats_fill(&w->stats, now_us, connected, &w->stats_msg);
	w->stats.last_sent_us = now_us;
	status = urom_worker_ctrl_send(w, &w->stats_msg, MSG_DONTWAIT);
	if (status == DOCA_SUCCESS)
		w->stats.dirty = 0;
	else
		sdp_debug("worker %lu: SW_STATS not sent (%s), tried again later",
			  (unsigned long)w->worker_id, doca_error_get_name(status));
}

/*
 * A snapshot is due when a counter changed and SDP_UROM_STATS_INTERVAL_MS passed since the last
 * one, or, as the heartbeat the service's liveness check waits for, when heartbeat_us passed
 * since the last one, changed or not: send it now, or shorten the coming sleep (*timeout, ms,
 * 0 = none) to when it is due. Called on every turn of the loop, busy or idle, so a worker
 * whose plugins keep returning to the loop never misses its heartbeat.
 */
static void urom_worker_stats_tick(struct sdp_urom_worker *w, int *timeout)
{
	uint64_t now, due = UINT64_MAX, left_ms;

	if ((!w->stats.dirty && w->heartbeat_us == 0) || w->ctrl_closed)
		return;
	now = urom_worker_now_us();
	if (w->stats.dirty)
		due = w->stats.last_sent_us + (uint64_t)SDP_UROM_STATS_INTERVAL_MS * 1000u;
	if (w->heartbeat_us != 0 && w->stats.last_sent_us + w->heartbeat_us < due)
		due = w->stats.last_sent_us + w->heartbeat_us;
	if (now >= due) {
		urom_worker_stats_send(w, now);
		if (w->heartbeat_us == 0)
			return;
		due = now + w->heartbeat_us; /* the next heartbeat: the sleep must end by then */
	}
	left_ms = (due - now + 999) / 1000;
	if (*timeout != 0 && left_ms < (uint64_t)*timeout)
		*timeout = (int)left_ms;
}

static doca_error_t urom_worker_loop(struct sdp_urom_worker *w)
{
	struct epoll_event events[8];
	int pending_ms = 0, timeout, busy, n, i, k;
	unsigned int poll_rounds = 0;
	uint64_t last_active_us = 0;
	doca_error_t status;

	while (!w->ctrl_closed && !w->signaled && !(w->exit_requested && w->num_hosts == 0)) {
		busy = 0;
		for (k = 0; k < SDP_UROM_WORKER_PROGRESS_BURST; k++) {
			if (!sdp_ucx_worker_progress(&w->ucx))
				break;
			busy = 1;
		}
		busy |= urom_worker_plugins_progress(w) > 0;
		urom_worker_flush_all(w);

		if (busy) {
			timeout = 0;
			pending_ms = 0;
			last_active_us = urom_worker_now_us();
		} else if (urom_worker_now_us() - last_active_us < SDP_UROM_WORKER_POLL_US) {
			/*
			 * Traffic just passed: the next message usually follows within a few
			 * microseconds, and catching it without sleeping spares both sides a
			 * wakeup. Bounded: once the window closes, the loop sleeps.
			 */
			if (++poll_rounds % SDP_UROM_WORKER_POLL_FD_ROUNDS != 0)
				continue;
			timeout = 0;
		} else if (urom_worker_outstanding(w) > 0) {
			pending_ms = pending_ms == 0 ? 1 : pending_ms * 2;
			if (pending_ms > SDP_UROM_WORKER_PENDING_MAX_MS)
				pending_ms = SDP_UROM_WORKER_PENDING_MAX_MS;
			timeout = pending_ms;
		} else {
			timeout = SDP_UROM_WORKER_IDLE_MS;
		}
		urom_worker_stats_tick(w, &timeout);

		if (timeout != 0) {
			status = sdp_ucx_worker_arm(&w->ucx);
			if (status == DOCA_ERROR_AGAIN)
				timeout = 0;
			else if (status != DOCA_SUCCESS)
				return status;
			if (timeout != 0 && urom_worker_plugins_arm(w))
				timeout = 0;
		}

		n = epoll_wait(w->epfd, events, 8, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			sdp_error("worker %lu: epoll_wait failed: %m", (unsigned long)w->worker_id);
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		for (i = 0; i < n; i++) {
			if (events[i].data.fd == w->ctrl_fd)
				urom_worker_ctrl_drain(w);
			else if (events[i].data.fd == w->sigfd)
				urom_worker_signal_read(w);
		}
	}

	urom_worker_flush_all(w);
	sdp_info("worker %lu: exiting (%s)", (unsigned long)w->worker_id,
		 w->signaled	? strsignal(w->signaled) :
		 w->ctrl_closed ? "control socket closed" :
				  "asked to exit");
	return DOCA_SUCCESS;
}

static doca_error_t urom_worker_epoll_add(struct sdp_urom_worker *w, int fd)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		sdp_error("worker %lu: epoll_ctl(ADD, fd %d) failed: %m",
			  (unsigned long)w->worker_id, fd);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	return DOCA_SUCCESS;
}

/* Load and open every plugin; the first failure stops and is returned. */
static doca_error_t urom_worker_plugins_start(struct sdp_urom_worker *w,
					      const struct sdp_urom_worker_params *params)
{
	doca_error_t status;
	size_t i, j;

	w->plugins = calloc(params->num_plugins ? params->num_plugins : 1, sizeof(*w->plugins));
	if (w->plugins == NULL) {
		sdp_error("worker %lu: no memory for %zu plugins", (unsigned long)w->worker_id,
			  params->num_plugins);
		return DOCA_ERROR_NO_MEMORY;
	}

	for (i = 0; i < params->num_plugins; i++) {
		for (j = 0; j < i; j++) {
			if (params->plugins[j].id == params->plugins[i].id) {
				sdp_error("worker %lu: plugins %s and %s share id %#lx",
					  (unsigned long)w->worker_id, params->plugins[j].path,
					  params->plugins[i].path,
					  (unsigned long)params->plugins[i].id);
				return DOCA_ERROR_INVALID_VALUE;
			}
		}
		w->plugins[i].wake_fd = -1;
		status = sdp_urom_plugin_load(params->plugins[i].path, params->plugins[i].id,
					      &w->plugins[i].p);
		if (status != DOCA_SUCCESS)
			return status;
		w->num_plugins++;
		sdp_urom_wdom_bind(&w->plugins[i].p.ctx, &w->doms);
		status = sdp_urom_plugin_open(&w->plugins[i].p);
		if (status != DOCA_SUCCESS)
			return status;
		sdp_info("worker %lu: plugin %s (id %#lx, version %#lx) open",
			 (unsigned long)w->worker_id, w->plugins[i].p.name,
			 (unsigned long)w->plugins[i].p.id, (unsigned long)w->plugins[i].p.version);
	}
	return DOCA_SUCCESS;
}

static void urom_worker_cleanup(struct sdp_urom_worker *w)
{
	size_t i;

	for (i = w->num_plugins; i > 0; i--)
		sdp_urom_plugin_unload(&w->plugins[i - 1].p);
	free(w->plugins);
	sdp_urom_wdom_fini(&w->doms);
	if (w->ucx_ready)
		sdp_ucx_worker_fini(&w->ucx);
	if (w->ucp_context != NULL)
		sdp_ucx_context_destroy(w->ucp_context);
	if (w->epfd >= 0)
		close(w->epfd);
	if (w->sigfd >= 0)
		close(w->sigfd);
	for (i = 0; i < w->num_hosts; i++)
		free(w->hosts[i].batch);
	free(w->hosts);
	free(w->msg_buf);
	free(w->notif_buf);
	free(w->ctrl_buf);
}

doca_error_t sdp_urom_worker_run(const struct sdp_urom_worker_params *params)
{
	struct sdp_urom_worker w;
	size_t addr_len = 0;
	void *addr = NULL;
	doca_error_t status, ready_status;

	if (params == NULL || params->ctrl_fd < 0 ||
	    params->max_msg_size < SDP_UROM_NOTIFY_HDR_LEN ||
	    (params->num_plugins > 0 && params->plugins == NULL)) {
		sdp_error("invalid worker parameters: ctrl fd %d, message size %zu (at least %u)",
			  params != NULL ? params->ctrl_fd : -1,
			  params != NULL ? params->max_msg_size : 0, SDP_UROM_NOTIFY_HDR_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}

	memset(&w, 0, sizeof(w));
	w.worker_id = params->worker_id;
	w.max_msg_size = params->max_msg_size;
	w.heartbeat_us = (uint64_t)params->heartbeat_ms * 1000u;
	w.ctrl_fd = params->ctrl_fd;
	w.epfd = -1;
	w.sigfd = -1;
	sdp_urom_wstats_init(&w.stats, urom_worker_now_us());

	w.ctrl_buf = malloc(SDP_UROM_WORKER_CTRL_BUF);
	w.notif_buf = malloc(w.max_msg_size);
	w.msg_cap = w.max_msg_size + SDP_UROM_WORKER_MSG_OVERHEAD;
	w.msg_buf = malloc(w.msg_cap);
	if (w.ctrl_buf == NULL || w.notif_buf == NULL || w.msg_buf == NULL) {
		sdp_error("worker %lu: no memory for buffers of message size %zu",
			  (unsigned long)w.worker_id, w.max_msg_size);
		status = DOCA_ERROR_NO_MEMORY;
		goto out_cleanup;
	}

	/*
	 * From here on every start-up failure is reported to the service in SW_READY. Signals
	 * are blocked first, before UCX and the plugins start threads that would inherit an
	 * unblocked mask and take SIGTERM's default action for the whole process.
	 */
	ready_status = urom_worker_signals_init(&w);
	if (ready_status != DOCA_SUCCESS)
		goto out_report;
	/*
	 * The largest packed notification, for plugins that bound what they answer inline
	 * (softdpu/urom_plugin.h): in the environment before any plugin opens.
	 */
	{
		char size[32];

		snprintf(size, sizeof(size), "%zu", w.max_msg_size);
		if (setenv(SOFTDPU_PLUGIN_MSG_SIZE_ENV, size, 1) != 0)
			sdp_warn("worker %lu: cannot set %s: %m", (unsigned long)w.worker_id,
				 SOFTDPU_PLUGIN_MSG_SIZE_ENV);
	}
	ready_status = urom_worker_plugins_start(&w, params);
	if (ready_status != DOCA_SUCCESS)
		goto out_report;

	/* UCX_NET_DEVICES, when set, comes from the environment the service gave us. */
	ready_status = sdp_ucx_context_create(NULL, &w.ucp_context);
	if (ready_status != DOCA_SUCCESS)
		goto out_report;
	sdp_urom_wstats_ucx(&w.stats, w.ucp_context);
	ready_status = sdp_ucx_worker_init(&w.ucx, w.ucp_context, UCS_THREAD_MODE_SINGLE,
					   urom_worker_recv, &w);
	if (ready_status != DOCA_SUCCESS)
		goto out_report;
	w.ucx_ready = 1;
	/*
	 * Hosts send commands of at most the service's message size and domain member records
	 * of at most SDP_UROM_DOM_MAX_RECORD bytes: nothing longer is read.
	 */
	sdp_ucx_worker_set_max_recv(&w.ucx, (w.max_msg_size > SDP_UROM_DOM_MAX_RECORD ?
						     w.max_msg_size :
						     SDP_UROM_DOM_MAX_RECORD) +
						    SDP_UROM_WORKER_MSG_OVERHEAD);
	ready_status = sdp_ucx_worker_address(&w.ucx, &addr, &addr_len);
	if (ready_status != DOCA_SUCCESS)
		goto out_report;

	w.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w.epfd < 0) {
		sdp_error("worker %lu: epoll_create1 failed: %m", (unsigned long)w.worker_id);
		ready_status = DOCA_ERROR_OPERATING_SYSTEM;
		goto out_report;
	}
	ready_status = urom_worker_epoll_add(&w, w.ctrl_fd);
	if (ready_status != DOCA_SUCCESS)
		goto out_report;
	ready_status = urom_worker_epoll_add(&w, w.ucx.efd);
	if (ready_status != DOCA_SUCCESS)
		goto out_report;
	ready_status = urom_worker_epoll_add(&w, w.sigfd);
	if (ready_status == DOCA_SUCCESS)
		urom_worker_plugins_wake_init(&w);

out_report:
	status =
		urom_worker_send_ready(&w, ready_status, ready_status == DOCA_SUCCESS ? addr : NULL,
				       ready_status == DOCA_SUCCESS ? addr_len : 0);
	free(addr);
	if (ready_status != DOCA_SUCCESS) {
		status = ready_status;
		goto out_cleanup;
	}
	if (status != DOCA_SUCCESS)
		goto out_cleanup;

	sdp_info("worker %lu: ready, pid %d, %zu plugins, message size %zu, UCX %s (%s)",
		 (unsigned long)w.worker_id, (int)getpid(), w.num_plugins, w.max_msg_size,
		 w.stats.ucx_version, w.stats.ucx_resources);
	/* The first snapshot right away: the service's status shows the UCX facts at once. */
	urom_worker_stats_send(&w, urom_worker_now_us());
	status = urom_worker_loop(&w);

out_cleanup:
	urom_worker_cleanup(&w);
	return status;
}
