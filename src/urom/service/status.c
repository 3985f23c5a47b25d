/*
 * softdpu-uromd: the status document answered to STATUS_QUERY (and printed by
 * `softdpu service status --json`):
 *   {"version", "doca_api", "protocol", "pid", "uptime_s", "listen", "run_dir",
 *    "max_msg_size", "max_workers", "worker_timeout_ms", "workers_unresponsive", "cpuset",
 *    "cpuset_present",
 *    "plugins": [{"id", "version", "name", "path"}], "skipped": [{"path", "reason"}],
 *    "plugin_path", "warnings": ["..."],
 *    "workers": [{"id", "gid", "pid", "state", "plugins", "log",
 *                 "owners": [{"host", "hostname", "pid", "dest_id"}],
 *                 "ucx": {"version", "tls", "net_devices", "resources": ["tl/dev"]},
 *                 "counters": {"uptime_ms", "cmds", "cmd_bytes", "cmds_refused", "notifs",
 *                              "notif_bytes", "notifs_error", "notifs_dropped",
 *                              "connects_refused", "domains_committed",
 *                              "hosts_connected", "hosts_total"},
 *                 "stats_age_ms"}]}
 * "ucx", "counters" and "stats_age_ms" come from the worker's last SW_STATS (spawn.c keeps
 * it; null until the first one arrived): the status query never waits for a worker.
 * Numbers are JSON numbers (64-bit ids may exceed what a double holds exactly: json-c writes
 * them as unsigned 64-bit integers, exactly). Built with json-c, printed on one line without
 * escaping '/', followed by a newline. "warnings" holds what the service warned about at start
 * that stays true (no plugin found), [] otherwise.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "doca_version.h"
#include "sdp_build_config.h"
#include "sdp_log.h"
#include "uromd.h"

SDP_LOG_COMPONENT("uromd");

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

/* Add key = val to o; val NULL (out of memory) or a failed add marks *failed. */
static void st_add(struct json_object *o, const char *key, struct json_object *val, int *failed)
{
	if (val == NULL || json_object_object_add(o, key, val) != 0) {
		json_object_put(val);
		*failed = 1;
	}
}

static struct json_object *st_str(const char *s)
{
	return json_object_new_string(s != NULL ? s : "");
}

static void st_append(struct json_object *arr, struct json_object *val, int *failed)
{
	if (val == NULL || json_object_array_add(arr, val) != 0) {
		json_object_put(val);
		*failed = 1;
	}
}

static struct json_object *st_plugins(const struct uromd *d, int *failed)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr != NULL && i < d->scan.num_plugins; i++) {
		const struct uromd_plugin *p = &d->scan.plugins[i];
		struct json_object *o = json_object_new_object();

		if (o != NULL) {
			st_add(o, "id", json_object_new_uint64(p->id), failed);
			st_add(o, "version", json_object_new_uint64(p->version), failed);
			st_add(o, "name", st_str(p->name), failed);
			st_add(o, "path", st_str(p->path), failed);
		}
		st_append(arr, o, failed);
	}
	return arr;
}

static struct json_object *st_skipped(const struct uromd *d, int *failed)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr != NULL && i < d->scan.num_skipped; i++) {
		struct json_object *o = json_object_new_object();

		if (o != NULL) {
			st_add(o, "path", st_str(d->scan.skipped[i].path), failed);
			st_add(o, "reason", st_str(d->scan.skipped[i].reason), failed);
		}
		st_append(arr, o, failed);
	}
	return arr;
}

static struct json_object *st_owners(const struct uromd_worker *w, int *failed)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr != NULL && i < w->num_owners; i++) {
		const struct uromd_owner *o = &w->owners[i];
		struct json_object *j = json_object_new_object();

		if (j != NULL) {
			st_add(j, "host", st_str(o->conn->peer), failed);
			st_add(j, "hostname", st_str(o->conn->hostname), failed);
			st_add(j, "pid", json_object_new_int64(o->conn->pid), failed);
			st_add(j, "dest_id", json_object_new_uint64(o->dest_id), failed);
		}
		st_append(arr, j, failed);
	}
	return arr;
}

/* "a,b,c" as a JSON array of strings ([] for ""). */
static struct json_object *st_list(const char *csv, int *failed)
{
	struct json_object *arr = json_object_new_array();
	const char *p = csv;

	while (arr != NULL && *p != '\0') {
		const char *end = strchr(p, ',');
		size_t n = end != NULL ? (size_t)(end - p) : strlen(p);

		if (n > 0)
			st_append(arr, json_object_new_string_len(p, (int)n), failed);
		p += n;
		if (*p == ',')
			p++;
	}
	return arr;
}

static struct json_object *st_ucx(const struct uromd_worker_stats *st, int *failed)
{
	struct json_object *o;

	if (st == NULL || !st->have)
		return NULL;
	o = json_object_new_object();
	if (o == NULL) {
		*failed = 1;
		return NULL;
	}
	st_add(o, "version", st_str(st->ucx_version), failed);
	st_add(o, "tls", st_str(st->ucx_tls), failed);
	st_add(o, "net_devices", st_str(st->ucx_net_devices), failed);
	st_add(o, "resources", st_list(st->ucx_resources, failed), failed);
	return o;
}

static struct json_object *st_counters(const struct uromd_worker_stats *st, int *failed)
{
	struct json_object *o;

