/*
 * softdpu-uromd: the status document answered to STATUS_QUERY (and printed by
 * `softdpu service status --json`):
 *   {"version", "doca_api", "protocol", "pid", "uptime_s", "listen", "run_dir",
 *    "max_msg_size", "max_workers", "cpuset", "cpuset_present",
 *    "plugins": [{"id", "version", "name", "path"}], "skipped": [{"path", "reason"}],
 *    "workers": [{"id", "gid", "pid", "state", "plugins", "log",
 *                 "owners": [{"host", "hostname", "pid", "dest_id"}]}]}
 * Numbers are JSON numbers (64-bit ids may exceed what a double holds exactly).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doca_version.h"
#include "sdp_build_config.h"
#include "sdp_log.h"
#include "uromd.h"

SDP_LOG_COMPONENT("uromd");

struct status_buf {
	char *data;
	size_t len;
	size_t cap;
	int failed;
};

static void sb_grow(struct status_buf *b, size_t need)
{
	size_t ncap;
	char *n;

	if (b->failed || b->len + need + 1 <= b->cap)
		return;
	ncap = b->cap ? b->cap : 1024;
	while (ncap < b->len + need + 1)
		ncap *= 2;
	n = realloc(b->data, ncap);
	if (n == NULL) {
		b->failed = 1;
		return;
	}
	b->data = n;
	b->cap = ncap;
}

static void __attribute__((format(printf, 2, 3)))
sb_printf(struct status_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		return;
	}
	sb_grow(b, (size_t)n);
	if (b->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* A JSON string literal. */
static void sb_str(struct status_buf *b, const char *s)
{
	sb_printf(b, "\"");
	for (; s != NULL && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			sb_printf(b, "\\%c", c);
		else if (c == '\n')
			sb_printf(b, "\\n");
		else if (c == '\t')
			sb_printf(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			sb_printf(b, "\\u%04x", c);
		else
			sb_printf(b, "%c", c);
	}
	sb_printf(b, "\"");
}

static const char *status_state_name(enum uromd_worker_state s)
{
	switch (s) {
	case UROMD_WORKER_STARTING:
		return "starting";
	case UROMD_WORKER_READY:
		return "running";
	case UROMD_WORKER_EXITING:
		return "exiting";
	case UROMD_WORKER_DEAD:
		return "dead";
	}
	return "?";
}

doca_error_t uromd_status_json(const struct uromd *d, char **json_p, size_t *len_p)
{
	struct status_buf b = {0};
	char cpus[1024], present[1024], listen[320];
	const char *sep;

	uromd_cpuset_format(&d->cpuset, cpus, sizeof(cpus));
	uromd_cpuset_format(&d->present, present, sizeof(present));
	snprintf(listen, sizeof(listen), "%s:%u", d->cfg.listen_host[0] ? d->cfg.listen_host : "*",
		 d->bound_port);

	sb_printf(&b, "{\"version\":");
	sb_str(&b, SOFTDPU_VERSION);
	sb_printf(&b, ",\"doca_api\":");
	sb_str(&b, DOCA_VERSION_STRING);
	sb_printf(&b, ",\"protocol\":%d,\"pid\":%d,\"uptime_s\":%" PRIu64 ",\"listen\":",
		  SDP_UROM_PROTO_VERSION, (int)getpid(), (uromd_now_ms() - d->start_ms) / 1000);
	sb_str(&b, listen);
	sb_printf(&b, ",\"run_dir\":");
	sb_str(&b, d->run_dir);
	sb_printf(&b, ",\"max_msg_size\":%" PRIu64 ",\"max_workers\":%u,\"cpuset\":",
		  d->cfg.max_msg_size, d->cfg.max_workers);
	sb_str(&b, cpus);
	sb_printf(&b, ",\"cpuset_present\":");
	sb_str(&b, present);

	sb_printf(&b, ",\"plugins\":[");
	for (size_t i = 0; i < d->scan.num_plugins; i++) {
		const struct uromd_plugin *p = &d->scan.plugins[i];

		sb_printf(&b,
			  "%s{\"id\":%" PRIu64 ",\"version\":%" PRIu64 ",\"name\":", i ? "," : "",
			  p->id, p->version);
		sb_str(&b, p->name);
		sb_printf(&b, ",\"path\":");
		sb_str(&b, p->path);
		sb_printf(&b, "}");
	}
	sb_printf(&b, "],\"skipped\":[");
	for (size_t i = 0; i < d->scan.num_skipped; i++) {
		sb_printf(&b, "%s{\"path\":", i ? "," : "");
		sb_str(&b, d->scan.skipped[i].path);
		sb_printf(&b, ",\"reason\":");
		sb_str(&b, d->scan.skipped[i].reason);
		sb_printf(&b, "}");
	}
	sb_printf(&b, "],\"workers\":[");
	sep = "";
	for (const struct uromd_worker *w = d->workers; w != NULL; w = w->next) {
		if (w->state == UROMD_WORKER_DEAD)
			continue;
		sb_printf(&b,
			  "%s{\"id\":%" PRIu64 ",\"gid\":%u,\"pid\":%d,\"state\":\"%s\","
			  "\"plugins\":%" PRIu64 ",\"log\":",
			  sep, w->id, w->gid, (int)w->pid, status_state_name(w->state), w->plugins);
		sb_str(&b, w->log_path);
		sb_printf(&b, ",\"owners\":[");
		for (size_t i = 0; i < w->num_owners; i++) {
			const struct uromd_owner *o = &w->owners[i];

			sb_printf(&b, "%s{\"host\":", i ? "," : "");
			sb_str(&b, o->conn->peer);
			sb_printf(&b, ",\"hostname\":");
			sb_str(&b, o->conn->hostname);
			sb_printf(&b, ",\"pid\":%u,\"dest_id\":%" PRIu64 "}", o->conn->pid,
				  o->dest_id);
		}
		sb_printf(&b, "]}");
		sep = ",";
	}
	sb_printf(&b, "]}\n");
	if (b.failed) {
		free(b.data);
		sdp_error("out of memory building the status document");
		return DOCA_ERROR_NO_MEMORY;
	}
	*json_p = b.data;
	*len_p = b.len;
	return DOCA_SUCCESS;
}
