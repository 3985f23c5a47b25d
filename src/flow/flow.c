/*
 * softdpu DOCA Flow: the control path. Global configuration and init, ports bound to a doca_dev,
 * pipe configurations, pipes and entries, and the port look-up the queue engine uses.
 *
 * Entries take effect when they are added, except those added with
 * DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH, which wait on their pipe queue until
 * doca_flow_entries_process() runs for it. Locking: see sdp_flow_int.h.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doca_dev.h"
#include "doca_flow.h"
#include "sdp_flow.h"
#include "sdp_check.h"
#include "sdp_flow_int.h"
#include "sdp_list.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("flow");

static pthread_mutex_t sdp_flow_lock = PTHREAD_MUTEX_INITIALIZER;
static bool sdp_flow_initialized;
static struct doca_flow_cfg sdp_flow_gcfg; /* copy of the cfg given to doca_flow_init */
static sdp_list_link_t sdp_flow_ports = SDP_LIST_HEAD_INIT(sdp_flow_ports);
static uint64_t sdp_flow_next_serial = 1;
static unsigned int sdp_flow_next_pipe_nr;
static uint64_t sdp_flow_gen;		 /* atomic: sdp_flow_generation() */
static void (*sdp_flow_change_cb)(void); /* atomic pointer: sdp_flow_set_change_cb() */

#define SDP_FLOW_ENTRY_FLAGS_ALL                                                                   \
	(DOCA_FLOW_ENTRY_FLAGS_NO_WAIT | DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH)

/*
 * The NULL checks of two arguments a and b (named a_name and b_name) of func, the API call that
 * got them: DOCA_ERROR_INVALID_VALUE with one record naming func for the first NULL one.
 */
static doca_error_t flow_check_args(const void *a, const char *a_name, const void *b,
				    const char *b_name, const char *func)
{
	doca_error_t status = sdp_check_arg(a, a_name, func);

	return status != DOCA_SUCCESS ? status : sdp_check_arg(b, b_name, func);
}

/* size zeroed bytes for a `what` of func, the call made, or NULL (logged on behalf of func). */
static void *flow_zalloc(size_t size, const char *what, const char *func)
{
	void *obj = calloc(1, size);

	if (obj == NULL)
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "failed to allocate %s of %zu bytes", what,
			   size);
	return obj;
}

/* What the destroy calls of the plain configuration objects do: check cfg, free it. */
static doca_error_t flow_cfg_free(void *cfg, const char *func)
{
	doca_error_t status = sdp_check_arg(cfg, "cfg", func);

	if (status == DOCA_SUCCESS)
		free(cfg);
	return status;
}

/* ---- global configuration -------------------------------------------------------------------- */

/* Something the steering summary depends on changed; called with no flow lock held. */
static void flow_changed(void)
{
	void (*cb)(void);

	__atomic_add_fetch(&sdp_flow_gen, 1, __ATOMIC_RELEASE);
	cb = __atomic_load_n(&sdp_flow_change_cb, __ATOMIC_ACQUIRE);
	if (cb != NULL)
		cb();
}

uint64_t sdp_flow_generation(void)
{
	return __atomic_load_n(&sdp_flow_gen, __ATOMIC_ACQUIRE);
}

void sdp_flow_set_change_cb(void (*cb)(void))
{
	__atomic_store_n(&sdp_flow_change_cb, cb, __ATOMIC_RELEASE);
}

