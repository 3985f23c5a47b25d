/*
 * libdoca_eth: the send queue context (doca_eth_txq.h): create/destroy, setters (checksum
 * offloads, wait-on-time), capabilities, the context ops, softdpu's extensions. The CPU data
 * path (doca_eth_txq_cpu_data_path.h: send tasks, batch send tasks, the backlog) is txq_cpu.c,
 * the GPU one (doca_eth_txq_gpu_data_path.h) txq_gpu.c.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "sdp_eth_int.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("eth_txq");

/* ---- context ops ---------------------------------------------------------------------------- */

static doca_error_t txq_start(struct doca_ctx *ctx)
{
	struct doca_eth_txq *txq = (struct doca_eth_txq *)ctx;
	doca_error_t status;

	if (ctx->gpu != NULL)
		return sdp_eth_txq_gpu_start(txq); /* txq_gpu.c */
	if (txq->wait_on_time) {
		sdp_error("eth_txq %p: wait-on-time runs on the GPU data path only", (void *)txq);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (txq->task_send_num == 0 && txq->batch_max == 0) {
		sdp_error("eth_txq %p: started without doca_eth_txq_task_send_set_conf() or "
			  "doca_eth_txq_task_batch_send_set_conf()",
			  (void *)txq);
		return DOCA_ERROR_BAD_STATE;
	}
	txq->has_queue_id = 0;
	status = sdp_eth_dport_get(txq->dev, &txq->dport);
	if (status != DOCA_SUCCESS)
		return status;
	txq->retry_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (txq->retry_fd < 0) {
		sdp_error("eth_txq %p: timerfd_create failed: %m", (void *)txq);
		status = DOCA_ERROR_OPERATING_SYSTEM;
	} else {
		status = sdp_pe_add_event_fd(sdp_ctx_get_pe(ctx), txq->retry_fd);
	}
	if (status != DOCA_SUCCESS) {
		if (txq->retry_fd >= 0)
			close(txq->retry_fd);
		txq->retry_fd = -1;
		sdp_eth_dport_put(txq->dport);
		txq->dport = NULL;
		return status;
	}
	txq->retry_armed = 0;
	txq->retry_ms = 1;
	return DOCA_SUCCESS;
}

/* The retry timer of the CPU path goes (the queue stops). */
static void txq_retry_fini(struct doca_eth_txq *txq)
{
	if (txq->retry_fd < 0)
		return;
	sdp_pe_del_event_fd(sdp_ctx_get_pe(&txq->ctx), txq->retry_fd);
	close(txq->retry_fd);
	txq->retry_fd = -1;
}

static doca_error_t txq_stop(struct doca_ctx *ctx)
{
	struct doca_eth_txq *txq = (struct doca_eth_txq *)ctx;

	if (txq->dport == NULL)
		return DOCA_SUCCESS;
	if (txq->gpu_tx != NULL)
		sdp_eth_txq_gpu_stop(txq); /* txq_gpu.c */
	/* what was submitted without a flush goes now; what the backend cannot take fails, in
	 * order (txq_cpu.c) */
	(void)sdp_eth_txq_backlog_push(txq);
	sdp_eth_txq_backlog_fail(txq);
	txq_retry_fini(txq);
	sdp_eth_dport_put(txq->dport);
	txq->dport = NULL;
	return DOCA_SUCCESS;
}

static int txq_progress(struct doca_ctx *ctx)
{
	struct doca_eth_txq *txq = (struct doca_eth_txq *)ctx;

	if (txq->dport == NULL || ctx->state != DOCA_CTX_STATE_RUNNING)
		return 0;
	if (txq->gpu_tx != NULL)
		return sdp_eth_gpu_txq_progress(txq->gpu_tx);
	if (txq->retry_armed) {
		uint64_t expirations;

		/* level-triggered in the PE: read it, fired or not (one syscall per sleep) */
		if (read(txq->retry_fd, &expirations, sizeof(expirations)) < 0)
			expirations = 0; /* EAGAIN: not yet */
		txq->retry_armed = 0;
	}
	return sdp_eth_txq_backlog_push(txq); /* txq_cpu.c */
}

/* doca_ctx_flush_tasks and every submission with DOCA_TASK_SUBMIT_FLAG_FLUSH */
static void txq_flush(struct doca_ctx *ctx)
{
	struct doca_eth_txq *txq = (struct doca_eth_txq *)ctx;

	if (txq->dport != NULL && txq->gpu_tx == NULL)
		(void)sdp_eth_txq_backlog_push(txq); /* txq_cpu.c */
}

/*
 * Before the application sleeps: tasks that were never offered to the backend are work; tasks
 * the backend refused (full) are retried when the retry timer fires.
 */
static int txq_arm(struct doca_ctx *ctx)
{
	struct doca_eth_txq *txq = (struct doca_eth_txq *)ctx;
	struct itimerspec its = {{0, 0}, {0, 0}};

	if (txq->dport == NULL || txq->gpu_tx != NULL)
		return 0;
	if (txq->unpushed)
		return 1;
	if (sdp_list_is_empty(&txq->backlog)) {
		txq->retry_ms = 1;
		return 0;
	}
	its.it_value.tv_nsec = (long)txq->retry_ms * 1000000L;
	if (timerfd_settime(txq->retry_fd, 0, &its, NULL) != 0) {
		sdp_warn("eth_txq %p: timerfd_settime failed: %m; waking up at once instead",
			 (void *)txq);
		return 1;
	}
	txq->retry_armed = 1;
	if (txq->retry_ms < 16)
		txq->retry_ms *= 2;
	return 0;
}

static const struct sdp_ctx_ops txq_ctx_ops = {
	.name = "eth_txq",
	.start = txq_start,
	.stop = txq_stop,
	.progress = txq_progress,
	.arm = txq_arm,
	.flush = txq_flush,
};

/* ---- create / destroy / setters ------------------------------------------------------------- */

doca_error_t doca_eth_txq_create(struct doca_dev *dev, uint32_t max_burst_size,
				 struct doca_eth_txq **eth_txq)
{
	struct doca_eth_txq *txq;

	if (dev == NULL || eth_txq == NULL) {
		sdp_error("NULL %s", dev == NULL ? "device" : "output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (sdp_dev_get_eth_ops(dev) == NULL) {
		sdp_error("device %p has no Ethernet port", (void *)dev);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (max_burst_size == 0 || max_burst_size > SDP_ETH_DEF_MAX_BURST * 64u) {
		sdp_error("max_burst_size %u is not from 1 to %u", max_burst_size,
			  SDP_ETH_DEF_MAX_BURST * 64u);
		return DOCA_ERROR_INVALID_VALUE;
	}
	txq = calloc(1, sizeof(*txq));
	if (txq == NULL)
		goto err_nomem;
	txq->stage = malloc(SDP_ETH_MAX_FRAME);
	if (txq->stage == NULL)
		goto err_free;
	sdp_ctx_init(&txq->ctx, &txq_ctx_ops);
	txq->dev = dev;
	txq->max_burst_size = max_burst_size;
	sdp_list_head_init(&txq->backlog);
	txq->retry_fd = -1;
	sdp_dev_hold(dev);
	*eth_txq = txq;
	return DOCA_SUCCESS;

err_free:
	free(txq);
err_nomem:
	sdp_error("out of memory");
	return DOCA_ERROR_NO_MEMORY;
}

doca_error_t doca_eth_txq_destroy(struct doca_eth_txq *eth_txq)
{
	doca_error_t status;

	if (eth_txq == NULL) {
		sdp_error("NULL queue");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_fini(&eth_txq->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	sdp_eth_txq_batch_pool_drain(eth_txq); /* txq_cpu.c */
	sdp_dev_release(eth_txq->dev);
	free(eth_txq->stage);
	free(eth_txq);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_eth_txq_as_doca_ctx(struct doca_eth_txq *eth_txq)
{
	return eth_txq != NULL ? &eth_txq->ctx : NULL;
}

doca_error_t doca_eth_txq_set_type(struct doca_eth_txq *eth_txq, enum doca_eth_txq_type type)
{
	doca_error_t status = sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "set_type");

	if (status != DOCA_SUCCESS)
		return status;
	if (type != DOCA_ETH_TXQ_TYPE_REGULAR) {
		sdp_error("eth_txq %p: unknown type %d", (void *)eth_txq, (int)type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_set_max_burst_size(struct doca_eth_txq *eth_txq, uint32_t max_burst_size)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "set_max_burst_size");

	if (status != DOCA_SUCCESS)
		return status;
	if (max_burst_size == 0 || max_burst_size > SDP_ETH_DEF_MAX_BURST * 64u) {
		sdp_error("eth_txq %p: max_burst_size %u is not from 1 to %u", (void *)eth_txq,
			  max_burst_size, SDP_ETH_DEF_MAX_BURST * 64u);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_txq->max_burst_size = max_burst_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_set_l3_chksum_offload(struct doca_eth_txq *eth_txq,
						uint8_t enable_l3_chksum)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "set_l3_chksum_offload");

	if (status != DOCA_SUCCESS)
		return status;
	eth_txq->l3_csum = enable_l3_chksum != 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_set_l4_chksum_offload(struct doca_eth_txq *eth_txq,
						uint8_t enable_l4_chksum)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "set_l4_chksum_offload");

	if (status != DOCA_SUCCESS)
		return status;
	eth_txq->l4_csum = enable_l4_chksum != 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_apply_queue_id(struct doca_eth_txq *eth_txq, uint16_t queue_id)
{
	if (eth_txq == NULL) {
		sdp_error("NULL queue");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_txq->ctx.state != DOCA_CTX_STATE_RUNNING) {
		sdp_error("eth_txq %p is %s, expected RUNNING", (void *)eth_txq,
			  sdp_ctx_state_name(eth_txq->ctx.state));
		return DOCA_ERROR_BAD_STATE;
	}
	eth_txq->has_queue_id = 1;
	eth_txq->queue_id = queue_id;
	return DOCA_SUCCESS;
}

/* ---- capabilities --------------------------------------------------------------------------- */

/* The devinfo check of the capability queries; logs on behalf of func, the query called. */
static doca_error_t check_devinfo(const struct doca_devinfo *devinfo, const char *func)
{
	if (devinfo == NULL || sdp_devinfo_get_attr(devinfo) == NULL) {
		sdp_log_as(DOCA_LOG_LEVEL_ERROR, func, "NULL or bad devinfo");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return sdp_eth_devinfo_has_port(devinfo) ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_eth_txq_cap_is_type_supported(const struct doca_devinfo *devinfo,
						enum doca_eth_txq_type type,
						enum doca_eth_txq_data_path_type data_path_type)
{
	doca_error_t status = check_devinfo(devinfo, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (data_path_type != DOCA_ETH_TXQ_DATA_PATH_TYPE_CPU &&
	    data_path_type != DOCA_ETH_TXQ_DATA_PATH_TYPE_GPU) {
		sdp_error("unknown data path type %d", (int)data_path_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* REGULAR on both data paths (the GPU one through the engine, docs/gpunetio.md) */
	return type == DOCA_ETH_TXQ_TYPE_REGULAR ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_eth_txq_cap_get_max_burst_size(const struct doca_devinfo *devinfo,
						 uint32_t max_send_buf_list_len,
						 uint16_t max_lso_header_size,
						 uint32_t *max_burst_size)
{
	doca_error_t status;

	(void)max_lso_header_size; /* no LSO yet: the burst does not depend on it */
	if (max_burst_size == NULL || max_send_buf_list_len > 1) {
		sdp_error("%s", max_burst_size == NULL ?
					"NULL output" :
					"buffer lists longer than 1 are not supported");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = check_devinfo(devinfo, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	*max_burst_size = SDP_ETH_DEF_MAX_BURST * 64u;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_cap_is_l3_chksum_offload_supported(const struct doca_devinfo *devinfo)
{
	return check_devinfo(devinfo, __func__);
}

doca_error_t doca_eth_txq_cap_is_l4_chksum_offload_supported(const struct doca_devinfo *devinfo)
{
	return check_devinfo(devinfo, __func__);
}

/* ---- wait-on-time (doca_eth_txq.h; the GPU data path runs it) ------------------------------ */

doca_error_t doca_eth_txq_set_wait_on_time_offload(struct doca_eth_txq *eth_txq)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "set_wait_on_time_offload");

	if (status == DOCA_SUCCESS)
		eth_txq->wait_on_time = 1;
	return status;
}

doca_error_t doca_eth_txq_cap_get_wait_on_time_offload_supported(
	const struct doca_devinfo *devinfo, enum doca_eth_wait_on_time_type *wait_on_time_mode)
{
	doca_error_t status = check_devinfo(devinfo, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (wait_on_time_mode == NULL) {
		sdp_error("NULL output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* the engine holds each descriptor until its time (CLOCK_REALTIME) */
	*wait_on_time_mode = DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_calculate_timestamp(struct doca_eth_txq *eth_txq, uint64_t timestamp_ns,
					      uint64_t *wait_on_time_value)
{
	uint64_t v;

	if (eth_txq == NULL || wait_on_time_value == NULL) {
		sdp_error("NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_txq->ctx.state != DOCA_CTX_STATE_RUNNING || !eth_txq->wait_on_time) {
		sdp_error("eth_txq %p is not a RUNNING queue with wait-on-time", (void *)eth_txq);
		return DOCA_ERROR_BAD_STATE;
	}
	/* DOCA's format: seconds in the high 32 bits, nanoseconds in the low ones, big-endian */
	v = (timestamp_ns / 1000000000ull) << 32 | (timestamp_ns % 1000000000ull);
	*wait_on_time_value = __builtin_bswap64(v);
	return DOCA_SUCCESS;
}

/* ---- softdpu extension ---------------------------------------------------------------------- */

doca_error_t sdp_eth_txq_get_counters(const struct doca_eth_txq *eth_txq,
				      struct sdp_eth_txq_counters *counters)
{
	if (eth_txq == NULL || counters == NULL) {
		sdp_error("NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*counters = eth_txq->counters;
	if (eth_txq->gpu_tx != NULL)
		sdp_eth_gpu_txq_counters(eth_txq->gpu_tx, counters);
	return DOCA_SUCCESS;
}
