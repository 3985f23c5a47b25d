/*
 * softdpu-urom-worker: the runtime behind one UROM worker process.
 *
 * The service starts the process with a SOCK_SEQPACKET control socket, the plugins to load and
 * the message size. The runtime opens the plugins, brings up its own UCP worker, reports
 * SW_READY {pid, status, UCP address} to the service, then serves host connections: a host
 * presents (dest id, token) in W_CONNECT, the token having reached the worker beforehand in the
 * service's SW_ADD_HOST; commands (W_CMD) go to the plugin whose id is the command type, and
 * notifications come back (W_NOTIF) to the dest id they name. The loop sleeps in epoll on the
 * UCP wakeup fd and the control socket; it never spins while idle.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef UROM_WORKER_H_
#define UROM_WORKER_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_error.h"

/* A plugin to load: the path and the id the service gave it. */
struct sdp_urom_worker_plugin_arg {
	const char *path;
	uint64_t id;
};

struct sdp_urom_worker_params {
	int ctrl_fd;	       /* control socket to the service (SOCK_SEQPACKET) */
	uint64_t worker_id;    /* for logs */
	size_t max_msg_size;   /* largest packed notification (header included) */
	uint32_t heartbeat_ms; /* SW_STATS at least this often; 0 = only when counters change */
	const struct sdp_urom_worker_plugin_arg *plugins;
	size_t num_plugins;
};

/*
 * Run a worker until the service says SW_EXIT (and no host remains) or the control socket
 * closes. DOCA_SUCCESS on an orderly exit; the failure that stopped it otherwise (plugins that
 * fail to load or open are reported to the service in SW_READY first).
 */
doca_error_t sdp_urom_worker_run(const struct sdp_urom_worker_params *params);

#endif /* UROM_WORKER_H_ */
