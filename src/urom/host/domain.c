/*
 * libdoca_urom: the domain context.
 *
 * Configuration follows DOCA (OOB collective, local workers with their domain ids, buffers).
 * Start (DOCA_ERROR_IN_PROGRESS, finished from doca_pe_progress) runs four phases, each a
 * bounded wait driven by this context's progress op:
 *
 *   ADDR   ask each local worker for its plugins' addresses (W_DOMAIN_ADDR);
 *   SIZES  allgather every process's record length (8 bytes, little-endian) over the OOB;
 *   DATA   allgather the host records (sdp_urom_dom_host_pack: one member record per local
 *          worker, with its domain id, plugin addresses and this process's buffers), each
 *          zero-padded to the longest;
 *   PUSH   parse every record (sdp_urom_proto.h's parser: the OOB is the application's
 *          channel, so the bytes are checked like any peer's), refuse duplicate domain ids,
 *          push every member record to each local worker (W_DOMAIN_MEMBER) and commit
 *          (W_DOMAIN_COMMIT); RUNNING once every local worker confirmed.
 *
 * Any failure (a local worker dies or refuses, the OOB request reports an error, a record is
 * malformed) or SOFTDPU_UROM_DOMAIN_TIMEOUT_MS (default 30 s) without completion ends the start
 * with that error: the context returns to IDLE and stays destroyable. A member that dies during
 * the exchange fails everyone else's start as soon as the OOB notices (softdpu's TCP OOB does at
 * once; an MPI job usually aborts), and at the latest at the timeout. The domain and its
 * workers must be connected to the same PE (the workers' connections are used from that PE's
 * thread only). Stop tells the workers to drop the table (W_DOMAIN_CLEAR, no wait) and is
 * synchronous.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "doca_urom.h"
#include "sdp_config.h"
#include "sdp_ctx.h"
#include "sdp_log.h"
#include "sdp_urom_host.h"

SDP_LOG_COMPONENT("urom_domain");

/* Largest OOB exchange accepted: members x padded record length. */
#define SDP_UROM_DOM_OOB_MAX (256u << 20)

struct sdp_urom_domain_buf {
	void *buffer;
	size_t len;
	void *memh; /* copies of the packed handle and key */
	size_t memh_len;
	void *mkey;
	size_t mkey_len;
};

enum domain_phase {
	DOM_IDLE = 0,
	DOM_ADDR,
	DOM_SIZES,
	DOM_DATA,
	DOM_PUSH,
	DOM_RUNNING,
};

struct doca_urom_domain {
	struct doca_ctx ctx; /* first: doca_urom_domain_as_ctx */
	struct doca_urom_domain_oob_coll oob;
	int has_oob;
	uint64_t *worker_ids;
	struct doca_urom_worker **workers;
	size_t num_workers;
	struct sdp_urom_domain_buf *bufs;
	size_t bufs_cap; /* set_buffers_count */
	size_t num_bufs;
	/* start (PE thread) */
	enum domain_phase phase;
	uint64_t key;
	uint64_t deadline_ms;
	struct sdp_urom_dom_wait *waits; /* one per local worker */
	void *oob_req;			 /* outstanding OOB request, or NULL */
	uint8_t *local;			 /* this process's host record, padded */
	size_t local_len;
	uint8_t size_out[8];
	uint8_t *sizes; /* n_oob_indexes x 8 */
	uint8_t *all;	/* n_oob_indexes x max_len */
	size_t max_len;
	size_t num_members;
	int refs_held; /* counted in each worker's dom_refs */
	void **parked; /* buffers of abandoned OOB requests, freed at destroy */
	size_t num_parked;
};

/* Request ids of W_DOMAIN_* messages, unique in the process (a stale reply never matches). */
static atomic_uint_fast64_t domain_req_ids;

static struct doca_urom_domain *domain_of(struct doca_ctx *ctx)
{
	return (struct doca_urom_domain *)ctx;
}

static int domain_timeout_ms(void)
{
	uint64_t v = 30000;

	if (sdp_config_get_uint(SDP_CFG_UROM_DOMAIN_TIMEOUT_MS, &v) != DOCA_SUCCESS)
		v = 30000;
	if (v == 0)
		v = 1;
	if (v > 3600000)
		v = 3600000;
	return (int)v;
}

