/*
 * The GPU mode's host side (gpp_gpu.c), as gpu_packet_processing.c drives it:
 *   gpp_gpu_open            CUDA device, doca_gpu, the CPU-visible control words
 *   gpp_gpu_queues_start    per protocol: receive queue (queue id qid[p]), send queue, semaphore
 *   gpp_gpu_launch          the kernels and the statistics thread
 *   gpp_gpu_halt            exit flag, kernels waited for (5 s each), last counts drained;
 *                           not DOCA_SUCCESS when a kernel still runs (then nothing of the GPU
 *                           part is freed: fail closed)
 *   gpp_gpu_queues_destroy  the queues (the rollback's queue step)
 *   gpp_gpu_close           semaphores, GPU memory, streams, doca_gpu (the memory and device
 *                           steps)
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPP_GPU_HOST_H_
#define GPP_GPU_HOST_H_

#include <stdint.h>

#include <doca_dev.h>
#include <doca_error.h>

#include "gpp_gpu.h"

/* One kernel's counts over the run. */
struct gpp_gpu_total {
	uint64_t pkts, udp_queries, icmp_replies, http_replies, tcp_replies, sent, send_errors,
		batches;
};

static inline void gpp_gpu_total_add(struct gpp_gpu_total *t, const struct gpp_gpu_counts *c)
{
	t->pkts += c->pkts;
	t->udp_queries += c->udp_queries;
	t->icmp_replies += c->icmp_replies;
	t->http_replies += c->http_replies;
	t->tcp_replies += c->tcp_replies;
	t->sent += c->sent;
	t->send_errors += c->send_errors;
	t->batches += c->batches;
}

struct gpp_gpu;
doca_error_t gpp_gpu_open(const char *gpu_pcie, struct gpp_gpu **g);
/* The PCIe address of the GPU in use. */
const char *gpp_gpu_pcie(const struct gpp_gpu *g);
doca_error_t gpp_gpu_queues_start(struct gpp_gpu *g, struct doca_dev *dev,
				  const uint16_t qid[GPP_GPU_NB]);
/* other_pkts: the CPU queue's packet count, read atomically for the per-second line. */
doca_error_t gpp_gpu_launch(struct gpp_gpu *g, const struct gpp_host *host,
			    const uint64_t *other_pkts);
/* A kernel's receive or send error, a kernel fault or end (doca_error_t), 0 while none. */
uint32_t gpp_gpu_error(struct gpp_gpu *g);
doca_error_t gpp_gpu_halt(struct gpp_gpu *g);
void gpp_gpu_totals(struct gpp_gpu *g, struct gpp_gpu_total out[GPP_GPU_NB]);
void gpp_gpu_queues_destroy(struct gpp_gpu *g);
void gpp_gpu_close(struct gpp_gpu *g);

#endif /* GPP_GPU_HOST_H_ */
