/*
 * softdpu extension (not part of DOCA): optional entry points a UROM worker plugin may export
 * so that softdpu-urom-worker sleeps on the plugin's own transport instead of polling it.
 *
 * A DOCA plugin with its own UCP worker completes commands asynchronously, through traffic the
 * runtime cannot see. Without these entry points the runtime calls the plugin's progress op
 * every 1..16 ms while the plugin has commands outstanding (docs/plugins.md, "Sleeping"). A
 * plugin that exports both functions below is woken the moment its fd becomes readable, and
 * has no polling delay at all:
 *
 *   softdpu_plugin_wakeup_fd  called once after open; *fd = a pollable descriptor (for a UCP
 *                             worker: ucp_worker_get_efd), owned by the plugin, valid until
 *                             close. DOCA_SUCCESS, or any error to opt out.
 *   softdpu_plugin_arm        called before the runtime sleeps: arm the descriptor (for a UCP
 *                             worker: ucp_worker_arm). DOCA_SUCCESS = armed, sleep;
 *                             DOCA_ERROR_AGAIN = events are pending, call progress first.
 *
 * Both run on the runtime's loop thread, like every op. Built against DOCA, the symbols are
 * simply never looked up, so a plugin exporting them stays a DOCA plugin.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_UROM_PLUGIN_H_
#define SOFTDPU_UROM_PLUGIN_H_

#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct urom_worker_ctx;

/*
 * Set by softdpu-urom-worker in its environment before any plugin's open: the largest packed
 * notification (struct urom_worker_notify header included) the runtime sends, in decimal, i.e.
 * the service's message size. A plugin that returns data inline bounds it with this.
 */
#define SOFTDPU_PLUGIN_MSG_SIZE_ENV "SDP_UROM_WORKER_MAX_MSG_SIZE"

#define SOFTDPU_PLUGIN_WAKEUP_FD_SYMBOL "softdpu_plugin_wakeup_fd"
#define SOFTDPU_PLUGIN_ARM_SYMBOL "softdpu_plugin_arm"

typedef doca_error_t (*softdpu_plugin_wakeup_fd_t)(struct urom_worker_ctx *ctx, int *fd);
typedef doca_error_t (*softdpu_plugin_arm_t)(struct urom_worker_ctx *ctx);

/* Prototypes for plugins that export them (default visibility). */
doca_error_t softdpu_plugin_wakeup_fd(struct urom_worker_ctx *ctx, int *fd);
doca_error_t softdpu_plugin_arm(struct urom_worker_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_UROM_PLUGIN_H_ */