static void le64_put(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t le64_get(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* Keep a buffer an abandoned OOB request may still use until the domain is destroyed. */
static void domain_park(struct doca_urom_domain *d, void *buf)
{
	void **p;

	if (buf == NULL)
		return;
	p = realloc(d->parked, (d->num_parked + 1) * sizeof(*p));
	if (p == NULL) {
		sdp_warn("domain %p: no memory to keep an abandoned OOB buffer; leaking it",
			 (void *)d);
		return;
	}
	d->parked = p;
	d->parked[d->num_parked++] = buf;
}

/* Detach the waits from the workers and free everything start allocated. */
static void domain_start_cleanup(struct doca_urom_domain *d)
{
	size_t i;

	if (d->oob_req != NULL) {
		/*
		 * Abandoned in progress (stop, time-out): the application's collective may still
		 * use its buffers after req_free (MPI_Request_free lets it run), so they stay
		 * allocated until the domain is destroyed.
		 */
		(void)d->oob.req_free(d->oob_req);
		d->oob_req = NULL;
		sdp_debug("domain %p: an OOB request was abandoned in progress; its buffers stay "
			  "allocated until the domain is destroyed",
			  (void *)d);
		domain_park(d, d->local);
		d->local = NULL;
		if (d->phase == DOM_SIZES) {
			domain_park(d, d->sizes);
			d->sizes = NULL;
		} else if (d->phase == DOM_DATA) {
			domain_park(d, d->all);
			d->all = NULL;
		}
	}
	for (i = 0; d->waits != NULL && i < d->num_workers; i++) {
		if (d->workers[i]->dom_wait == &d->waits[i])
			d->workers[i]->dom_wait = NULL;
		free(d->waits[i].record);
	}
	free(d->waits);
	d->waits = NULL;
	free(d->local);
	d->local = NULL;
	free(d->sizes);
	d->sizes = NULL;
	free(d->all);
	d->all = NULL;
}

static void domain_unref_workers(struct doca_urom_domain *d)
{
	size_t i;

	if (!d->refs_held)
		return;
	for (i = 0; i < d->num_workers; i++)
		d->workers[i]->dom_refs--;
	d->refs_held = 0;
}

static void domain_clear_workers(struct doca_urom_domain *d);

static void domain_start_fail(struct doca_urom_domain *d, doca_error_t status)
{
	/* Some workers may have committed the table already: none keeps a failed domain's. */
	if (d->phase == DOM_PUSH)
		domain_clear_workers(d);
	domain_start_cleanup(d);
	domain_unref_workers(d);
	d->phase = DOM_IDLE;
	sdp_ctx_start_done(&d->ctx, status);
}

void sdp_urom_domain_handle_reply(struct doca_urom_worker *worker, const struct sdp_urom_msg *msg)
{
	struct sdp_urom_dom_wait *w = worker->dom_wait;
	const struct sdp_urom_bytes *rec;

	if (w == NULL || w->done || msg->hdr.req_id != w->req_id || msg->hdr.type != w->want_type) {
		sdp_debug("worker %lu: %s not awaited, dropped", (unsigned long)worker->id,
			  sdp_urom_msg_type_name(msg->hdr.type));
		return;
	}
	if (msg->hdr.type == SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY) {
		w->status = (doca_error_t)msg->u.w_domain_addr_reply.status;
		rec = &msg->u.w_domain_addr_reply.record;
		if (w->status == DOCA_SUCCESS) {
			w->record = malloc(rec->len ? rec->len : 1);
			if (w->record == NULL) {
				w->status = DOCA_ERROR_NO_MEMORY;
			} else {
				memcpy(w->record, rec->data, rec->len);
				w->record_len = rec->len;
			}
		}
	} else {
		w->status = (doca_error_t)msg->u.w_domain_reply.status;
		snprintf(w->reason, sizeof(w->reason), "%.*s",
			 (int)msg->u.w_domain_reply.reason.len,
			 (const char *)msg->u.w_domain_reply.reason.data);
	}
	w->done = 1;
	worker->dom_wait = NULL;
}

/* Send msg to local worker i and wait for want_type (0: no answer awaited). */
static doca_error_t domain_send(struct doca_urom_domain *d, size_t i, struct sdp_urom_msg *msg,
				uint16_t want_type)
{
	struct doca_urom_worker *worker = d->workers[i];
	size_t len = sdp_urom_msg_packed_size(msg);
	doca_error_t status;
	void *buf;

	if (atomic_load(&worker->dead) || worker->phase != SDP_UROM_W_RUNNING ||
	    worker->ep == NULL) {
		sdp_error("domain %p: worker %lu died or stopped during the start", (void *)d,
			  (unsigned long)worker->id);
		return DOCA_ERROR_IO_FAILED;
	}
	msg->hdr.req_id = atomic_fetch_add(&domain_req_ids, 1) + 1;
	if (want_type != 0) {
		struct sdp_urom_dom_wait *w = &d->waits[i];

		free(w->record);
		memset(w, 0, sizeof(*w));
		w->req_id = msg->hdr.req_id;
		w->want_type = want_type;
		worker->dom_wait = w;
	}
	buf = len ? malloc(len) : NULL;
	if (buf == NULL) {
		sdp_error("domain %p: no memory for a %zu-byte %s", (void *)d, len,
			  sdp_urom_msg_type_name(msg->hdr.type));
		return DOCA_ERROR_NO_MEMORY;
	}
	status = sdp_urom_msg_pack(msg, buf, len, &len);
	if (status == DOCA_SUCCESS)
		(void)sdp_urom_worker_send_cmds(worker); /* commands submitted before go first */
	if (status == DOCA_SUCCESS)
		status = sdp_ucx_send(&worker->ucx, worker->ep, buf, len);
	free(buf);
	if (status != DOCA_SUCCESS)
		sdp_error("domain %p: %s to worker %lu failed: %s", (void *)d,
			  sdp_urom_msg_type_name(msg->hdr.type), (unsigned long)worker->id,
			  doca_error_get_name(status));
	return status;
}

/* Every local worker still runs: DOCA_SUCCESS, else IO_FAILED (logged). */
static doca_error_t domain_workers_alive(struct doca_urom_domain *d, const char *what)
{
	for (size_t i = 0; i < d->num_workers; i++) {
		struct doca_urom_worker *w = d->workers[i];

		if (atomic_load(&w->dead) || w->phase != SDP_UROM_W_RUNNING || w->ep == NULL) {
			sdp_error("domain %p: worker %lu died or stopped during the %s", (void *)d,
				  (unsigned long)w->id, what);
			return DOCA_ERROR_IO_FAILED;
		}
	}
	return DOCA_SUCCESS;
}

/* Every wait of the current phase answered: DOCA_SUCCESS; IN_PROGRESS; or the failure. */
static doca_error_t domain_waits_done(struct doca_urom_domain *d, const char *what)
{
	size_t i, pending = 0;

	for (i = 0; i < d->num_workers; i++) {
		struct sdp_urom_dom_wait *w = &d->waits[i];

		if (atomic_load(&d->workers[i]->dead) ||
		    d->workers[i]->phase != SDP_UROM_W_RUNNING || d->workers[i]->ep == NULL) {
			sdp_error("domain %p: worker %lu died or stopped during the %s", (void *)d,
				  (unsigned long)d->workers[i]->id, what);
			return DOCA_ERROR_IO_FAILED;
		}
		if (!w->done) {
			pending++;
			continue;
		}
		if (w->status != DOCA_SUCCESS) {
			sdp_error("domain %p: worker %lu refused the %s: %s (%s)", (void *)d,
				  (unsigned long)d->workers[i]->id, what,
				  w->reason[0] ? w->reason : "-", doca_error_get_name(w->status));
			return w->status;
		}
	}
	return pending ? DOCA_ERROR_IN_PROGRESS : DOCA_SUCCESS;
}

/* After ADDR: this process's host record, one member per local worker. */
static doca_error_t domain_build_local(struct doca_urom_domain *d)
{
	struct sdp_urom_dom_member *m = calloc(1, sizeof(*m));
	struct sdp_urom_bytes *recs = calloc(d->num_workers, sizeof(*recs));
	struct sdp_urom_dom_seg *segs = calloc(d->num_bufs ? d->num_bufs : 1, sizeof(*segs));
	doca_error_t status = DOCA_ERROR_NO_MEMORY;
	size_t i, len = 0;
	char why[160];

	if (m == NULL || recs == NULL || segs == NULL)
		goto out;
	for (i = 0; i < d->num_bufs; i++) {
		segs[i].va = (uint64_t)(uintptr_t)d->bufs[i].buffer;
		segs[i].len = d->bufs[i].len;
		segs[i].memh.data = d->bufs[i].memh;
		segs[i].memh.len = (uint32_t)d->bufs[i].memh_len;
		segs[i].mkey.data = d->bufs[i].mkey;
		segs[i].mkey.len = (uint32_t)d->bufs[i].mkey_len;
	}
	for (i = 0; i < d->num_workers; i++) {
		status = sdp_urom_dom_member_unpack_why(d->waits[i].record, d->waits[i].record_len,
							m, why, sizeof(why));
		if (status != DOCA_SUCCESS) {
			sdp_error("domain %p: worker %lu sent a bad address record: %s", (void *)d,
				  (unsigned long)d->workers[i]->id, why);
			goto out;
		}
		m->id = d->worker_ids[i];
		m->num_segs = (uint32_t)d->num_bufs;
		status = sdp_urom_dom_member_pack(m, segs, NULL, 0, &len);
		if (status == DOCA_ERROR_TOO_BIG) {
			uint8_t *rec = malloc(len);

			status = rec == NULL ? DOCA_ERROR_NO_MEMORY :
					       sdp_urom_dom_member_pack(m, segs, rec, len, &len);
			recs[i].data = rec;
			recs[i].len = (uint32_t)len;
		}
		if (status != DOCA_SUCCESS)
			goto out;
	}
	status = sdp_urom_dom_host_pack(recs, (uint32_t)d->num_workers, NULL, 0, &len);
	if (status == DOCA_ERROR_TOO_BIG) {
		d->local = malloc(len);
		d->local_len = len;
		status = d->local == NULL ? DOCA_ERROR_NO_MEMORY :
					    sdp_urom_dom_host_pack(recs, (uint32_t)d->num_workers,
								   d->local, len, &len);
	}
out:
	if (status == DOCA_ERROR_NO_MEMORY)
		sdp_error("domain %p: no memory for the domain records", (void *)d);
	for (i = 0; recs != NULL && i < d->num_workers; i++)
		free((void *)recs[i].data);
	free(recs);
	free(segs);
	free(m);
	return status;
}

/* Start one OOB allgather; its request lands in d->oob_req. */
static doca_error_t domain_oob_start(struct doca_urom_domain *d, void *sbuf, void *rbuf, size_t len,
				     const char *what)
{
	doca_error_t status;

	d->oob_req = NULL;
	status = d->oob.allgather(sbuf, rbuf, len, d->oob.coll_info, &d->oob_req);
	if (status != DOCA_SUCCESS && status != DOCA_ERROR_IN_PROGRESS) {
		sdp_error("domain %p: the OOB allgather of %s failed to start: %s", (void *)d, what,
			  doca_error_get_name(status));
		d->oob_req = NULL;
		return status;
	}
	return DOCA_SUCCESS;
}

/* DOCA_SUCCESS once the outstanding OOB request is complete (and freed), IN_PROGRESS before. */
static doca_error_t domain_oob_test(struct doca_urom_domain *d, const char *what)
{
	doca_error_t status;

	if (d->oob_req == NULL)
		return DOCA_SUCCESS;
	status = d->oob.req_test(d->oob_req);
	if (status == DOCA_ERROR_IN_PROGRESS || status == DOCA_ERROR_AGAIN)
		return DOCA_ERROR_IN_PROGRESS;
	(void)d->oob.req_free(d->oob_req);
	d->oob_req = NULL;
	if (status != DOCA_SUCCESS)
		sdp_error("domain %p: the OOB allgather of %s failed: %s", (void *)d, what,
			  doca_error_get_name(status));
	return status;
}

/* After SIZES: validate the lengths, start the DATA round. */
static doca_error_t domain_sizes_done(struct doca_urom_domain *d)
{
	uint32_t n = d->oob.n_oob_indexes, i;
	uint8_t *padded;

	d->max_len = 0;
	for (i = 0; i < n; i++) {
		uint64_t len = le64_get(d->sizes + 8 * (size_t)i);

		if (len < 12 || len > SDP_UROM_DOM_MAX_HOST) {
			sdp_error("domain %p: OOB member %u announces a record of %lu bytes "
				  "(allowed: 12..%u)",
				  (void *)d, i, (unsigned long)len, SDP_UROM_DOM_MAX_HOST);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (len > d->max_len)
			d->max_len = len;
	}
	/* Our own slot must hold what we sent (two ranks with one oob_index, a broken OOB). */
	if (le64_get(d->sizes + 8 * (size_t)d->oob.oob_index) != d->local_len) {
		sdp_error("domain %p: the OOB returned %lu in this member's slot %u, it sent %zu "
			  "(is oob_index unique?)",
			  (void *)d,
			  (unsigned long)le64_get(d->sizes + 8 * (size_t)d->oob.oob_index),
			  d->oob.oob_index, d->local_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (d->max_len > SDP_UROM_DOM_OOB_MAX / n) {
		sdp_error("domain %p: %u records of up to %zu bytes exceed the %u-byte exchange "
			  "limit",
			  (void *)d, n, d->max_len, SDP_UROM_DOM_OOB_MAX);
		return DOCA_ERROR_INVALID_VALUE;
	}
	padded = calloc(1, d->max_len);
	d->all = malloc((size_t)n * d->max_len);
	if (padded == NULL || d->all == NULL) {
		free(padded);
		sdp_error("domain %p: no memory for the %zu-byte exchange", (void *)d,
			  (size_t)n * d->max_len);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(padded, d->local, d->local_len);
	free(d->local);
	d->local = padded;
	return domain_oob_start(d, d->local, d->all, d->max_len, "the domain records");
}

/* After DATA: check everything, push it to each local worker and commit. */
static doca_error_t domain_push(struct doca_urom_domain *d)
{
	uint32_t n = d->oob.n_oob_indexes, i, count;
	struct sdp_urom_dom_member *m = calloc(1, sizeof(*m));
	struct sdp_urom_bytes *recs = NULL; /* every member record, in OOB order */
	uint64_t *ids = NULL;
	struct sdp_urom_msg msg;
	doca_error_t status = DOCA_SUCCESS;
	const uint8_t *raw;
	size_t raw_len, pos, total = 0, w, k;
	char why[160];

	if (m == NULL)
		return DOCA_ERROR_NO_MEMORY;
	/* Pass 1: parse and count. */
	for (i = 0; i < n && status == DOCA_SUCCESS; i++) {
		status = sdp_urom_dom_host_unpack_why(d->all + (size_t)i * d->max_len, d->max_len,
						      &count, &raw, &raw_len, why, sizeof(why));
		if (status != DOCA_SUCCESS) {
			sdp_error("domain %p: OOB member %u sent a bad record: %s", (void *)d, i,
				  why);
			break;
		}
		total += count;
	}
	if (status == DOCA_SUCCESS && (total == 0 || total > SDP_UROM_DOM_MAX_MEMBERS)) {
		sdp_error("domain %p: %zu members (allowed: 1..%d)", (void *)d, total,
			  SDP_UROM_DOM_MAX_MEMBERS);
		status = DOCA_ERROR_INVALID_VALUE;
	}
	if (status == DOCA_SUCCESS) {
		ids = malloc(total * sizeof(*ids));
		recs = malloc(total * sizeof(*recs));
		if (ids == NULL || recs == NULL)
			status = DOCA_ERROR_NO_MEMORY;
	}
	/* Pass 2: every member record well formed, ids unique; keep the records' views. */
	for (i = 0, k = 0; i < n && status == DOCA_SUCCESS; i++) {
		(void)sdp_urom_dom_host_unpack_why(d->all + (size_t)i * d->max_len, d->max_len,
						   &count, &raw, &raw_len, NULL, 0);
		for (pos = 0; status == DOCA_SUCCESS && k < total &&
			      sdp_urom_dom_host_next(raw, raw_len, &pos, &recs[k]);) {
			status = sdp_urom_dom_member_unpack_why(recs[k].data, recs[k].len, m, why,
								sizeof(why));
			if (status != DOCA_SUCCESS) {
				sdp_error("domain %p: OOB member %u sent a bad member record: %s",
					  (void *)d, i, why);
				break;
			}
			for (size_t j = 0; j < k; j++)
				if (ids[j] == m->id) {
					sdp_error("domain %p: domain id %lu is claimed twice",
						  (void *)d, (unsigned long)m->id);
					status = DOCA_ERROR_INVALID_VALUE;
				}
			ids[k++] = m->id;
		}
	}
	free(ids);
	free(m);
	if (status != DOCA_SUCCESS) {
		free(recs);
		return status;
	}
	d->num_members = total;
	/* Push to each local worker (the views point into d->all, alive until cleanup). */
	for (w = 0; w < d->num_workers && status == DOCA_SUCCESS; w++) {
		for (k = 0; k < total && status == DOCA_SUCCESS; k++) {
			memset(&msg.hdr, 0, sizeof(msg.hdr));
			msg.hdr.type = SDP_UROM_MSG_W_DOMAIN_MEMBER;
			msg.u.w_domain_member.dest_id = d->workers[w]->dest_id;
			msg.u.w_domain_member.domain_key = d->key;
			msg.u.w_domain_member.record = recs[k];
			status = domain_send(d, w, &msg, 0);
		}
		if (status != DOCA_SUCCESS)
			break;
		memset(&msg.hdr, 0, sizeof(msg.hdr));
		msg.hdr.type = SDP_UROM_MSG_W_DOMAIN_COMMIT;
		msg.u.w_domain_commit.dest_id = d->workers[w]->dest_id;
		msg.u.w_domain_commit.domain_key = d->key;
		msg.u.w_domain_commit.num_members = (uint32_t)total;
		status = domain_send(d, w, &msg, SDP_UROM_MSG_W_DOMAIN_REPLY);
	}
	free(recs);
	return status;
}

static int domain_progress(struct doca_ctx *ctx)
{
	struct doca_urom_domain *d = domain_of(ctx);
	doca_error_t status;

	if (d->phase == DOM_IDLE || d->phase == DOM_RUNNING)
		return 0;
	switch (d->phase) {
	case DOM_ADDR:
		status = domain_waits_done(d, "address query");
		if (status != DOCA_SUCCESS)
			break;
		status = domain_build_local(d);
		if (status != DOCA_SUCCESS)
			break;
		le64_put(d->size_out, d->local_len);
		d->sizes = malloc(8 * (size_t)d->oob.n_oob_indexes);
		if (d->sizes == NULL) {
			status = DOCA_ERROR_NO_MEMORY;
			break;
		}
		status = domain_oob_start(d, d->size_out, d->sizes, 8, "the record sizes");
		if (status == DOCA_SUCCESS) {
			d->phase = DOM_SIZES;
			status = DOCA_ERROR_IN_PROGRESS;
		}
		break;
	case DOM_SIZES:
		status = domain_workers_alive(d, "exchange of record sizes");
		if (status != DOCA_SUCCESS)
			break;
		status = domain_oob_test(d, "the record sizes");
		if (status != DOCA_SUCCESS)
			break;
		status = domain_sizes_done(d);
		if (status == DOCA_SUCCESS) {
			d->phase = DOM_DATA;
			status = DOCA_ERROR_IN_PROGRESS;
		}
		break;
	case DOM_DATA:
		status = domain_workers_alive(d, "exchange of records");
		if (status != DOCA_SUCCESS)
			break;
		status = domain_oob_test(d, "the domain records");
		if (status != DOCA_SUCCESS)
			break;
		status = domain_push(d);
		if (status == DOCA_SUCCESS) {
			d->phase = DOM_PUSH;
			status = DOCA_ERROR_IN_PROGRESS;
		}
		break;
	case DOM_PUSH:
		status = domain_waits_done(d, "domain table");
		if (status == DOCA_SUCCESS) {
			domain_start_cleanup(d);
			d->phase = DOM_RUNNING;
			sdp_debug("domain %p: running, %zu members", (void *)d, d->num_members);
			sdp_ctx_start_done(ctx, DOCA_SUCCESS);
			return 1;
		}
		break;
	default:
		return 0;
	}
	if (status == DOCA_ERROR_IN_PROGRESS) {
		if (sdp_urom_now_ms() < d->deadline_ms)
			return 0;
		sdp_error("domain %p: start did not complete within %d ms (a member that never "
			  "answered?)",
			  (void *)d, domain_timeout_ms());
		status = DOCA_ERROR_TIME_OUT;
	}
	domain_start_fail(d, status);
	return 1;
}

/*
 * Event mode. Waiting for the workers (ADDR, PUSH), their connections' fds wake the PE (the
 * worker contexts arm them); waiting for the OOB (SIZES, DATA), nothing can: keep the PE awake
 * then, since the application's collective has no fd to offer.
 */
static int domain_arm(struct doca_ctx *ctx)
{
	struct doca_urom_domain *d = domain_of(ctx);

	return d->phase == DOM_SIZES || d->phase == DOM_DATA;
}

static doca_error_t domain_start(struct doca_ctx *ctx)
{
	struct doca_urom_domain *d = domain_of(ctx);
	struct doca_pe *pe = sdp_ctx_get_pe(ctx);
	struct sdp_urom_msg msg;
	doca_error_t status;
	size_t i, j;

	if (!d->has_oob || d->num_workers == 0) {
		sdp_error("domain %p: cannot start without %s (doca_urom_domain_set_%s)", (void *)d,
			  d->has_oob ? "workers" : "an OOB collective",
			  d->has_oob ? "workers" : "oob");
		return DOCA_ERROR_BAD_STATE;
	}
	if (d->bufs_cap != d->num_bufs) {
		sdp_error("domain %p: %zu of the %zu announced buffers were added", (void *)d,
			  d->num_bufs, d->bufs_cap);
		return DOCA_ERROR_BAD_STATE;
	}
	for (i = 0; i < d->num_workers; i++) {
		struct doca_urom_worker *w = d->workers[i];

		if (w->ctx.state != DOCA_CTX_STATE_RUNNING || w->phase != SDP_UROM_W_RUNNING) {
			sdp_error("domain %p: worker %zu (id %lu) is %s, not RUNNING", (void *)d, i,
				  (unsigned long)w->id, sdp_ctx_state_name(w->ctx.state));
			return DOCA_ERROR_BAD_STATE;
		}
		if (sdp_ctx_get_pe(&w->ctx) != pe) {
			sdp_error("domain %p: worker %lu is connected to another PE; a domain and "
				  "its workers must share one",
				  (void *)d, (unsigned long)w->id);
			return DOCA_ERROR_NOT_PERMITTED;
		}
		if (w->dom_wait != NULL || w->dom_refs > 0) {
			sdp_error(
				"domain %p: worker %lu belongs to another domain that is not IDLE "
				"(a worker serves one domain at a time)",
				(void *)d, (unsigned long)w->id);
			return DOCA_ERROR_IN_USE;
		}
		for (j = 0; j < i; j++)
			if (d->worker_ids[j] == d->worker_ids[i] || d->workers[j] == w) {
				sdp_error("domain %p: worker %zu repeats a worker or domain id",
					  (void *)d, i);
				return DOCA_ERROR_INVALID_VALUE;
			}
	}
	d->waits = calloc(d->num_workers, sizeof(*d->waits));
	if (d->waits == NULL) {
		sdp_error("domain %p: no memory to start", (void *)d);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (getrandom(&d->key, sizeof(d->key), 0) != (ssize_t)sizeof(d->key))
		d->key = sdp_urom_now_ms() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)d;
	d->deadline_ms = sdp_urom_now_ms() + (uint64_t)domain_timeout_ms();
	d->phase = DOM_ADDR;
	for (i = 0; i < d->num_workers; i++)
		d->workers[i]->dom_refs++;
	d->refs_held = 1;
	for (i = 0; i < d->num_workers; i++) {
		memset(&msg.hdr, 0, sizeof(msg.hdr));
		msg.hdr.type = SDP_UROM_MSG_W_DOMAIN_ADDR;
		msg.u.w_domain_addr.dest_id = d->workers[i]->dest_id;
		status = domain_send(d, i, &msg, SDP_UROM_MSG_W_DOMAIN_ADDR_REPLY);
		if (status != DOCA_SUCCESS) {
			domain_start_cleanup(d);
			domain_unref_workers(d);
			d->phase = DOM_IDLE;
			return status;
		}
	}
	return DOCA_ERROR_IN_PROGRESS;
}

/* Tell every live local worker to drop this domain's table (no answer awaited). */
static void domain_clear_workers(struct doca_urom_domain *d)
{
	struct sdp_urom_msg msg;
	size_t i;

	for (i = 0; i < d->num_workers; i++) {
		struct doca_urom_worker *w = d->workers[i];

		if (atomic_load(&w->dead) || w->phase != SDP_UROM_W_RUNNING || w->ep == NULL)
			continue;
		memset(&msg.hdr, 0, sizeof(msg.hdr));
		msg.hdr.type = SDP_UROM_MSG_W_DOMAIN_CLEAR;
		msg.u.w_domain_clear.dest_id = w->dest_id;
		msg.u.w_domain_clear.domain_key = d->key;
		msg.hdr.req_id = atomic_fetch_add(&domain_req_ids, 1) + 1;
		(void)sdp_urom_worker_send_cmds(w);
		(void)sdp_urom_send_msg(&w->ucx, w->ep, &msg);
	}
}

static doca_error_t domain_stop(struct doca_ctx *ctx)
{
	struct doca_urom_domain *d = domain_of(ctx);
	int pushed = d->phase == DOM_PUSH || d->phase == DOM_RUNNING;

	domain_start_cleanup(d);
	d->phase = DOM_IDLE;
	if (pushed)
		domain_clear_workers(d);
	domain_unref_workers(d);
	return DOCA_SUCCESS;
}

static const struct sdp_ctx_ops domain_ops = {
	.name = "urom_domain",
	.start = domain_start,
	.stop = domain_stop,
	.progress = domain_progress,
	.arm = domain_arm,
};

static void domain_free_bufs(struct doca_urom_domain *domain)
{
	for (size_t i = 0; i < domain->num_bufs; i++) {
		free(domain->bufs[i].memh);
		free(domain->bufs[i].mkey);
	}
	free(domain->bufs);
	domain->bufs = NULL;
	domain->num_bufs = 0;
	domain->bufs_cap = 0;
}

doca_error_t doca_urom_domain_create(struct doca_urom_domain **domain_ctx)
{
	struct doca_urom_domain *domain;

	if (domain_ctx == NULL) {
		sdp_error("NULL domain_ctx");
		return DOCA_ERROR_INVALID_VALUE;
	}
	domain = calloc(1, sizeof(*domain));
	if (domain == NULL) {
		sdp_error("failed to allocate a domain context of %zu bytes", sizeof(*domain));
		return DOCA_ERROR_NO_MEMORY;
	}
	sdp_ctx_init(&domain->ctx, &domain_ops);
	*domain_ctx = domain;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_domain_destroy(struct doca_urom_domain *domain_ctx)
{
	doca_error_t status;

	if (domain_ctx == NULL) {
		sdp_error("NULL domain_ctx");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (domain_ctx->ctx.state != DOCA_CTX_STATE_IDLE) {
		sdp_error("domain %p: cannot destroy, the context is %s (not IDLE)",
			  (void *)domain_ctx, sdp_ctx_state_name(domain_ctx->ctx.state));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	status = sdp_ctx_fini(&domain_ctx->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	domain_free_bufs(domain_ctx);
	for (size_t i = 0; i < domain_ctx->num_parked; i++)
		free(domain_ctx->parked[i]);
	free(domain_ctx->parked);
	free(domain_ctx->worker_ids);
	free(domain_ctx->workers);
	free(domain_ctx);
	return DOCA_SUCCESS;
}

static doca_error_t domain_check_setter(struct doca_urom_domain *domain, const char *what)
{
	if (domain == NULL) {
		sdp_error("NULL domain_ctx (%s)", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return sdp_ctx_check_idle(&domain->ctx, what);
}

doca_error_t doca_urom_domain_set_buffers_count(struct doca_urom_domain *domain_ctx,
						size_t buffers_cnt)
{
	doca_error_t status = domain_check_setter(domain_ctx, "setting the buffer count");
	struct sdp_urom_domain_buf *bufs;

	if (status != DOCA_SUCCESS)
		return status;
	if (buffers_cnt == 0 || buffers_cnt > SDP_UROM_DOM_MAX_SEGS) {
		sdp_error("buffer count %zu out of range [1, %d]", buffers_cnt,
			  SDP_UROM_DOM_MAX_SEGS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	bufs = calloc(buffers_cnt, sizeof(*bufs));
	if (bufs == NULL) {
		sdp_error("failed to allocate %zu domain buffers", buffers_cnt);
		return DOCA_ERROR_NO_MEMORY;
	}
	domain_free_bufs(domain_ctx);
	domain_ctx->bufs = bufs;
	domain_ctx->bufs_cap = buffers_cnt;
	return DOCA_SUCCESS;
}

static void *dup_bytes(const void *src, size_t len)
{
	void *dst = malloc(len);

	if (dst != NULL)
		memcpy(dst, src, len);
	return dst;
}

doca_error_t doca_urom_domain_add_buffer(struct doca_urom_domain *domain_ctx, void *buffer,
					 size_t buf_len, void *memh, size_t memh_len, void *mkey,
					 size_t mkey_len)
{
	doca_error_t status = domain_check_setter(domain_ctx, "adding a buffer");
	struct sdp_urom_domain_buf *b;

	if (status != DOCA_SUCCESS)
		return status;
	if (buffer == NULL || buf_len == 0 || memh == NULL || memh_len == 0 || mkey == NULL ||
	    mkey_len == 0) {
		sdp_error("invalid buffer: buffer %p len %zu, memh %p len %zu, mkey %p len %zu",
			  buffer, buf_len, memh, memh_len, mkey, mkey_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (memh_len > SDP_UROM_DOM_MAX_BLOB || mkey_len > SDP_UROM_DOM_MAX_BLOB ||
	    (uintptr_t)buffer + buf_len < (uintptr_t)buffer) {
		sdp_error("invalid buffer: memh of %zu and mkey of %zu bytes (at most %u each), "
			  "buffer %p + %zu",
			  memh_len, mkey_len, SDP_UROM_DOM_MAX_BLOB, buffer, buf_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (domain_ctx->bufs_cap == 0) {
		sdp_error("domain %p: set the buffer count first "
			  "(doca_urom_domain_set_buffers_count)",
			  (void *)domain_ctx);
		return DOCA_ERROR_BAD_STATE;
	}
	if (domain_ctx->num_bufs == domain_ctx->bufs_cap) {
		sdp_error("domain %p: all %zu buffers were added already", (void *)domain_ctx,
			  domain_ctx->bufs_cap);
		return DOCA_ERROR_FULL;
	}
	b = &domain_ctx->bufs[domain_ctx->num_bufs];
	b->memh = dup_bytes(memh, memh_len);
	b->mkey = dup_bytes(mkey, mkey_len);
	if (b->memh == NULL || b->mkey == NULL) {
		free(b->memh);
		free(b->mkey);
		b->memh = b->mkey = NULL;
		sdp_error("failed to copy a memory handle of %zu and a key of %zu bytes", memh_len,
			  mkey_len);
		return DOCA_ERROR_NO_MEMORY;
	}
	b->buffer = buffer;
	b->len = buf_len;
	b->memh_len = memh_len;
	b->mkey_len = mkey_len;
	domain_ctx->num_bufs++;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_domain_set_oob(struct doca_urom_domain *domain_ctx,
				      struct doca_urom_domain_oob_coll *oob)
{
	doca_error_t status = domain_check_setter(domain_ctx, "setting the OOB collective");

	if (status != DOCA_SUCCESS)
		return status;
	if (oob == NULL || oob->allgather == NULL || oob->req_test == NULL ||
	    oob->req_free == NULL || oob->n_oob_indexes == 0 ||
	    oob->oob_index >= oob->n_oob_indexes) {
		sdp_error("invalid OOB collective %p: callbacks must be set and oob_index %u "
			  "below n_oob_indexes %u",
			  (void *)oob, oob ? oob->oob_index : 0, oob ? oob->n_oob_indexes : 0);
		return DOCA_ERROR_INVALID_VALUE;
	}
	domain_ctx->oob = *oob;
	domain_ctx->has_oob = 1;
	return DOCA_SUCCESS;
}

doca_error_t doca_urom_domain_set_workers(struct doca_urom_domain *domain_ctx,
					  uint64_t *domain_worker_ids,
					  struct doca_urom_worker **workers, size_t workers_cnt)
{
	doca_error_t status = domain_check_setter(domain_ctx, "setting the workers");
	struct doca_urom_worker **w;
	uint64_t *ids;

	if (status != DOCA_SUCCESS)
		return status;
	if (domain_worker_ids == NULL || workers == NULL || workers_cnt == 0) {
		sdp_error("invalid workers: ids %p, workers %p, count %zu",
			  (void *)domain_worker_ids, (void *)workers, workers_cnt);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (size_t i = 0; i < workers_cnt; i++) {
		if (workers[i] == NULL) {
			sdp_error("worker %zu of the domain is NULL", i);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	ids = malloc(workers_cnt * sizeof(*ids));
	w = malloc(workers_cnt * sizeof(*w));
	if (ids == NULL || w == NULL) {
		free(ids);
		free(w);
		sdp_error("failed to allocate %zu domain workers", workers_cnt);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(ids, domain_worker_ids, workers_cnt * sizeof(*ids));
	memcpy(w, workers, workers_cnt * sizeof(*w));
	free(domain_ctx->worker_ids);
	free(domain_ctx->workers);
	domain_ctx->worker_ids = ids;
	domain_ctx->workers = w;
	domain_ctx->num_workers = workers_cnt;
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_urom_domain_as_ctx(struct doca_urom_domain *domain_ctx)
{
	if (domain_ctx == NULL) {
		sdp_error("NULL domain_ctx");
		return NULL;
	}
	return &domain_ctx->ctx;
}
