/*
 * libdoca_eth: the send queue's CPU data path (doca_eth_txq_cpu_data_path.h): send tasks and
 * batch send tasks, and the backlog doca_pe_progress() retries.
 *
 * A send task submitted with DOCA_TASK_SUBMIT_FLAG_FLUSH (doca_task_submit) goes to the backend
 * at once (tx_burst copies the frame); one submitted without it (doca_task_submit_ex) waits in
 * the queue's backlog for doca_ctx_flush_tasks() or the next doca_pe_progress(), and the send
 * tasks waiting then go in one burst (one backend call, one wake-up of the receiver). When the
 * backend is full, tasks wait in the backlog, in order, and doca_pe_progress() retries; tasks
 * still waiting when the queue stops complete with DOCA_ERROR_IO_FAILED.
 *
 * A batch send task (sdp_task_batch.h) goes the same way as one backlog entry: its frames go
 * to the backend in bursts, in order; when the backend is full the rest of the batch waits in
 * the backlog, and nothing submitted later overtakes it. A frame that cannot be sent (no
 * buffer, shorter than an Ethernet header, longer than SDP_ETH_MAX_FRAME) gets its own error
 * status and the rest of the batch is still sent. Batches are pooled per queue, so a freed
 * batch stays readable and a second free or submit of it is refused.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "sdp_buf.h"
#include "sdp_eth_int.h"
#include "sdp_log.h"
#include "sdp_task_batch.h"
#include "softdpu/sdp_pkt.h"

SDP_LOG_COMPONENT("eth_txq");

#define TXQ_MIN_FRAME SDP_PKT_ETH_HLEN /* an Ethernet header */
#define TXQ_BATCH_MAX 128	       /* DOCA_TASK_BATCH_MAX_TASKS_NUMBER_128 */
#define TXQ_PUSH_BURST 64	       /* send tasks handed to the backend in one tx_burst */

/* ---- sending -------------------------------------------------------------------------------- */

/*
 * The frame a packet buffer holds: DOCA_SUCCESS, or DOCA_ERROR_INVALID_VALUE when it is none
 * (*len_p: its length, 0 without a buffer). The buf's own fields: every buf a task holds is one
 * of this library's (sdp_buf.h).
 */
static doca_error_t pkt_frame(const struct doca_buf *pkt, void **data_p, size_t *len_p)
{
	size_t len = pkt != NULL ? pkt->data_len : 0;

	*len_p = len;
	if (pkt == NULL || len < TXQ_MIN_FRAME || len > SDP_ETH_MAX_FRAME)
		return DOCA_ERROR_INVALID_VALUE;
	*data_p = pkt->data;
	return DOCA_SUCCESS;
}

/*
 * Hand n frames to the backend in order; returns how many it took (fewer: it is full now).
 * With the checksum offloads the application's buffers stay as they are: the checksums go into
 * a copy, one frame at a time.
 */
static uint16_t txq_tx(struct doca_eth_txq *txq, struct sdp_pkt *pkts, uint16_t n)
{
	struct sdp_eth_dport *dport = txq->dport;
	uint16_t taken = 0;

	pthread_mutex_lock(&dport->tx_lock);
	if (txq->l3_csum || txq->l4_csum) {
		for (; taken < n; taken++) {
			struct sdp_pkt one = pkts[taken];

			memcpy(txq->stage, one.data, one.len);
			sdp_pkt_csum_fill(txq->stage, one.len, txq->l3_csum, txq->l4_csum);
			one.data = txq->stage;
			if (dport->ops->tx_burst(dport->port, 0, &one, 1) == 0)
				break;
		}
	} else {
		taken = dport->ops->tx_burst(dport->port, 0, pkts, n);
	}
	for (uint16_t i = 0; i < taken; i++)
		sdp_eth_dport_count_tx(dport, pkts[i].len);
	pthread_mutex_unlock(&dport->tx_lock);
	for (uint16_t i = 0; i < taken; i++) {
		txq->counters.packets++;
		txq->counters.bytes += pkts[i].len;
	}
	return taken;
}

/*
 * Send the batch's frames from b->next on, in bursts of the valid frames between bad ones.
 * Returns 1 when every frame has its status, 0 when the backend is full (b->next says where
 * to go on).
 */
