/*
 * softdpu internal: the sizes of the fixed parts of a UROM worker command and notification
 * (doca_urom_plugin.h's struct urom_worker_cmd and struct urom_worker_notify without their
 * payload), as the host library (cmd_task.c) and the worker runtime (worker.c) frame them. The
 * numbers are part of what a host sees (a command task's payload capacity is the message size
 * minus SDP_UROM_CMD_HDR_LEN, docs/errors.md), and the static assertions tie them to the
 * structures' layout.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_HDR_H_
#define SDP_UROM_HDR_H_

#include <stddef.h>

#include "doca_urom_plugin.h"

#define SDP_UROM_CMD_HDR_LEN 24u    /* struct urom_worker_cmd without plugin_cmd */
#define SDP_UROM_NOTIFY_HDR_LEN 32u /* struct urom_worker_notify without plugin_notif */

_Static_assert(SDP_UROM_CMD_HDR_LEN == offsetof(struct urom_worker_cmd, plugin_cmd),
	       "SDP_UROM_CMD_HDR_LEN must be where struct urom_worker_cmd's payload starts");
_Static_assert(SDP_UROM_NOTIFY_HDR_LEN == offsetof(struct urom_worker_notify, plugin_notif),
	       "SDP_UROM_NOTIFY_HDR_LEN must be where struct urom_worker_notify's payload starts");

#endif /* SDP_UROM_HDR_H_ */