	if (st == NULL || !st->have)
		return NULL;
	o = json_object_new_object();
	if (o == NULL) {
		*failed = 1;
		return NULL;
	}
	st_add(o, "uptime_ms", json_object_new_uint64(st->uptime_ms), failed);
	st_add(o, "cmds", json_object_new_uint64(st->cmds), failed);
	st_add(o, "cmd_bytes", json_object_new_uint64(st->cmd_bytes), failed);
	st_add(o, "cmds_refused", json_object_new_uint64(st->cmds_refused), failed);
	st_add(o, "notifs", json_object_new_uint64(st->notifs), failed);
	st_add(o, "notif_bytes", json_object_new_uint64(st->notif_bytes), failed);
	st_add(o, "notifs_error", json_object_new_uint64(st->notifs_error), failed);
	st_add(o, "notifs_dropped", json_object_new_uint64(st->notifs_dropped), failed);
	st_add(o, "connects_refused", json_object_new_uint64(st->connects_refused), failed);
	st_add(o, "domains_committed", json_object_new_uint64(st->domains_committed), failed);
	st_add(o, "hosts_connected", json_object_new_uint64(st->hosts_connected), failed);
	st_add(o, "hosts_total", json_object_new_uint64(st->hosts_total), failed);
	return o;
}

/* Add key = val where val may be NULL on purpose (JSON null). */
static void st_add_nullable(struct json_object *o, const char *key, struct json_object *val,
			    int *failed)
{
	if (json_object_object_add(o, key, val) != 0) {
		json_object_put(val);
		*failed = 1;
	}
}

static struct json_object *st_workers(const struct uromd *d, int *failed)
{
	struct json_object *arr = json_object_new_array();

	for (const struct uromd_worker *w = d->workers; arr != NULL && w != NULL; w = w->next) {
		struct json_object *o;

		if (w->state == UROMD_WORKER_DEAD)
			continue;
		o = json_object_new_object();
		if (o != NULL) {
			st_add(o, "id", json_object_new_uint64(w->id), failed);
			st_add(o, "gid", json_object_new_int64(w->gid), failed);
			st_add(o, "pid", json_object_new_int64(w->pid), failed);
			st_add(o, "state",
			       st_str(w->unresponsive ? "unresponsive" :
							status_state_name(w->state)),
			       failed);
			st_add(o, "plugins", json_object_new_uint64(w->plugins), failed);
			st_add(o, "log", st_str(w->log_path), failed);
			st_add(o, "owners", st_owners(w, failed), failed);
			st_add_nullable(o, "ucx", st_ucx(w->stats, failed), failed);
			st_add_nullable(o, "counters", st_counters(w->stats, failed), failed);
			st_add_nullable(
				o, "stats_age_ms",
				w->stats != NULL && w->stats->have ?
					json_object_new_uint64(uromd_now_ms() - w->stats->recv_ms) :
					NULL,
				failed);
		}
		st_append(arr, o, failed);
	}
	return arr;
}

doca_error_t uromd_status_json(const struct uromd *d, char **json_p, size_t *len_p)
{
	char cpus[1024], present[1024], listen[320];
	struct json_object *root, *warnings;
	const char *text;
	size_t len = 0;
	char *out = NULL;
	int failed = 0;

	uromd_cpuset_format(&d->cpuset, cpus, sizeof(cpus));
	uromd_cpuset_format(&d->present, present, sizeof(present));
	snprintf(listen, sizeof(listen), "%s:%u", d->cfg.listen_host[0] ? d->cfg.listen_host : "*",
		 d->bound_port);

	root = json_object_new_object();
	if (root == NULL)
		goto nomem;
	st_add(root, "version", st_str(SOFTDPU_VERSION), &failed);
	st_add(root, "doca_api", st_str(DOCA_VERSION_STRING), &failed);
	st_add(root, "protocol", json_object_new_int(SDP_UROM_PROTO_VERSION), &failed);
	st_add(root, "pid", json_object_new_int64(getpid()), &failed);
	st_add(root, "uptime_s", json_object_new_uint64((uromd_now_ms() - d->start_ms) / 1000),
	       &failed);
	st_add(root, "listen", st_str(listen), &failed);
	st_add(root, "run_dir", st_str(d->run_dir), &failed);
	st_add(root, "max_msg_size", json_object_new_uint64(d->cfg.max_msg_size), &failed);
	st_add(root, "max_workers", json_object_new_int64(d->cfg.max_workers), &failed);
	st_add(root, "worker_timeout_ms", json_object_new_int64(d->cfg.worker_timeout_ms), &failed);
	st_add(root, "workers_unresponsive", json_object_new_uint64(d->workers_unresponsive),
	       &failed);
	st_add(root, "cpuset", st_str(cpus), &failed);
	st_add(root, "cpuset_present", st_str(present), &failed);
	st_add(root, "plugins", st_plugins(d, &failed), &failed);
	st_add(root, "skipped", st_skipped(d, &failed), &failed);
	st_add(root, "workers", st_workers(d, &failed), &failed);
	st_add(root, "plugin_path", st_str(d->plugin_list), &failed);
	warnings = json_object_new_array();
	if (warnings != NULL && d->no_plugins_warning[0] != '\0')
		st_append(warnings, st_str(d->no_plugins_warning), &failed);
	st_add(root, "warnings", warnings, &failed);
	if (failed)
		goto nomem;
	text = json_object_to_json_string_length(
		root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (text == NULL)
		goto nomem;
	out = malloc(len + 2);
	if (out == NULL)
		goto nomem;
	memcpy(out, text, len);
	out[len] = '\n';
	out[len + 1] = '\0';
	json_object_put(root);
	*json_p = out;
	*len_p = len + 1;
	return DOCA_SUCCESS;

nomem:
	json_object_put(root);
	sdp_error("out of memory building the status document");
	return DOCA_ERROR_NO_MEMORY;
}