static int batch_push(struct doca_eth_txq *txq, struct sdp_eth_txq_batch *b)
{
	struct doca_task_batch *batch = &b->batch;
	struct sdp_pkt pkts[TXQ_BATCH_MAX];

	while (b->next < batch->tasks_num) {
		uint16_t first = b->next, n = 0, taken;

		while (first + n < batch->tasks_num) {
			void *data = NULL;
			size_t len = 0;

			if (pkt_frame(b->pkts[first + n], &data, &len) != DOCA_SUCCESS)
				break;
			memset(&pkts[n], 0, sizeof(pkts[n]));
			pkts[n].data = data;
			pkts[n].len = (uint32_t)len;
			n++;
		}
		if (n == 0) {
			void *data = NULL;
			size_t len = 0;

			(void)pkt_frame(b->pkts[first], &data, &len);
			if (b->pkts[first] == NULL)
				sdp_error("eth_txq %p: batch %p task %u has no packet buffer",
					  (void *)txq, (void *)b, first);
			else
				sdp_error("eth_txq %p: batch %p task %u needs a frame of %u to %u "
					  "bytes (has %zu)",
					  (void *)txq, (void *)b, first, TXQ_MIN_FRAME,
					  SDP_ETH_MAX_FRAME, len);
			batch->status[first] = DOCA_ERROR_INVALID_VALUE;
			txq->counters.errors++;
			b->next++;
			continue;
		}
		taken = txq_tx(txq, pkts, n);
		b->next += taken;
		if (taken < n)
			return 0;
	}
	return 1;
}

/*
 * Send what waits in the backlog, in order, while the backend takes it: the send tasks that
 * follow one another go in one burst (a task submitted without DOCA_TASK_SUBMIT_FLAG_FLUSH
 * waits here for the next flush or progress call, so its frame shares the burst).
 */
int sdp_eth_txq_backlog_push(struct doca_eth_txq *txq)
{
	struct sdp_pkt pkts[TXQ_PUSH_BURST];
	struct sdp_eth_txq_item *items[TXQ_PUSH_BURST];
	int done = 0;

	txq->unpushed = 0;
	while (!sdp_list_is_empty(&txq->backlog)) {
		struct sdp_eth_txq_item *it =
			sdp_container_of(txq->backlog.next, struct sdp_eth_txq_item, link);
		uint16_t n = 0, taken;

		if (it->batch != NULL) {
			uint16_t before = it->batch->next;

			if (!batch_push(txq, it->batch)) {
				done |= it->batch->next != before;
				break;
			}
			sdp_list_del(&it->link);
			sdp_task_batch_complete(&it->batch->batch);
			done = 1;
			continue;
		}
		/*
		 * The run of send tasks at the head. Their frames were checked at submission; one
		 * whose buffer the application changed since (not allowed, but it must not overrun
		 * the checksum stage) fails alone with INVALID_VALUE, in its turn.
		 */
		for (sdp_list_link_t *l = txq->backlog.next;
		     l != &txq->backlog && n < TXQ_PUSH_BURST; l = l->next) {
			struct sdp_eth_txq_item *s =
				sdp_container_of(l, struct sdp_eth_txq_item, link);
			void *data = NULL;
			size_t len = 0;

			if (s->send == NULL || pkt_frame(s->send->pkt, &data, &len) != DOCA_SUCCESS)
				break;
			pkts[n] = (struct sdp_pkt){.data = data, .len = (uint32_t)len};
			items[n++] = s;
		}
		if (n == 0) {
			sdp_error("eth_txq %p: send task %p's frame changed after submission (%zu "
				  "bytes); not sent",
				  (void *)txq, (void *)it->send,
				  it->send->pkt != NULL ? it->send->pkt->data_len : (size_t)0);
			txq->counters.errors++;
			sdp_list_del(&it->link);
			sdp_task_complete(&it->send->task, DOCA_ERROR_INVALID_VALUE);
			done = 1;
			continue;
		}
		taken = txq_tx(txq, pkts, n);
		for (uint16_t i = 0; i < taken; i++) {
			sdp_list_del(&items[i]->link);
			sdp_task_complete(&items[i]->send->task, DOCA_SUCCESS);
		}
		done |= taken != 0;
		if (taken < n)
			break;
	}
	return done;
}

