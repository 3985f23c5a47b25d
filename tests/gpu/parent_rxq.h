/*
 * GPU tests of the rollback (test_rollback_hang.cu, test_gpu_faults.cu): the parent Ethernet path
 * they keep up and re-verify, a CPU receive queue whose tasks are re-posted from their
 * completion (started with ladder_cpu_rxq_start on g_pe with parent_ok / parent_err), and the
 * rollback's measure callback: its receive rate over 0.3 s. One translation unit per test.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef PARENT_RXQ_H_
#define PARENT_RXQ_H_

#include "ladder_common.h"

static struct doca_pe *g_pe;
static uint64_t g_parent_rx;
static uint8_t g_mem[64 * 2048] __attribute__((aligned(4096)));

static void parent_ok(struct doca_eth_rxq_task_recv *t, union doca_data u, union doca_data c)
{
	struct doca_buf *b = NULL;

	(void)u;
	(void)c;
	g_parent_rx++;
	(void)doca_eth_rxq_task_recv_get_pkt(t, &b);
	(void)doca_buf_reset_data_len(b);
	if (doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t)) != DOCA_SUCCESS) {
		(void)doca_buf_dec_refcount(b, NULL);
		doca_task_free(doca_eth_rxq_task_recv_as_doca_task(t));
	}
}

static void parent_err(struct doca_eth_rxq_task_recv *t, union doca_data u, union doca_data c)
{
	struct doca_buf *b = NULL;

	(void)u;
	(void)c;
	(void)doca_eth_rxq_task_recv_get_pkt(t, &b);
	if (b != NULL)
		(void)doca_buf_dec_refcount(b, NULL);
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(t));
}

static void progress(double seconds)
{
	double end = host_now_s() + seconds;

	while (host_now_s() < end)
		if (doca_pe_progress(g_pe) == 0)
			usleep(100);
}

static doca_error_t measure(void *user, double *rate)
{
	uint64_t n0;
	double t0;

	(void)user;
	progress(0.05);
	n0 = g_parent_rx;
	t0 = host_now_s();
	progress(0.3);
	*rate = (double)(g_parent_rx - n0) / (host_now_s() - t0);
	return DOCA_SUCCESS;
}

#endif /* PARENT_RXQ_H_ */
