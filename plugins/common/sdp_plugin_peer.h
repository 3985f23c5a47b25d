/*
 * softdpu plugin helper: endpoints from a plugin's own UCP worker to the plugin UCP workers of
 * other domain members (for active messages between worker halves: worker_rma's AMs,
 * worker_coll's ARRIVE / DONE).
 *
 * The runtime is asked for the member's address every time (a member that left is NOT_FOUND);
 * endpoints are cached by (member id, UCP worker unique id), so a later domain that reuses an
 * id gets a new endpoint while one of an older worker under that id stays until close. One
 * cache per UCP worker, used from the worker loop's thread only.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_PLUGIN_PEER_H_
#define SDP_PLUGIN_PEER_H_

#include <stdint.h>

#include <ucp/api/ucp.h>
#include <ucs/datastruct/list.h>

#include "doca_error.h"

struct urom_worker_ctx;

struct sdp_plugin_peers {
	ucs_list_link_t list;
	ucp_worker_h worker;
};

void sdp_plugin_peers_init(struct sdp_plugin_peers *ps, ucp_worker_h worker);
/*
 * The endpoint to domain member id of ctx's domain: DOCA_ERROR_NOT_FOUND (no such member),
 * DOCA_ERROR_DRIVER (its address is unreadable, or UCX refused the endpoint), or
 * DOCA_ERROR_NO_MEMORY; each logged once with what names the member.
 */
doca_error_t sdp_plugin_peer_ep(struct sdp_plugin_peers *ps, struct urom_worker_ctx *ctx,
				uint64_t id, ucp_ep_h *ep_p);
/* Close every endpoint (forced), progressing the worker for at most timeout_ms in all. */
void sdp_plugin_peers_close(struct sdp_plugin_peers *ps, int timeout_ms);

#endif /* SDP_PLUGIN_PEER_H_ */