doca_error_t doca_flow_cfg_create(struct doca_flow_cfg **cfg)
{
	doca_error_t status = sdp_check_arg(cfg, "cfg", __func__);
	struct doca_flow_cfg *c;

	if (status != DOCA_SUCCESS)
		return status;
	c = flow_zalloc(sizeof(*c), "a flow cfg", __func__);
	if (c == NULL)
		return DOCA_ERROR_NO_MEMORY;
	c->pipe_queues = 1;
	*cfg = c;
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_cfg_destroy(struct doca_flow_cfg *cfg)
{
	return flow_cfg_free(cfg, __func__);
}

doca_error_t doca_flow_cfg_set_pipe_queues(struct doca_flow_cfg *cfg, uint16_t pipe_queues)
{
	doca_error_t status = sdp_check_arg(cfg, "cfg", __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (pipe_queues == 0 || pipe_queues > SDP_FLOW_MAX_PIPE_QUEUES) {
		sdp_error("pipe_queues %u is not from 1 to %u", pipe_queues,
			  SDP_FLOW_MAX_PIPE_QUEUES);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->pipe_queues = pipe_queues;
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_cfg_set_nr_counters(struct doca_flow_cfg *cfg, uint32_t nr_counters)
{
	doca_error_t status = sdp_check_arg(cfg, "cfg", __func__);

	if (status == DOCA_SUCCESS)
		cfg->nr_counters = nr_counters;
	return status;
}

/* Options that may follow the mode; they change nothing in software. */
static const char *const sdp_flow_mode_options[] = {
	"hws", "isolated", "use_doca_eth", "expert", "cpu_rss",
};

doca_error_t doca_flow_cfg_set_mode_args(struct doca_flow_cfg *cfg, const char *mode_args)
{
	char buf[sizeof(cfg->mode_args)];
	char *tok, *save = NULL;
	bool first = true;
	doca_error_t status = flow_check_args(cfg, "cfg", mode_args, "mode_args", __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (strlen(mode_args) >= sizeof(buf) || mode_args[0] == '\0') {
		sdp_error("mode_args \"%.*s\" must have 1 to %zu "
			  "characters",
			  64, mode_args, sizeof(buf) - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(buf, mode_args);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		bool known = false;

		if (first) {
			first = false;
			if (strcmp(tok, "vnf") == 0)
				continue;
			if (strcmp(tok, "switch") == 0 || strcmp(tok, "remote-vnf") == 0) {
				sdp_error("mode %s needs an embedded "
					  "switch with representors, which softdpu devices do "
					  "not have; use vnf",
					  tok);
				return DOCA_ERROR_NOT_SUPPORTED;
			}
			sdp_error("unknown mode \"%s\" in \"%s\" "
				  "(expected vnf)",
				  tok, mode_args);
			return DOCA_ERROR_INVALID_VALUE;
		}
		for (size_t i = 0; i < sizeof(sdp_flow_mode_options) / sizeof(char *); i++)
			if (strcmp(tok, sdp_flow_mode_options[i]) == 0)
				known = true;
		if (!known) {
			sdp_error("unknown option \"%s\" in \"%s\"", tok, mode_args);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	if (first) {
		sdp_error("no mode in \"%s\"", mode_args);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(cfg->mode_args, mode_args);
	cfg->mode_set = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_init(struct doca_flow_cfg *cfg)
{
	doca_error_t status = sdp_check_arg(cfg, "cfg", __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (!cfg->mode_set) {
		sdp_error("no mode set (doca_flow_cfg_set_mode_args)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&sdp_flow_lock);
	if (sdp_flow_initialized) {
		sdp_error("DOCA Flow is already initialised (doca_flow_destroy "
			  "first)");
		status = DOCA_ERROR_BAD_STATE;
	} else {
		sdp_flow_gcfg = *cfg;
		sdp_flow_initialized = true;
		sdp_debug("flow initialised: mode %s, %u pipe queues, %u counters", cfg->mode_args,
			  cfg->pipe_queues, cfg->nr_counters);
	}
	pthread_mutex_unlock(&sdp_flow_lock);
	return status;
}

/* ---- objects --------------------------------------------------------------------------------- */

static void flow_action_fini(struct sdp_flow_action *act)
{
	free(act->queues);
	memset(act, 0, sizeof(*act));
}

static void flow_entry_free(struct doca_flow_pipe_entry *entry)
{
	if (entry->own_fwd)
		flow_action_fini(&entry->fwd);
	sdp_flow_rule_fini(&entry->rule);
	free(entry);
}

static bool flow_port_has_pipe(const struct doca_flow_port *port, const struct doca_flow_pipe *pipe)
{
	const struct doca_flow_pipe *p;

	sdp_list_for_each(p, &port->pipes, link) {
		if (p == pipe)
			return true;
	}
	return false;
}

/* A started port by address (and serial when nonzero), or NULL. Global lock held. */
static struct doca_flow_port *flow_port_find(const struct doca_flow_port *port, uint64_t serial)
{
	struct doca_flow_port *p;

	sdp_list_for_each(p, &sdp_flow_ports, link) {
		if (p == port && (serial == 0 || p->serial == serial))
			return p;
	}
	return NULL;
}

/* flow_port_find for func, the call made: logs (on behalf of func) a port that is not started. */
static struct doca_flow_port *flow_port_find_started(const struct doca_flow_port *port,
						     const char *func)
{
	struct doca_flow_port *p = flow_port_find(port, 0);

	if (p == NULL)
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "port %p is not started",
			   (const void *)port);
	return p;
}

static void flow_unlink_fwd(struct sdp_flow_action *act, const struct doca_flow_pipe *gone,
			    const char *what)
{
	if (act->type != DOCA_FLOW_FWD_PIPE || act->next_pipe != gone)
		return;
	sdp_warn("%s forwarded to pipe %s, which is destroyed: its packets are dropped now", what,
		 gone->name);
	act->type = DOCA_FLOW_FWD_DROP;
	act->next_pipe = NULL;
}

/* Free every entry of a list. */
static void flow_entries_free(sdp_list_link_t *head)
{
	while (!sdp_list_is_empty(head)) {
		struct doca_flow_pipe_entry *e =
			sdp_container_of(head->next, struct doca_flow_pipe_entry, link);

		sdp_list_del(&e->link);
		flow_entry_free(e);
	}
}

static void flow_entries_unlink_fwd(sdp_list_link_t *head, const struct doca_flow_pipe *gone,
				    const char *what)
{
	struct doca_flow_pipe_entry *e;

	sdp_list_for_each(e, head, link) {
		if (e->own_fwd)
			flow_unlink_fwd(&e->fwd, gone, what);
	}
}

/* Destroy a pipe; global lock and port write lock held. */
static void flow_pipe_free_locked(struct doca_flow_pipe *pipe)
{
	struct doca_flow_port *port = pipe->port;
	struct doca_flow_pipe *p;

	flow_entries_free(&pipe->entries);
	if (pipe->index != NULL) {
		for (uint32_t b = 0; b < pipe->index->nb_buckets; b++)
			flow_entries_free(&pipe->index->buckets[b]);
		sdp_flow_index_destroy(pipe);
	}
	for (uint16_t q = 0; q < port->nb_pending_lists; q++) {
		sdp_list_link_t *l = port->pending[q].next;

		while (l != &port->pending[q]) {
			struct doca_flow_pipe_entry *e =
				sdp_container_of(l, struct doca_flow_pipe_entry, link);

			l = l->next;
			if (e->pipe == pipe) {
				sdp_list_del(&e->link);
				flow_entry_free(e);
			} else if (e->own_fwd) {
				flow_unlink_fwd(&e->fwd, pipe, "a pending entry");
			}
		}
	}
	sdp_list_del(&pipe->link);
	sdp_list_for_each(p, &port->pipes, link) {
		flow_unlink_fwd(&p->fwd, pipe, p->name);
		flow_unlink_fwd(&p->fwd_miss, pipe, p->name);
		flow_entries_unlink_fwd(&p->entries, pipe, p->name);
		for (uint32_t b = 0; p->index != NULL && b < p->index->nb_buckets; b++)
			flow_entries_unlink_fwd(&p->index->buckets[b], pipe, p->name);
	}
	if (port->root == pipe)
		port->root = NULL;
	sdp_debug("port %u: pipe %s destroyed", port->port_id, pipe->name);
	flow_action_fini(&pipe->fwd);
	flow_action_fini(&pipe->fwd_miss);
	free(pipe->name);
	free(pipe);
}

static void flow_port_free(struct doca_flow_port *port)
{
	pthread_rwlock_destroy(&port->lock);
	free(port->pending);
	free(port);
}

/* Stop a started port: its pipes go, the device is released. Global lock held. */
static void flow_port_teardown(struct doca_flow_port *port)
{
	pthread_rwlock_wrlock(&port->lock);
	while (!sdp_list_is_empty(&port->pipes))
		flow_pipe_free_locked(
			sdp_container_of(port->pipes.next, struct doca_flow_pipe, link));
	port->root = NULL;
	port->started = false;
	pthread_rwlock_unlock(&port->lock);
	sdp_list_del(&port->link);
	sdp_dev_release(port->dev);
	sdp_debug("flow port %u stopped", port->port_id);
	if (--port->refs == 0)
		flow_port_free(port);
}

void doca_flow_destroy(void)
{
	bool stopped = false;

	pthread_mutex_lock(&sdp_flow_lock);
	while (!sdp_list_is_empty(&sdp_flow_ports)) {
		struct doca_flow_port *port =
			sdp_container_of(sdp_flow_ports.next, struct doca_flow_port, link);

		sdp_warn("port %u still started; stopping it", port->port_id);
		flow_port_teardown(port);
		stopped = true;
	}
	if (sdp_flow_initialized)
		sdp_debug("flow destroyed");
	sdp_flow_initialized = false;
	pthread_mutex_unlock(&sdp_flow_lock);
	if (stopped)
		flow_changed();
}

/* ---- ports ----------------------------------------------------------------------------------- */

doca_error_t doca_flow_port_cfg_create(struct doca_flow_port_cfg **cfg)
{
	doca_error_t status = sdp_check_arg(cfg, "cfg", __func__);
	struct doca_flow_port_cfg *c;

	if (status != DOCA_SUCCESS)
		return status;
	c = flow_zalloc(sizeof(*c), "a flow port cfg", __func__);
	if (c == NULL)
		return DOCA_ERROR_NO_MEMORY;
	*cfg = c;
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_port_cfg_destroy(struct doca_flow_port_cfg *cfg)
{
	return flow_cfg_free(cfg, __func__);
}

doca_error_t doca_flow_port_cfg_set_port_id(struct doca_flow_port_cfg *cfg, uint16_t port_id)
{
	doca_error_t status = sdp_check_arg(cfg, "cfg", __func__);

	if (status == DOCA_SUCCESS)
		cfg->port_id = port_id;
	return status;
}

doca_error_t doca_flow_port_cfg_set_dev(struct doca_flow_port_cfg *cfg, struct doca_dev *dev)
{
	doca_error_t status = flow_check_args(cfg, "cfg", dev, "dev", __func__);

	if (status == DOCA_SUCCESS)
		cfg->dev = dev;
	return status;
}

doca_error_t doca_flow_port_start(const struct doca_flow_port_cfg *cfg,
				  struct doca_flow_port **port)
{
	struct doca_flow_port *p, *other;
	pthread_rwlockattr_t attr;
	doca_error_t status = flow_check_args(cfg, "cfg", port, "port", __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (cfg->dev == NULL) {
		sdp_error("no device set (doca_flow_port_cfg_set_dev)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&sdp_flow_lock);
	if (!sdp_flow_initialized) {
		sdp_error("DOCA Flow is not initialised (doca_flow_init)");
		status = DOCA_ERROR_BAD_STATE;
		goto err_unlock;
	}
	sdp_list_for_each(other, &sdp_flow_ports, link) {
		if (other->port_id == cfg->port_id || other->dev == cfg->dev) {
			sdp_error("port %u on device %p is already started "
				  "(port id %u, device %p requested)",
				  other->port_id, (void *)other->dev, cfg->port_id,
				  (void *)cfg->dev);
			status = DOCA_ERROR_ALREADY_EXIST;
			goto err_unlock;
		}
	}
	p = flow_zalloc(sizeof(*p), "a flow port", __func__);
	if (p == NULL) {
		status = DOCA_ERROR_NO_MEMORY;
		goto err_unlock;
	}
	p->nb_pending_lists = sdp_flow_gcfg.pipe_queues;
	p->pending = calloc(p->nb_pending_lists, sizeof(*p->pending));
	if (p->pending == NULL) {
		sdp_error("failed to allocate %u pending entry lists", p->nb_pending_lists);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_free_port;
	}
	for (uint16_t q = 0; q < p->nb_pending_lists; q++)
		sdp_list_head_init(&p->pending[q]);
	/* writers first: a steady stream of packets must not starve rule updates */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	if (pthread_rwlock_init(&p->lock, &attr) != 0) {
		pthread_rwlockattr_destroy(&attr);
		sdp_error("failed to initialise the lock of flow port %u", cfg->port_id);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_free_pending;
	}
	pthread_rwlockattr_destroy(&attr);
	p->port_id = cfg->port_id;
	p->dev = cfg->dev;
	p->serial = sdp_flow_next_serial++;
	p->started = true;
	p->refs = 1;
	sdp_list_head_init(&p->pipes);
	sdp_dev_hold(p->dev);
	sdp_list_add_tail(&sdp_flow_ports, &p->link);
	pthread_mutex_unlock(&sdp_flow_lock);
	sdp_debug("flow port %u started on device %p", p->port_id, (void *)p->dev);
	*port = p;
	flow_changed();
	return DOCA_SUCCESS;

err_free_pending:
	free(p->pending);
err_free_port:
	free(p);
err_unlock:
	pthread_mutex_unlock(&sdp_flow_lock);
	return status;
}

doca_error_t doca_flow_port_stop(struct doca_flow_port *port)
{
	doca_error_t status = sdp_check_arg(port, "port", __func__);
	struct doca_flow_port *p;

	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&sdp_flow_lock);
	p = flow_port_find_started(port, __func__);
	if (p != NULL)
		flow_port_teardown(p);
	pthread_mutex_unlock(&sdp_flow_lock);
	if (p == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	flow_changed();
	return DOCA_SUCCESS;
}

struct doca_flow_port *sdp_flow_port_get(const struct doca_dev *dev)
{
	struct doca_flow_port *p, *found = NULL;

	pthread_mutex_lock(&sdp_flow_lock);
	sdp_list_for_each(p, &sdp_flow_ports, link) {
		if (p->dev == dev) {
			p->refs++;
			found = p;
			break;
		}
	}
	pthread_mutex_unlock(&sdp_flow_lock);
	return found;
}

void sdp_flow_port_put(struct doca_flow_port *port)
{
	if (port == NULL)
		return;
	pthread_mutex_lock(&sdp_flow_lock);
	if (--port->refs == 0)
		flow_port_free(port);
	pthread_mutex_unlock(&sdp_flow_lock);
}

/* ---- pipe configuration ---------------------------------------------------------------------- */

doca_error_t doca_flow_pipe_cfg_create(struct doca_flow_pipe_cfg **cfg, struct doca_flow_port *port)
{
	struct doca_flow_pipe_cfg *c;
	struct doca_flow_port *p;
	doca_error_t status = flow_check_args(cfg, "cfg", port, "port", __func__);

	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&sdp_flow_lock);
	p = flow_port_find_started(port, __func__);
	if (p == NULL) {
		pthread_mutex_unlock(&sdp_flow_lock);
		return DOCA_ERROR_BAD_STATE;
	}
	c = flow_zalloc(sizeof(*c), "a pipe cfg", __func__);
	if (c == NULL) {
		pthread_mutex_unlock(&sdp_flow_lock);
		return DOCA_ERROR_NO_MEMORY;
	}
	c->port = p;
	c->port_serial = p->serial;
	c->type = DOCA_FLOW_PIPE_BASIC;
	pthread_mutex_unlock(&sdp_flow_lock);
	*cfg = c;
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_pipe_cfg_destroy(struct doca_flow_pipe_cfg *cfg)
{
	doca_error_t status = sdp_check_arg(cfg, "cfg", __func__);

	if (status != DOCA_SUCCESS)
		return status;
	free(cfg->name);
	free(cfg);
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_pipe_cfg_set_name(struct doca_flow_pipe_cfg *cfg, const char *name)
{
	doca_error_t status = flow_check_args(cfg, "cfg", name, "name", __func__);
	char *copy;

	if (status != DOCA_SUCCESS)
		return status;
	copy = strdup(name);
	if (copy == NULL) {
		sdp_error("failed to copy the pipe name of %zu bytes", strlen(name));
		return DOCA_ERROR_NO_MEMORY;
	}
	free(cfg->name);
	cfg->name = copy;
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_pipe_cfg_set_type(struct doca_flow_pipe_cfg *cfg,
					 enum doca_flow_pipe_type type)
{
	doca_error_t status = sdp_check_arg(cfg, "cfg", __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if ((unsigned int)type > DOCA_FLOW_PIPE_HASH) {
		sdp_error("type %d is not a doca_flow_pipe_type", (int)type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	cfg->type = type;
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_pipe_cfg_set_is_root(struct doca_flow_pipe_cfg *cfg, bool is_root)
{
	doca_error_t status = sdp_check_arg(cfg, "cfg", __func__);

	if (status == DOCA_SUCCESS)
		cfg->is_root = is_root;
	return status;
}

doca_error_t doca_flow_pipe_cfg_set_match(struct doca_flow_pipe_cfg *cfg,
					  const struct doca_flow_match *match,
					  const struct doca_flow_match *match_mask)
{
	doca_error_t status = flow_check_args(cfg, "cfg", match, "match", __func__);

	if (status != DOCA_SUCCESS)
		return status;
	cfg->match = *match;
	cfg->has_match = true;
	cfg->has_mask = match_mask != NULL;
	if (match_mask != NULL)
		cfg->mask = *match_mask;
	else
		memset(&cfg->mask, 0, sizeof(cfg->mask));
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_pipe_cfg_set_monitor(struct doca_flow_pipe_cfg *cfg,
					    const struct doca_flow_monitor *monitor)
{
	doca_error_t status = flow_check_args(cfg, "cfg", monitor, "monitor", __func__);

	if (status != DOCA_SUCCESS)
		return status;
	cfg->monitor = *monitor;
	cfg->has_monitor = true;
	return DOCA_SUCCESS;
}

/* ---- validation of monitors and forwards ----------------------------------------------------- */

static doca_error_t flow_monitor_check(const struct doca_flow_monitor *mon, const char *what,
				       const char *pipe_name)
{
	if ((unsigned int)mon->meter_type > DOCA_FLOW_RESOURCE_TYPE_NON_SHARED ||
	    (unsigned int)mon->counter_type > DOCA_FLOW_RESOURCE_TYPE_NON_SHARED) {
		sdp_error("%s of pipe %s: monitor meter_type %d or counter_type %d is not a "
			  "doca_flow_resource_type",
			  what, pipe_name, (int)mon->meter_type, (int)mon->counter_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (mon->meter_type != DOCA_FLOW_RESOURCE_TYPE_NONE) {
		sdp_error("%s of pipe %s: monitor meters (meter_type %d) are not supported by the "
			  "software classifier",
			  what, pipe_name, (int)mon->meter_type);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (mon->counter_type == DOCA_FLOW_RESOURCE_TYPE_SHARED) {
		sdp_error("%s of pipe %s: shared counters (monitor counter_type SHARED) are not "
			  "supported by the software classifier",
			  what, pipe_name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (mon->aging_sec != 0) {
		sdp_error("%s of pipe %s: aging (monitor aging_sec %u) is not supported by the "
			  "software classifier",
			  what, pipe_name, mon->aging_sec);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

#define SDP_FLOW_RSS_KNOWN                                                                         \
	(DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_IPV6 | DOCA_FLOW_RSS_UDP | DOCA_FLOW_RSS_TCP |         \
	 DOCA_FLOW_RSS_ESP | DOCA_FLOW_RSS_IPV4_SRC | DOCA_FLOW_RSS_IPV4_DST |                     \
	 DOCA_FLOW_RSS_IPV6_SRC | DOCA_FLOW_RSS_IPV6_DST | DOCA_FLOW_RSS_UDP_SRC |                 \
	 DOCA_FLOW_RSS_UDP_DST | DOCA_FLOW_RSS_TCP_SRC | DOCA_FLOW_RSS_TCP_DST |                   \
	 DOCA_FLOW_RSS_AUTO)

static doca_error_t flow_rss_compile(const struct doca_flow_fwd *fwd, const char *what,
				     const char *pipe_name, struct sdp_flow_action *act)
{
	const struct doca_flow_resource_rss_cfg *rss = &fwd->rss;

	if (fwd->rss_type == DOCA_FLOW_RESOURCE_TYPE_SHARED) {
		sdp_error("%s of pipe %s: shared RSS (rss_type SHARED) is not supported by the "
			  "software classifier",
			  what, pipe_name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if ((unsigned int)fwd->rss_type > DOCA_FLOW_RESOURCE_TYPE_NON_SHARED) {
		sdp_error("%s of pipe %s: rss_type %d is not a doca_flow_resource_type", what,
			  pipe_name, (int)fwd->rss_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (rss->outer_flags & ~(uint32_t)SDP_FLOW_RSS_KNOWN) {
		sdp_error("%s of pipe %s: rss outer_flags 0x%x has unknown bits", what, pipe_name,
			  rss->outer_flags);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (rss->outer_flags & DOCA_FLOW_RSS_ESP) {
		sdp_error("%s of pipe %s: RSS on the ESP SPI (DOCA_FLOW_RSS_ESP) is not supported "
			  "by the software classifier",
			  what, pipe_name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (rss->inner_flags != 0) {
		sdp_error("%s of pipe %s: RSS on inner headers (inner_flags 0x%x) is not supported "
			  "by the software classifier",
			  what, pipe_name, rss->inner_flags);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (rss->queues_array == NULL || rss->nr_queues < 1 ||
	    rss->nr_queues > SDP_FLOW_MAX_RSS_QUEUES) {
		sdp_error("%s of pipe %s: RSS needs 1 to %u queues (queues_array %p, nr_queues %d)",
			  what, pipe_name, SDP_FLOW_MAX_RSS_QUEUES, (void *)rss->queues_array,
			  rss->nr_queues);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (rss->rss_hash_func != DOCA_FLOW_RSS_HASH_FUNCTION_TOEPLITZ &&
	    rss->rss_hash_func != DOCA_FLOW_RSS_HASH_FUNCTION_SYMMETRIC_TOEPLITZ) {
		sdp_error("%s of pipe %s: rss_hash_func %d is not a doca_flow_rss_hash_function",
			  what, pipe_name, (int)rss->rss_hash_func);
		return DOCA_ERROR_INVALID_VALUE;
	}
	act->queues = malloc(sizeof(uint16_t) * (size_t)rss->nr_queues);
	if (act->queues == NULL) {
		sdp_error("failed to copy %d RSS queue ids", rss->nr_queues);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(act->queues, rss->queues_array, sizeof(uint16_t) * (size_t)rss->nr_queues);
	act->nr_queues = (uint16_t)rss->nr_queues;
	act->rss_flags = rss->outer_flags;
	if (act->rss_flags & DOCA_FLOW_RSS_AUTO)
		act->rss_flags |= DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_IPV6 | DOCA_FLOW_RSS_TCP |
				  DOCA_FLOW_RSS_UDP;
	act->rss_symmetric = rss->rss_hash_func == DOCA_FLOW_RSS_HASH_FUNCTION_SYMMETRIC_TOEPLITZ;
	act->type = DOCA_FLOW_FWD_RSS;
	return DOCA_SUCCESS;
}

/*
 * Validate a forward (NULL: none) of something on port; self is the pipe it belongs to (NULL
 * while that pipe is being created). On success act owns what it needs.
 */
static doca_error_t flow_action_compile(const struct doca_flow_port *port,
					const struct doca_flow_fwd *fwd,
					const struct doca_flow_pipe *self, const char *what,
					const char *pipe_name, struct sdp_flow_action *act)
{
	memset(act, 0, sizeof(*act));
	if (fwd == NULL)
		return DOCA_SUCCESS;
	switch (fwd->type) {
	case DOCA_FLOW_FWD_NONE:
	case DOCA_FLOW_FWD_CHANGEABLE:
		return DOCA_SUCCESS;
	case DOCA_FLOW_FWD_DROP:
		act->type = DOCA_FLOW_FWD_DROP;
		return DOCA_SUCCESS;
	case DOCA_FLOW_FWD_RSS:
		return flow_rss_compile(fwd, what, pipe_name, act);
	case DOCA_FLOW_FWD_PIPE:
		if (fwd->next_pipe == NULL || !flow_port_has_pipe(port, fwd->next_pipe) ||
		    fwd->next_pipe == self) {
			sdp_error("%s of pipe %s: next_pipe %p is not another pipe of port %u",
				  what, pipe_name, (void *)fwd->next_pipe, port->port_id);
			return DOCA_ERROR_INVALID_VALUE;
		}
		act->type = DOCA_FLOW_FWD_PIPE;
		act->next_pipe = fwd->next_pipe;
		return DOCA_SUCCESS;
	case DOCA_FLOW_FWD_PORT:
	case DOCA_FLOW_FWD_TARGET:
	case DOCA_FLOW_FWD_ORDERED_LIST_PIPE:
	case DOCA_FLOW_FWD_HASH_PIPE:
		sdp_error("%s of pipe %s: forward type %d (port, target, ordered list or hash "
			  "pipe) is not supported by the software classifier",
			  what, pipe_name, (int)fwd->type);
		return DOCA_ERROR_NOT_SUPPORTED;
	default:
		sdp_error("%s of pipe %s: forward type %d is not a doca_flow_fwd_type", what,
			  pipe_name, (int)fwd->type);
		return DOCA_ERROR_INVALID_VALUE;
	}
}

/* ---- pipes ----------------------------------------------------------------------------------- */

doca_error_t doca_flow_pipe_create(const struct doca_flow_pipe_cfg *cfg,
				   const struct doca_flow_fwd *fwd,
				   const struct doca_flow_fwd *fwd_miss,
				   struct doca_flow_pipe **pipe)
{
	struct doca_flow_port *port;
	struct doca_flow_pipe *p;
	char namebuf[32];
	const char *name;
	doca_error_t status = flow_check_args(cfg, "cfg", pipe, "pipe", __func__);

	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&sdp_flow_lock);
	if (cfg->name != NULL) {
		name = cfg->name;
	} else {
		snprintf(namebuf, sizeof(namebuf), "pipe%u", sdp_flow_next_pipe_nr);
		name = namebuf;
	}
	port = flow_port_find(cfg->port, cfg->port_serial);
	if (port == NULL) {
		sdp_error("pipe %s: its port %p was stopped", name, (void *)cfg->port);
		status = DOCA_ERROR_BAD_STATE;
		goto err_unlock;
	}
	if (cfg->type != DOCA_FLOW_PIPE_BASIC && cfg->type != DOCA_FLOW_PIPE_CONTROL) {
		sdp_error("pipe %s: type %d is not supported by the software "
			  "classifier (BASIC and CONTROL are)",
			  name, (int)cfg->type);
		status = DOCA_ERROR_NOT_SUPPORTED;
		goto err_unlock;
	}
	if (cfg->is_root && port->root != NULL) {
		sdp_error("pipe %s: port %u already has the root pipe %s", name, port->port_id,
			  port->root->name);
		status = DOCA_ERROR_ALREADY_EXIST;
		goto err_unlock;
	}
	if (cfg->type == DOCA_FLOW_PIPE_CONTROL && fwd != NULL && fwd->type != DOCA_FLOW_FWD_NONE) {
		sdp_error("control pipe %s: forwards come from its entries "
			  "(fwd must be NULL)",
			  name);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_unlock;
	}
	if (cfg->has_match) {
		status = sdp_flow_template_check(&cfg->match, cfg->has_mask ? &cfg->mask : NULL,
						 name);
		if (status != DOCA_SUCCESS)
			goto err_unlock;
	}
	if (cfg->has_monitor) {
		status = flow_monitor_check(&cfg->monitor, "monitor", name);
		if (status != DOCA_SUCCESS)
			goto err_unlock;
	}
	p = flow_zalloc(sizeof(*p), "a pipe", __func__);
	if (p == NULL) {
		status = DOCA_ERROR_NO_MEMORY;
		goto err_unlock;
	}
	p->name = strdup(name);
	if (p->name == NULL) {
		sdp_error("failed to copy the pipe name %s", name);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_free_pipe;
	}
	status = flow_action_compile(port, fwd, NULL, "fwd", name, &p->fwd);
	if (status != DOCA_SUCCESS)
		goto err_free_name;
	status = flow_action_compile(port, fwd_miss, NULL, "fwd_miss", name, &p->fwd_miss);
	if (status != DOCA_SUCCESS)
		goto err_fini_fwd;
	p->port = port;
	p->type = cfg->type;
	p->is_root = cfg->is_root;
	p->has_mask = cfg->has_mask;
	if (cfg->has_match)
		p->match = cfg->match;
	if (cfg->has_mask)
		p->mask = cfg->mask;
	sdp_list_head_init(&p->entries);
	pthread_rwlock_wrlock(&port->lock);
	sdp_list_add_tail(&port->pipes, &p->link);
	if (p->is_root)
		port->root = p;
	pthread_rwlock_unlock(&port->lock);
	sdp_flow_next_pipe_nr++;
	pthread_mutex_unlock(&sdp_flow_lock);
	flow_changed();
	sdp_debug("port %u: %s pipe %s created%s", port->port_id,
		  p->type == DOCA_FLOW_PIPE_BASIC ? "basic" : "control", p->name,
		  p->is_root ? " (root)" : "");
	*pipe = p;
	return DOCA_SUCCESS;

err_fini_fwd:
	flow_action_fini(&p->fwd);
err_free_name:
	free(p->name);
err_free_pipe:
	free(p);
err_unlock:
	pthread_mutex_unlock(&sdp_flow_lock);
	return status;
}

void doca_flow_pipe_destroy(struct doca_flow_pipe *pipe)
{
	struct doca_flow_port *port;

	if (sdp_check_arg(pipe, "pipe", __func__) != DOCA_SUCCESS)
		return;
	pthread_mutex_lock(&sdp_flow_lock);
	port = pipe->port;
	pthread_rwlock_wrlock(&port->lock);
	flow_pipe_free_locked(pipe);
	pthread_rwlock_unlock(&port->lock);
	pthread_mutex_unlock(&sdp_flow_lock);
	flow_changed();
}

/* ---- entries --------------------------------------------------------------------------------- */

/* Checks every entry call shares, logged on behalf of func, the call made; global lock held. */
static doca_error_t flow_entry_args_check(uint16_t pipe_queue, uint32_t flags, const char *func)
{
	if (!sdp_flow_initialized) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "DOCA Flow is not initialised");
		return DOCA_ERROR_BAD_STATE;
	}
	if (pipe_queue >= sdp_flow_gcfg.pipe_queues) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
			   "pipe_queue %u out of range (%u pipe queues configured)", pipe_queue,
			   sdp_flow_gcfg.pipe_queues);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((flags & ~(uint32_t)SDP_FLOW_ENTRY_FLAGS_ALL) != 0 ||
	    (flags & SDP_FLOW_ENTRY_FLAGS_ALL) == SDP_FLOW_ENTRY_FLAGS_ALL) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func,
			   "invalid flags 0x%x (NO_WAIT or WAIT_FOR_BATCH, not both)", flags);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/*
 * The checks both add_entry calls start with (func, the call made, is named in the record):
 * pipe and entry not NULL, the shared entry checks, a pipe of the given type. Global lock held.
 */
static doca_error_t flow_entry_add_check(const struct doca_flow_pipe *pipe,
					 enum doca_flow_pipe_type type, uint16_t pipe_queue,
					 uint32_t flags, struct doca_flow_pipe_entry *const *entry,
					 const char *func)
{
	doca_error_t status = flow_check_args(pipe, "pipe", entry, "entry", func);

	if (status != DOCA_SUCCESS)
		return status;
	status = flow_entry_args_check(pipe_queue, flags, func);
	if (status != DOCA_SUCCESS)
		return status;
	if (pipe->type != type) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "pipe %s is not a %s pipe", pipe->name,
			   type == DOCA_FLOW_PIPE_BASIC ? "basic" : "control");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* A new entry of pipe (not yet in it) for func, the call made, or NULL (logged). */
static struct doca_flow_pipe_entry *flow_entry_alloc(struct doca_flow_pipe *pipe, void *usr_ctx,
						     const char *func)
{
	struct doca_flow_pipe_entry *e = flow_zalloc(sizeof(*e), "an entry", func);

	if (e != NULL) {
		e->pipe = pipe;
		e->usr_ctx = usr_ctx;
	}
	return e;
}

/* Put an entry where the classifier sees it; port write lock held. */
static void flow_entry_activate(struct doca_flow_pipe_entry *entry)
{
	struct doca_flow_pipe *pipe = entry->pipe;
	sdp_list_link_t *pos = &pipe->entries;

	if (pipe->type == DOCA_FLOW_PIPE_CONTROL) {
		/* before the first entry of a larger priority value: stable among equals */
		struct doca_flow_pipe_entry *e;

		sdp_list_for_each(e, &pipe->entries, link) {
			if (e->priority > entry->priority) {
				pos = &e->link;
				break;
			}
		}
	}
	entry->active = true;
	if (pipe->type == DOCA_FLOW_PIPE_BASIC) {
		entry->seq = pipe->next_seq++;
		if (sdp_flow_index_insert(entry))
			return;
	}
	sdp_list_insert_between(&entry->link, pos->prev, pos);
}

/* Insert a compiled entry (now or on its pipe queue); global lock held. */
static void flow_entry_insert(struct doca_flow_pipe_entry *entry, uint16_t pipe_queue,
			      uint32_t flags)
{
	struct doca_flow_port *port = entry->pipe->port;

	pthread_rwlock_wrlock(&port->lock);
	if (flags & DOCA_FLOW_ENTRY_FLAGS_WAIT_FOR_BATCH)
		sdp_list_add_tail(&port->pending[pipe_queue], &entry->link);
	else
		flow_entry_activate(entry);
	entry->pipe->nb_entries++;
	pthread_rwlock_unlock(&port->lock);
	sdp_trace("port %u: entry %p added to pipe %s (%u entries)", port->port_id, (void *)entry,
		  entry->pipe->name, entry->pipe->nb_entries);
}

/*
 * Compile the forward of e, a new entry with its rule, and insert it: *entry = e, or e freed
 * (and the cause logged) on failure. Global lock held.
 */
static doca_error_t flow_entry_add(struct doca_flow_pipe_entry *e, const struct doca_flow_fwd *fwd,
				   uint16_t pipe_queue, uint32_t flags,
				   struct doca_flow_pipe_entry **entry)
{
	struct doca_flow_pipe *pipe = e->pipe;
	doca_error_t status;

	status = flow_action_compile(pipe->port, fwd, pipe, "entry fwd", pipe->name, &e->fwd);
	if (status == DOCA_SUCCESS) {
		e->own_fwd = e->fwd.type != DOCA_FLOW_FWD_NONE; /* a control entry always has one */
		if (!e->own_fwd && pipe->fwd.type == DOCA_FLOW_FWD_NONE) {
			sdp_error("pipe %s has no forward and the entry gives none", pipe->name);
			status = DOCA_ERROR_INVALID_VALUE;
		}
	}
	if (status != DOCA_SUCCESS) {
		flow_entry_free(e);
		return status;
	}
	flow_entry_insert(e, pipe_queue, flags);
	*entry = e;
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_pipe_basic_add_entry(uint16_t pipe_queue, struct doca_flow_pipe *pipe,
					    const struct doca_flow_match *match, uint8_t action_idx,
					    const struct doca_flow_actions *actions,
					    const struct doca_flow_monitor *monitor,
					    const struct doca_flow_fwd *fwd, uint32_t flags,
					    void *usr_ctx, struct doca_flow_pipe_entry **entry)
{
	struct doca_flow_pipe_entry *e;
	doca_error_t status;

	pthread_mutex_lock(&sdp_flow_lock);
	status = flow_entry_add_check(pipe, DOCA_FLOW_PIPE_BASIC, pipe_queue, flags, entry,
				      __func__);
	if (status != DOCA_SUCCESS)
		goto out;
	if (actions != NULL) {
		sdp_error("pipe %s: actions are not supported by the software classifier",
			  pipe->name);
		status = DOCA_ERROR_NOT_SUPPORTED;
		goto out;
	}
	if (action_idx != 0) {
		sdp_error("pipe %s: action_idx %u, but the pipe has no actions", pipe->name,
			  action_idx);
		status = DOCA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (monitor != NULL) {
		status = flow_monitor_check(monitor, "entry monitor", pipe->name);
		if (status != DOCA_SUCCESS)
			goto out;
	}
	e = flow_entry_alloc(pipe, usr_ctx, __func__);
	if (e == NULL) {
		status = DOCA_ERROR_NO_MEMORY;
		goto out;
	}
	status = sdp_flow_rule_compile_basic(pipe, match, &e->rule);
	if (status == DOCA_SUCCESS)
		status = flow_entry_add(e, fwd, pipe_queue, flags, entry);
	else
		flow_entry_free(e);
out:
	pthread_mutex_unlock(&sdp_flow_lock);
	if (status == DOCA_SUCCESS)
		flow_changed();
	return status;
}

doca_error_t doca_flow_pipe_control_add_entry(
	uint16_t pipe_queue, struct doca_flow_pipe *pipe, const struct doca_flow_match *match,
	const struct doca_flow_match *match_mask, const struct doca_flow_match_condition *condition,
	const struct doca_flow_actions *actions, const struct doca_flow_actions *actions_mask,
	const struct doca_flow_action_descs *action_descs, const struct doca_flow_monitor *monitor,
	uint32_t priority, const struct doca_flow_fwd *fwd, void *usr_ctx,
	struct doca_flow_pipe_entry **entry)
{
	struct doca_flow_pipe_entry *e;
	doca_error_t status;

	pthread_mutex_lock(&sdp_flow_lock);
	status = flow_entry_add_check(pipe, DOCA_FLOW_PIPE_CONTROL, pipe_queue,
				      DOCA_FLOW_ENTRY_FLAGS_NO_WAIT, entry, __func__);
	if (status != DOCA_SUCCESS)
		goto out;
	if (condition != NULL || actions != NULL || actions_mask != NULL || action_descs != NULL) {
		sdp_error("pipe %s: %s are not supported by the software classifier", pipe->name,
			  condition != NULL    ? "match conditions" :
			  action_descs != NULL ? "action descriptors" :
						 "actions");
		status = DOCA_ERROR_NOT_SUPPORTED;
		goto out;
	}
	if (monitor != NULL) {
		status = flow_monitor_check(monitor, "entry monitor", pipe->name);
		if (status != DOCA_SUCCESS)
			goto out;
	}
	if (fwd == NULL || fwd->type == DOCA_FLOW_FWD_NONE ||
	    fwd->type == DOCA_FLOW_FWD_CHANGEABLE) {
		sdp_error("pipe %s: a control entry needs a forward", pipe->name);
		status = DOCA_ERROR_INVALID_VALUE;
		goto out;
	}
	e = flow_entry_alloc(pipe, usr_ctx, __func__);
	if (e == NULL) {
		status = DOCA_ERROR_NO_MEMORY;
		goto out;
	}
	e->priority = priority;
	status = sdp_flow_rule_compile_control(pipe, match, match_mask, &e->rule);
	if (status == DOCA_SUCCESS)
		status = flow_entry_add(e, fwd, pipe_queue, 0, entry);
	else
		flow_entry_free(e);
out:
	pthread_mutex_unlock(&sdp_flow_lock);
	if (status == DOCA_SUCCESS)
		flow_changed();
	return status;
}

doca_error_t doca_flow_pipe_remove_entry(uint16_t pipe_queue, uint32_t flags,
					 struct doca_flow_pipe_entry *entry)
{
	doca_error_t status = sdp_check_arg(entry, "entry", __func__);
	struct doca_flow_port *port;

	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&sdp_flow_lock);
	status = flow_entry_args_check(pipe_queue, flags, __func__);
	if (status != DOCA_SUCCESS) {
		pthread_mutex_unlock(&sdp_flow_lock);
		return status;
	}
	port = entry->pipe->port;
	pthread_rwlock_wrlock(&port->lock);
	if (entry->indexed)
		sdp_flow_index_remove(entry);
	else
		sdp_list_del(&entry->link);
	entry->pipe->nb_entries--;
	pthread_rwlock_unlock(&port->lock);
	sdp_trace("port %u: entry %p removed from pipe %s", port->port_id, (void *)entry,
		  entry->pipe->name);
	flow_entry_free(entry);
	pthread_mutex_unlock(&sdp_flow_lock);
	flow_changed();
	return DOCA_SUCCESS;
}

doca_error_t doca_flow_entries_process(struct doca_flow_port *port, uint16_t pipe_queue,
				       uint64_t timeout, uint32_t max_processed_entries)
{
	doca_error_t status = sdp_check_arg(port, "port", __func__);
	struct doca_flow_port *p;
	uint32_t done = 0;

	(void)timeout; /* nothing to wait for: entries are applied synchronously */
	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&sdp_flow_lock);
	status = flow_entry_args_check(pipe_queue, 0, __func__);
	if (status != DOCA_SUCCESS)
		goto out;
	p = flow_port_find_started(port, __func__);
	if (p == NULL) {
		status = DOCA_ERROR_BAD_STATE;
		goto out;
	}
	pthread_rwlock_wrlock(&p->lock);
	while (!sdp_list_is_empty(&p->pending[pipe_queue]) &&
	       (max_processed_entries == 0 || done < max_processed_entries)) {
		struct doca_flow_pipe_entry *e = sdp_container_of(
			p->pending[pipe_queue].next, struct doca_flow_pipe_entry, link);

		sdp_list_del(&e->link);
		flow_entry_activate(e);
		done++;
	}
	pthread_rwlock_unlock(&p->lock);
	if (done > 0)
		sdp_trace("port %u: %u entries of pipe queue %u processed", p->port_id, done,
			  pipe_queue);
out:
	pthread_mutex_unlock(&sdp_flow_lock);
	if (done > 0)
		flow_changed();
	return status;
}
