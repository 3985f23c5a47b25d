/*
 * softdpu internal: setting a UCP active-message handler, header-only so that libdoca_urom,
 * the worker runtime and the plugins (which link none of them) share it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UCX_AM_H_
#define SDP_UCX_AM_H_

#include <string.h>

#include <ucp/api/ucp.h>

/*
 * Set (cb non-NULL) or clear (cb NULL) the whole-message active-message handler of id on worker:
 * UCS_OK or UCX's status.
 */
static inline ucs_status_t sdp_ucx_am_handler(ucp_worker_h worker, unsigned id,
					      ucp_am_recv_callback_t cb, void *arg)
{
	ucp_am_handler_param_t am;

	memset(&am, 0, sizeof(am));
	am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
			UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
	am.id = id;
	am.flags = cb != NULL ? UCP_AM_FLAG_WHOLE_MSG : 0;
	am.cb = cb;
	am.arg = arg;
	return ucp_worker_set_am_recv_handler(worker, &am);
}

#endif /* SDP_UCX_AM_H_ */
