/*
 * libdoca_urom: the domain context. It is created and configured as DOCA describes (OOB
 * collective, local workers, buffers), but starting it returns DOCA_ERROR_NOT_SUPPORTED:
 * exchanging worker addresses and memory descriptors comes with a later issue
 * (docs/compat.md, docs/errors.md).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>

#include "doca_urom.h"
#include "sdp_ctx.h"
#include "sdp_log.h"
#include "sdp_urom_host.h"

SDP_LOG_COMPONENT("urom_domain");

struct sdp_urom_domain_buf {
	void *buffer;
	size_t len;
	void *memh; /* copies of the packed handle and key */
	size_t memh_len;
	void *mkey;
	size_t mkey_len;
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
};

static doca_error_t domain_start(struct doca_ctx *ctx)
{
	sdp_error("domain %p: cannot start: UROM domains come with a later issue of softdpu "
		  "(worker address and memory exchange are not implemented)",
		  (void *)ctx);
	return DOCA_ERROR_NOT_SUPPORTED;
}

static const struct sdp_ctx_ops domain_ops = {
	.name = "urom_domain",
	.start = domain_start,
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
	if (buffers_cnt == 0 || buffers_cnt > 65536) {
		sdp_error("buffer count %zu out of range [1, 65536]", buffers_cnt);
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