/* Complete what still waits in the backlog with DOCA_ERROR_IO_FAILED (the queue stops). */
void sdp_eth_txq_backlog_fail(struct doca_eth_txq *txq)
{
	struct sdp_eth_txq_item *it, *tmp;

	/* in order: a batch's callback comes before those of tasks submitted after it */
	sdp_list_for_each_safe(it, tmp, &txq->backlog, link) {
		sdp_list_del(&it->link);
		if (it->send != NULL) {
			txq->counters.errors++;
			sdp_task_complete(&it->send->task, DOCA_ERROR_IO_FAILED);
			continue;
		}
		for (uint16_t i = it->batch->next; i < it->batch->batch.tasks_num; i++) {
			it->batch->batch.status[i] = DOCA_ERROR_IO_FAILED;
			txq->counters.errors++;
		}
		it->batch->next = it->batch->batch.tasks_num;
		sdp_task_batch_complete(&it->batch->batch);
	}
}

/* Free the pooled batches (IDLE: the application holds none). */
void sdp_eth_txq_batch_pool_drain(struct doca_eth_txq *txq)
{
	while (txq->batch_pool != NULL) {
		struct sdp_eth_txq_batch *b = txq->batch_pool;

		txq->batch_pool = b->pool_next;
		free(b);
	}
}

/* ---- send tasks ----------------------------------------------------------------------------- */

