/*
 * softdpu plugin helper: cached endpoints to other members' plugin UCP workers
 * (sdp_plugin_peer.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_plugin_peer.h"

#include <stdlib.h>
#include <time.h>

#include <doca_log.h>
#include <doca_urom_plugin.h>

#include "sdp_plugin_util.h"

DOCA_LOG_REGISTER(UROM::PLUGIN::PEER);

struct sdp_plugin_peer {
	ucs_list_link_t link;
	uint64_t id;
	uint64_t uid; /* of the UCP worker it leads to */
	ucp_ep_h ep;
};

static int64_t peer_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sdp_plugin_peers_init(struct sdp_plugin_peers *ps, ucp_worker_h worker)
{
	ucs_list_head_init(&ps->list);
	ps->worker = worker;
}

doca_error_t sdp_plugin_peer_ep(struct sdp_plugin_peers *ps, struct urom_worker_ctx *ctx,
				uint64_t id, ucp_ep_h *ep_p)
{
	ucp_worker_address_attr_t attr = {.field_mask = UCP_WORKER_ADDRESS_ATTR_FIELD_UID};
	ucp_ep_params_t params = {0};
	struct sdp_plugin_peer *p;
	void *addr = NULL;
	doca_error_t st;
	ucs_status_t us;

	st = doca_urom_worker_domain_addr_lookup(ctx, id, &addr);
	if (st != DOCA_SUCCESS || addr == NULL) {
		DOCA_LOG_ERR("member %llu: not in the domain (%s)", (unsigned long long)id,
			     doca_error_get_name(st));
		return DOCA_ERROR_NOT_FOUND;
	}
	us = ucp_worker_address_query(addr, &attr);
	if (us != UCS_OK) {
		DOCA_LOG_ERR("address of member %llu unreadable: %s", (unsigned long long)id,
			     ucs_status_string(us));
		return DOCA_ERROR_DRIVER;
	}
	ucs_list_for_each(p, &ps->list, link) {
		if (p->id == id && p->uid == attr.worker_uid) {
			*ep_p = p->ep;
			return DOCA_SUCCESS;
		}
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		DOCA_LOG_ERR("no memory for an endpoint to member %llu", (unsigned long long)id);
		return DOCA_ERROR_NO_MEMORY;
	}
	params.field_mask =
		UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
	params.address = addr;
	params.err_mode = sdp_plugin_err_mode();
	us = ucp_ep_create(ps->worker, &params, &p->ep);
	if (us != UCS_OK) {
		DOCA_LOG_ERR("ucp_ep_create to member %llu: %s", (unsigned long long)id,
			     ucs_status_string(us));
		free(p);
		return DOCA_ERROR_DRIVER;
	}
	p->id = id;
	p->uid = attr.worker_uid;
	ucs_list_add_head(&ps->list, &p->link);
	*ep_p = p->ep;
	return DOCA_SUCCESS;
}

void sdp_plugin_peers_close(struct sdp_plugin_peers *ps, int timeout_ms)
{
	ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				 .flags = UCP_EP_CLOSE_FLAG_FORCE};
	int64_t deadline = peer_now_ms() + timeout_ms;

	while (!ucs_list_is_empty(&ps->list)) {
		struct sdp_plugin_peer *e =
			ucs_list_extract_head(&ps->list, struct sdp_plugin_peer, link);
		ucs_status_ptr_t req = ucp_ep_close_nbx(e->ep, &p);

		if (UCS_PTR_IS_PTR(req)) {
			while (ucp_request_check_status(req) == UCS_INPROGRESS &&
			       peer_now_ms() < deadline)
				ucp_worker_progress(ps->worker);
			ucp_request_free(req);
		}
		free(e);
	}
}
