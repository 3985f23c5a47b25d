/*
 * The GPU mode of softdpu's GPU packet processing application: what the host side
 * (gpp_gpu.c) and the kernels (gpp_kernels.cu) share. C and CUDA C++.
 *
 * One persistent kernel per protocol queue (UDP, TCP, ICMP), each one block on a stream of its
 * own: it receives batches from its GPU receive queue (CYCLIC, packets in GPU memory), runs the
 * protocol function of gpp_proto.h on every packet (one thread per packet), sends the replies
 * (TCP and ICMP) from GPU memory through a GPU send queue of its own (a batch's replies go to
 * the next of GPP_GPU_TX_REGIONS reply regions, written again only once the replies that last
 * used it have completed: the sends of several batches are in flight), and hands its counts to
 * the statistics thread through a semaphore ring (one item per batch while the CPU keeps up;
 * counts of a batch whose item the CPU has not freed yet are carried into the next item, never lost). At
 * the exit flag it publishes what it still holds (into the residual counts when no item is
 * free within GPP_GPU_FLUSH_NS) and ends.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPP_GPU_H_
#define GPP_GPU_H_

#include <stdint.h>

#include <doca_error.h>

#include "gpp_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu_eth_rxq;
struct doca_gpu_eth_txq;
struct doca_gpu_semaphore_gpu;

#define GPP_GPU_THREADS 256	      /* per kernel (one block); also the largest batch */
#define GPP_GPU_RX_PKTS 8192	      /* packets of a GPU receive queue's ring */
#define GPP_GPU_RX_TIMEOUT_NS 100000u /* a receive call returns after 100 us with what it has */
#define GPP_GPU_TX_DESC 4096	      /* descriptors of a GPU send queue: every reply slot */
#define GPP_GPU_TX_SLOT 2048	      /* bytes of a reply slot (replies fit GPP_MAX_FRAME) */
#define GPP_GPU_TX_REGIONS 16  /* reply regions of GPP_GPU_THREADS slots: batches in flight */
#define GPP_GPU_SEM_ITEMS 1024 /* items of a kernel's semaphore ring */
#define GPP_GPU_FLUSH_NS 200000000ull /* at exit: how long to wait for a free item (200 ms) */

/* A kernel's counts of a stretch of batches: the custom info of a semaphore item. */
struct gpp_gpu_counts {
	uint32_t pkts;	       /* packets received */
	uint32_t udp_queries;  /* DNS-like queries counted (UDP) */
	uint32_t icmp_replies; /* echo replies sent (ICMP) */
	uint32_t http_replies; /* HTTP responses sent (TCP) */
	uint32_t tcp_replies;  /* all TCP segments sent: SYN-ACKs, responses, ACKs of FINs */
	uint32_t sent;	       /* replies whose send completed */
	uint32_t send_errors;  /* replies not sent (no room) or completed with an error */
	uint32_t batches;      /* receive batches with packets */
};

/* Where a kernel's time went (thread 0's clock, globaltimer ns), written once at its end. */
struct gpp_gpu_timing {
	uint64_t loops;	  /* receive calls */
	uint64_t batches; /* of them with packets */
	uint64_t recv_ns; /* in the receive calls */
	uint64_t work_ns; /* protocol work and posting the replies (the whole block) */
	uint64_t wait_ns; /* waiting for reply regions to come free (completions) */
};

/* What a kernel gets (by value). */
enum gpp_gpu_proto {
	GPP_GPU_UDP,
	GPP_GPU_TCP,
	GPP_GPU_ICMP,
	GPP_GPU_NB
};
struct gpp_gpu_queue {
	struct doca_gpu_eth_rxq *rxq;
	struct doca_gpu_eth_txq *txq;	    /* NULL for UDP (nothing is sent) */
	struct doca_gpu_semaphore_gpu *sem; /* GPP_GPU_SEM_ITEMS items of gpp_gpu_counts */
	uint64_t tx_buf;  /* GPU address of GPP_GPU_TX_REGIONS x GPP_GPU_THREADS reply slots */
	uint32_t tx_mkey; /* its mkey, network byte order */
	struct gpp_gpu_counts *residual; /* CPU-visible: counts no item could take at exit */
	struct gpp_gpu_timing *timing;	 /* CPU-visible: written at exit */
	uint32_t *exit_flag;		 /* CPU-visible: 1 = stop */
	uint32_t *error;		 /* CPU-visible: a receive or send error (doca_error_t) */
	struct gpp_host host;
};

/* gpp_kernels.cu */
/* The CUDA device of gpu_pcie (empty: device 0, whose address is written back), made current. */
doca_error_t gpp_cuda_init(char *gpu_pcie, size_t len);
doca_error_t gpp_cuda_stream_create(void **stream);
/* DOCA_SUCCESS once the stream's work is done; TIME_OUT after timeout_s; DRIVER on a fault. */
doca_error_t gpp_cuda_stream_wait(void *stream, double timeout_s);
void gpp_cuda_stream_destroy(void *stream);
/* DOCA_SUCCESS: the stream's work is done; IN_PROGRESS: it runs; DRIVER: a kernel failed. */
doca_error_t gpp_cuda_stream_status(void *stream);
/* Load every kernel (before the first launch: see gpp_kernels.cu). */
doca_error_t gpp_kernels_load(void);
/* Launch the persistent kernel of proto on stream. */
doca_error_t gpp_kernel_launch(enum gpp_gpu_proto proto, void *stream,
			       const struct gpp_gpu_queue *q);

#ifdef __cplusplus
}
#endif

#endif /* GPP_GPU_H_ */