static doca_error_t send_validate(const struct doca_task *task)
{
	const struct doca_eth_txq_task_send *t = (const struct doca_eth_txq_task_send *)task;
	void *data = NULL;
	size_t len = 0;

	if (pkt_frame(t->pkt, &data, &len) != DOCA_SUCCESS) {
		sdp_error("eth_txq %p: send task %p needs a frame of %u to %u bytes (has %zu)",
			  (void *)t->txq, (const void *)t, TXQ_MIN_FRAME, SDP_ETH_MAX_FRAME, len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t send_submit(struct doca_task *task)
{
	struct doca_eth_txq_task_send *t = (struct doca_eth_txq_task_send *)task;
	struct doca_eth_txq *txq = t->txq;
	doca_error_t status = send_validate(task);

	if (status != DOCA_SUCCESS)
		return status;
	/*
	 * In order behind what already waits. With DOCA_TASK_SUBMIT_FLAG_FLUSH (doca_task_submit)
	 * the context's flush op pushes the backlog right after this; without it the frame waits
	 * for doca_ctx_flush_tasks() or the next progress call and goes out with its neighbours.
	 */
	sdp_list_add_tail(&txq->backlog, &t->item.link);
	txq->unpushed = 1;
	return DOCA_SUCCESS;
}

static void send_free(struct doca_task *task)
{
	struct doca_eth_txq_task_send *t = (struct doca_eth_txq_task_send *)task;

	t->txq->num_send--;
	free(task);
}

static const struct sdp_task_ops send_task_ops = {
	.name = "eth_txq_send",
	.submit = send_submit,
	.validate = send_validate,
	.free = send_free,
};

static void send_done(struct doca_task *task, union doca_data task_user_data,
		      union doca_data ctx_user_data)
{
	struct doca_eth_txq_task_send *t = (struct doca_eth_txq_task_send *)task;
	doca_eth_txq_task_send_completion_cb_t cb =
		task->status == DOCA_SUCCESS ? t->txq->send_ok_cb : t->txq->send_err_cb;

	cb(t, task_user_data, ctx_user_data);
}

doca_error_t doca_eth_txq_task_send_set_conf(
	struct doca_eth_txq *eth_txq, doca_eth_txq_task_send_completion_cb_t task_completion_cb,
	doca_eth_txq_task_send_completion_cb_t task_error_cb, uint32_t task_send_num)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "task_send_set_conf");

	if (status != DOCA_SUCCESS)
		return status;
	if (task_completion_cb == NULL || task_error_cb == NULL || task_send_num == 0) {
		sdp_error("eth_txq %p: task_send_set_conf needs both callbacks and a nonzero "
			  "task count",
			  (void *)eth_txq);
		return DOCA_ERROR_INVALID_VALUE;
	}
	eth_txq->send_ok_cb = task_completion_cb;
	eth_txq->send_err_cb = task_error_cb;
	eth_txq->task_send_num = task_send_num;
	return DOCA_SUCCESS;
}

doca_error_t doca_eth_txq_task_send_allocate_init(struct doca_eth_txq *eth_txq,
						  struct doca_buf *pkt, union doca_data user_data,
						  struct doca_eth_txq_task_send **task_send)
{
	struct doca_eth_txq_task_send *t;
	doca_error_t status;

	if (eth_txq == NULL || pkt == NULL || task_send == NULL) {
		sdp_error("NULL %s", eth_txq == NULL ? "queue" :
				     pkt == NULL     ? "packet buffer" :
						       "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_running(&eth_txq->ctx, "task_send_allocate_init");
	if (status != DOCA_SUCCESS)
		return status;
	if (eth_txq->task_send_num == 0) {
		sdp_error("eth_txq %p: send tasks are not configured "
			  "(doca_eth_txq_task_send_set_conf)",
			  (void *)eth_txq);
		return DOCA_ERROR_BAD_STATE;
	}
	if (eth_txq->num_send >= eth_txq->task_send_num) {
		sdp_error("eth_txq %p: all %u send tasks are allocated", (void *)eth_txq,
			  eth_txq->task_send_num);
		return DOCA_ERROR_NO_MEMORY;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		sdp_error("eth_txq %p: out of memory for a send task", (void *)eth_txq);
		return DOCA_ERROR_NO_MEMORY;
	}
	sdp_task_init(&t->task, &send_task_ops, &eth_txq->ctx, send_done, send_done);
	t->task.user_data = user_data;
	t->txq = eth_txq;
	t->pkt = pkt;
	sdp_list_head_init(&t->item.link);
	t->item.send = t;
	eth_txq->num_send++;
	*task_send = t;
	return DOCA_SUCCESS;
}

struct doca_task *doca_eth_txq_task_send_as_doca_task(struct doca_eth_txq_task_send *task_send)
{
	return task_send != NULL ? &task_send->task : NULL;
}

void doca_eth_txq_task_send_set_pkt(struct doca_eth_txq_task_send *task_send, struct doca_buf *pkt)
{
	if (task_send == NULL) {
		sdp_error("NULL task");
		return;
	}
	if (task_send->task.state == SDP_TASK_SUBMITTED) {
		sdp_error("task %p is submitted", (void *)task_send);
		return;
	}
	task_send->pkt = pkt;
}

doca_error_t doca_eth_txq_task_send_get_pkt(const struct doca_eth_txq_task_send *task_send,
					    struct doca_buf **pkt)
{
	if (task_send == NULL || pkt == NULL) {
		sdp_error("NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*pkt = task_send->pkt;
	return DOCA_SUCCESS;
}

/* ---- batch send tasks ----------------------------------------------------------------------- */

static doca_error_t batch_submit(struct doca_task_batch *batch)
{
	struct sdp_eth_txq_batch *b = (struct sdp_eth_txq_batch *)batch;
	struct doca_eth_txq *txq = b->txq;

	b->next = 0;
	for (uint16_t i = 0; i < batch->tasks_num; i++)
		batch->status[i] = DOCA_SUCCESS;
	/* keep the order: nothing overtakes what already waits (send tasks not yet flushed too) */
	sdp_list_add_tail(&txq->backlog, &b->item.link);
	(void)sdp_eth_txq_backlog_push(txq);
	return DOCA_SUCCESS;
}

static void batch_deliver(struct doca_task_batch *batch, union doca_data ctx_user_data)
{
	struct sdp_eth_txq_batch *b = (struct sdp_eth_txq_batch *)batch;
	doca_eth_txq_task_batch_send_completion_cb_t cb =
		sdp_task_batch_get_status(batch) == DOCA_SUCCESS ? b->txq->batch_ok_cb :
								   b->txq->batch_err_cb;

	cb(batch, batch->tasks_num, ctx_user_data, batch->user_data, batch->task_user_data, b->pkts,
	   batch->status);
}

static void batch_free(struct doca_task_batch *batch)
{
	struct sdp_eth_txq_batch *b = (struct sdp_eth_txq_batch *)batch;
	struct doca_eth_txq *txq = b->txq;

	txq->batch_held--;
	b->pool_next = txq->batch_pool;
	txq->batch_pool = b;
}

static const struct sdp_task_batch_ops batch_send_ops = {
	.name = "eth_txq_batch_send",
	.submit = batch_submit,
	.deliver = batch_deliver,
	.free = batch_free,
};

doca_error_t doca_eth_txq_task_batch_send_set_conf(
	struct doca_eth_txq *eth_txq, enum doca_task_batch_max_tasks_number max_tasks_number,
	uint16_t num_task_batches,
	doca_eth_txq_task_batch_send_completion_cb_t success_completion_cb,
	doca_eth_txq_task_batch_send_completion_cb_t error_completion_cb)
{
	doca_error_t status =
		sdp_ctx_check_idle(eth_txq ? &eth_txq->ctx : NULL, "task_batch_send_set_conf");
	uint16_t max = sdp_task_batch_max_tasks(max_tasks_number);

	if (status != DOCA_SUCCESS)
		return status;
	if (max == 0 || num_task_batches == 0 || success_completion_cb == NULL ||
	    error_completion_cb == NULL) {
		sdp_error("eth_txq %p: task_batch_send_set_conf needs a known batch size (got %d), "
			  "a nonzero batch count (got %u) and both callbacks",
			  (void *)eth_txq, (int)max_tasks_number, num_task_batches);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (max != eth_txq->batch_max)
		sdp_eth_txq_batch_pool_drain(
			eth_txq); /* pooled batches have arrays of the old size */
	eth_txq->batch_max = max;
	eth_txq->batch_num = num_task_batches;
	eth_txq->batch_ok_cb = success_completion_cb;
	eth_txq->batch_err_cb = error_completion_cb;
	return DOCA_SUCCESS;
}

/* A batch of batch_max tasks with its arrays, from the pool or new; NULL without memory. */
static struct sdp_eth_txq_batch *batch_get(struct doca_eth_txq *txq)
{
	struct sdp_eth_txq_batch *b = txq->batch_pool;
	size_t max = txq->batch_max;

	if (b != NULL) {
		txq->batch_pool = b->pool_next;
		return b;
	}
	b = calloc(1, sizeof(*b) + max * (sizeof(struct doca_buf *) + sizeof(union doca_data) +
					  sizeof(doca_error_t)));
	if (b == NULL)
		return NULL;
	b->txq = txq;
	b->pkts = (struct doca_buf **)(b + 1);
	b->batch.task_user_data = (union doca_data *)(b->pkts + max);
	b->batch.status = (doca_error_t *)(b->batch.task_user_data + max);
	sdp_list_head_init(&b->item.link);
	b->item.batch = b;
	return b;
}

doca_error_t doca_eth_txq_task_batch_send_allocate(struct doca_eth_txq *eth_txq, uint16_t tasks_num,
						   union doca_data task_batch_user_data,
						   struct doca_buf ***pkt_array,
						   union doca_data **task_user_data_array,
						   struct doca_task_batch **task_batch)
{
	struct sdp_eth_txq_batch *b;
	doca_error_t status;

	if (eth_txq == NULL || pkt_array == NULL || task_user_data_array == NULL ||
	    task_batch == NULL) {
		sdp_error("NULL %s", eth_txq == NULL		  ? "queue" :
				     pkt_array == NULL		  ? "pkt_array output" :
				     task_user_data_array == NULL ? "task_user_data_array output" :
								    "task_batch output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = sdp_ctx_check_running(&eth_txq->ctx, "task_batch_send_allocate");
	if (status != DOCA_SUCCESS)
		return status;
	if (eth_txq->batch_max == 0) {
		sdp_error("eth_txq %p: batch send tasks are not configured "
			  "(doca_eth_txq_task_batch_send_set_conf)",
			  (void *)eth_txq);
		return DOCA_ERROR_BAD_STATE;
	}
	if (tasks_num == 0 || tasks_num > eth_txq->batch_max) {
		sdp_error("eth_txq %p: a batch of %u send tasks; from 1 to %u are possible",
			  (void *)eth_txq, tasks_num, eth_txq->batch_max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (eth_txq->batch_held >= eth_txq->batch_num) {
		sdp_error("eth_txq %p: all %u batch send tasks are allocated", (void *)eth_txq,
			  eth_txq->batch_num);
		return DOCA_ERROR_NO_MEMORY;
	}
	b = batch_get(eth_txq);
	if (b == NULL) {
		sdp_error("eth_txq %p: out of memory for a batch of %u send tasks", (void *)eth_txq,
			  eth_txq->batch_max);
		return DOCA_ERROR_NO_MEMORY;
	}
	sdp_task_batch_init(&b->batch, &batch_send_ops, &eth_txq->ctx, tasks_num,
			    eth_txq->batch_max, task_batch_user_data, b->batch.task_user_data,
			    b->batch.status);
	memset(b->pkts, 0, sizeof(*b->pkts) * eth_txq->batch_max);
	b->next = 0;
	eth_txq->batch_held++;
	*pkt_array = b->pkts;
	*task_user_data_array = b->batch.task_user_data;
	*task_batch = &b->batch;
	return DOCA_SUCCESS;
}
