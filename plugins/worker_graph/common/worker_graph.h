/*
 * worker_graph plugin: the messages its host half (host/urom_graph.c) and its worker half
 * (dpu/worker_graph.c) exchange inside struct urom_worker_cmd / struct urom_worker_notify.
 * Both halves must be built from the same copy of this file; the host half also refuses a
 * worker half whose urom_plugin_get_version() differs from UROM_WORKER_GRAPH_VERSION.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef WORKER_GRAPH_H_
#define WORKER_GRAPH_H_

#include <stdint.h>

/* Version both halves report; a mismatch fails urom_graph_init() with UNSUPPORTED_VERSION. */
#define UROM_WORKER_GRAPH_VERSION 0x01

/* Commands the worker half understands (urom_worker_graph_cmd.type). */
enum urom_worker_graph_cmd_type {
	UROM_WORKER_CMD_GRAPH_LOOPBACK = 0, /* echo a 64-bit value back */
};

/* Loopback command: the value to echo. */
struct urom_worker_graph_cmd_loopback {
	uint64_t data;
};

/* One command, the plugin_cmd bytes of struct urom_worker_cmd (16 bytes). */
struct urom_worker_graph_cmd {
	uint64_t type; /* enum urom_worker_graph_cmd_type */
	union {
		struct urom_worker_graph_cmd_loopback loopback;
	};
};

/* Notifications the worker half sends (urom_worker_notify_graph.type). */
enum urom_worker_graph_notify_type {
	UROM_WORKER_NOTIFY_GRAPH_LOOPBACK = 0,
};

/* Loopback notification: the echoed value. */
struct urom_worker_notify_graph_loopback {
	uint64_t data;
};

/* One notification, the plugin_notif bytes of struct urom_worker_notify (16 bytes). */
struct urom_worker_notify_graph {
	uint64_t type; /* enum urom_worker_graph_notify_type */
	union {
		struct urom_worker_notify_graph_loopback loopback;
	};
};

#endif /* WORKER_GRAPH_H_ */
