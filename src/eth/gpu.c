/*
 * libdoca_eth: the GPU data path of the Ethernet queues (doca_ctx_set_datapath_on_gpu).
 *
 * Receive (CYCLIC queues): the queue's ring and its GPU handle live in pinned host memory
 * mapped into the GPU (doca_gpu_mem_alloc CPU_GPU), the frames in the application's packet
 * buffer (doca_eth_rxq_set_pkt_buf). The engine thread reserves a ring position per frame and
 *   - when the packet buffer is host memory mapped into the GPU (CPU_GPU, or GPU_CPU without
 *     GDRCopy), writes the frame into its slot and publishes the completion at once;
 *   - when it is device memory, stages the frame in the ring's own slot (pinned), copies the
 *     burst's slots into the packet buffer with the copy engine (cuMemcpyHtoDAsync on the
 *     queue's non-blocking stream, one copy per contiguous run of slots), waits for the copy and
 *     only then publishes the completions, in order.
 * Send: the GPU posts descriptors into a TX ring in mapped host memory (softdpu/sdp_gpu_eth.h);
 * the engine thread polls it, reads each frame in place (mapped host memory) or copies it out of
 * device memory (one copy per run of frames in neighbouring slots of one allocation), applies the checksum offloads, honours wait-on-time, hands it to the backend and
 * completes it. Completions go to the GPU (doca_eth_txq_gpu_set_completion_on_gpu), to the
 * application's notify/error event callbacks through doca_pe_progress, or, when neither wants
 * them, are consumed by the engine itself.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doca_gpunetio.h"
#include "doca_gpunetio_eth_def.h"
#include "sdp_buf.h"
#include "sdp_eth_int.h"
#include "sdp_gpu.h"
#include "sdp_log.h"
#include "softdpu/sdp_gpu_eth.h"
#include "softdpu/sdp_pkt.h"

SDP_LOG_COMPONENT("eth_gpu");

#define GPU_PAGE 65536u
/*
 * Descriptors per GPU send queue per engine round: the frames in device memory among them come
 * out in as few copies as their addresses allow, and each copy costs 5 to 7 us of driver time
 * plus its wait (SOFTDPU_ETH_PROFILE, H200), so a round takes many.
 */
#define TX_POLL_MAX 512u
#define TX_STAGE_BYTES (1024u * 1024u) /* copies out of device memory, per round */
#define TX_RUN_MAX 64u	   /* frames per tx_burst (and checksummed copies of in-place frames) */
#define TX_SPAN_GAP 16384u /* bytes between frames one copy may carry along */

#define RX_INFLIGHT 16u /* copy batches in flight per queue */
#define RX_PEND 4096u	/* frames staged per queue at most (and half the ring's slots) */
/* while full bursts come, a copy batch gathers up to this many frames or bytes */
#define RX_COPY_FRAMES 1024u
#define RX_COPY_BYTES (1024u * 1024u)
#define RX_STALL_NS 100000000ull /* a batch not done after this long: ask its stream why */
#define RX_STAGE_NS 32000ull	 /* staged frames wait for company this long while no copy runs */

/* What the copy path's profile times (SOFTDPU_ETH_PROFILE). */
enum {
	RX_PROF_BIND,
	RX_PROF_COPY,
	RX_PROF_RECORD,
	RX_PROF_QUERY,
	RX_PROF_WAIT,
	RX_PROF_N
};
static const char *const rx_prof_name[RX_PROF_N] = {"ctx_bind", "memcpy_htod", "done_mark",
						    "done_query", "wait"};

/* Run call (an expression) and, while profiling, time it as kind k of g. */
#define RX_PROF(g, k, call)                                                                        \
	({                                                                                         \
		uint64_t t0_ = sdp_eth_prof_now((g)->prof_on);                                     \
		__typeof__(call) r_ = (call);                                                      \
		if (t0_ != 0) {                                                                    \
			(g)->prof.n[k]++;                                                          \
			(g)->prof.ns[k] += sdp_eth_prof_now(1) - t0_;                              \
		}                                                                                  \
		r_;                                                                                \
	})

struct sdp_eth_gpu_rxq {
	struct doca_gpu *gpu;
	const struct sdp_cuda_api *cu;
	void *ring_gpu;		    /* the allocation (device address) */
	struct doca_gpu_eth_rxq *h; /* the handle (host view) */
	void *h_gpu;		    /* the handle (device address) */
	uint8_t *pkt_gpu;	    /* packet slot 0 (device address) */
	uint8_t *pkt_cpu;	    /* its host view when mapped host memory, else NULL */
	uint32_t stride;
	sdp_cu_stream_t stream; /* copies into device memory */
	/*
	 * Staged frames (reserved, copy issued or not, not yet published), a FIFO of RX_PEND:
	 * [pub, cp) copies in flight, [cp, end) staged, no copy yet. A batch of copies ends
	 * with an event; its frames are published, in order, once the event has completed.
	 */
	struct {
		uint32_t pos, len, wire_len, flags;
		uint64_t ts;
	} pend[RX_PEND];
	uint32_t pub, cp, end; /* free-running indices into pend */
	uint64_t stage_ns;     /* when the oldest frame not yet copied was staged */
	uint32_t max_pend;     /* fewer than the ring's slots */
	/*
	 * Copy batches in flight, [ev_head, ev_tail) (free-running). Batch n is done once the
	 * stream has written n + 1 into *done (cuStreamWriteValue32, stream-ordered after its
	 * copies and fenced: reading it costs no driver call), or, where the driver has no stream
	 * memory operations, once its event ev[n % RX_INFLIGHT] has completed.
	 */
	uint32_t *done; /* host view of the done word; NULL: events */
	void *done_gpu; /* its allocation (device address) */
	sdp_cu_event_t ev[RX_INFLIGHT];
	uint32_t ev_end[RX_INFLIGHT]; /* pend index the batch's copies end at */
	uint64_t ev_ns[RX_INFLIGHT];  /* when it was issued (or last asked about), done word */
	uint32_t ev_head, ev_tail;    /* free-running */
	unsigned int copy_errors;
	/* SOFTDPU_ETH_PROFILE: driver calls of the copy path (engine thread), logged at stop */
	int prof_on;
	struct {
		uint64_t n[RX_PROF_N], ns[RX_PROF_N];
		uint64_t frames, bytes;
	} prof;
};

struct sdp_eth_gpu_txq {
	sdp_list_link_t link; /* in dport->gtxqs */
	struct sdp_eth_gpu_txq_cfg cfg;
	struct sdp_eth_dport *dport;
	const struct sdp_cuda_api *cu;
	struct sdp_ring_tx_hdr *ring; /* host view */
	void *ring_gpu;
	struct doca_gpu_eth_txq *h; /* host view */
	void *h_gpu;
	uint8_t *stage;	 /* TX_STAGE_BYTES: frames copied out of device memory */
	void *stage_gpu; /* (the pinned allocation of stage) */
	uint8_t *csum;	 /* TX_RUN_MAX frames: checksummed copies of in-place frames */
	struct sdp_gpu_mem_range rcache; /* the allocation the last frame was in */
	int rcache_ok;
	sdp_cu_stream_t stream; /* non-blocking: never waits for the application's kernels */
	/* counters (engine thread; relaxed atomics for readers) */
	uint64_t packets, bytes, errors;
	unsigned int lookup_errors;
};

/* ---- helpers -------------------------------------------------------------------------------- */

static void cnt_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED);
}

/* Mapped host memory of a doca_gpu: both views. */
static doca_error_t alloc_mapped(struct doca_gpu *gpu, size_t size, void **gpu_p, void **cpu_p)
{
	doca_error_t status =
		doca_gpu_mem_alloc(gpu, size, 4096, DOCA_GPU_MEM_TYPE_CPU_GPU, gpu_p, cpu_p);

	if (status == DOCA_SUCCESS)
		memset(*cpu_p, 0, size);
	return status;
}

/* ---- receive -------------------------------------------------------------------------------- */

/*
 * The done word of a queue's copy batches (context current): mapped host memory the stream
 * writes with cuStreamWriteValue32, tried once here; without it (no such entry point, or the
 * device refuses stream memory operations) the batches end with events.
 */
static void rx_done_word_init(struct sdp_eth_gpu_rxq *g)
{
	void *cpu = NULL;

	if (g->cu->stream_write_value32 == NULL ||
	    alloc_mapped(g->gpu, 4096, &g->done_gpu, &cpu) != DOCA_SUCCESS)
		return;
	if (g->cu->stream_write_value32(g->stream, (sdp_cu_deviceptr_t)(uintptr_t)g->done_gpu, 0u,
					0) == SDP_CUDA_SUCCESS &&
	    g->cu->stream_synchronize(g->stream) == SDP_CUDA_SUCCESS) {
		g->done = cpu;
		return;
	}
	sdp_info("GPU receive copies complete with events: no stream memory operations");
	(void)doca_gpu_mem_free(g->gpu, g->done_gpu);
	g->done_gpu = NULL;
}

static void rx_retire(struct doca_eth_rxq *rxq, int wait);

doca_error_t sdp_eth_gpu_rxq_start(struct doca_eth_rxq *rxq)
{
	struct doca_gpu *gpu = rxq->ctx.gpu;
	struct sdp_eth_gpu_rxq *g;
	struct sdp_gpu_mem_range range;
	uint32_t stride = (rxq->max_packet_size + SDP_RING_ALIGN - 1) & ~(SDP_RING_ALIGN - 1);
	uint32_t nb = 1;
	uint64_t ring_size = 0;
	void *addr = NULL, *ring_cpu = NULL, *h_cpu = NULL;
	size_t len = 0, hsize = (sizeof(struct doca_gpu_eth_rxq) + 4095) & ~(size_t)4095;
	doca_error_t status;

	if (rxq->type != DOCA_ETH_RXQ_TYPE_CYCLIC) {
		sdp_error("eth_rxq %p: the GPU data path takes CYCLIC queues only", (void *)rxq);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (rxq->mmap == NULL) {
		sdp_error("eth_rxq %p: a GPU queue needs doca_eth_rxq_set_pkt_buf() before start",
			  (void *)rxq);
		return DOCA_ERROR_BAD_STATE;
	}
	if (sdp_mmap_range(rxq->mmap, &addr, &len) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	addr = (uint8_t *)addr + rxq->mmap_offset;
	/* as many slots as the buffer holds, at most max_burst_size, a power of two */
	while ((uint64_t)nb * 2 * stride <= rxq->mmap_len && nb * 2 <= rxq->max_burst_size &&
	       nb * 2 <= SDP_RING_MAX_ENTRIES)
		nb *= 2;
	if ((uint64_t)nb * stride > rxq->mmap_len || nb < SDP_ETH_RX_BURST) {
		sdp_error("eth_rxq %p: the packet buffer (%u bytes) holds fewer than %u packets of "
			  "%u bytes",
			  (void *)rxq, rxq->mmap_len, SDP_ETH_RX_BURST, stride);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (rxq->ring_slots_req != 0 && rxq->ring_slots_req < nb) {
		nb = rxq->ring_slots_req < SDP_ETH_RX_BURST ? SDP_ETH_RX_BURST :
							      rxq->ring_slots_req;
	}
	if (stride > SDP_RING_MAX_SLOT_SIZE ||
	    sdp_ring_rx_mem_size(nb, stride, &ring_size) != DOCA_SUCCESS) {
		sdp_error("eth_rxq %p: no ring of %u slots of %u bytes", (void *)rxq, nb, stride);
		return DOCA_ERROR_INVALID_VALUE;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL) {
		sdp_error("eth_rxq %p: out of memory", (void *)rxq);
		return DOCA_ERROR_NO_MEMORY;
	}
	g->gpu = gpu;
	g->cu = sdp_gpu_get_cuda_api(gpu);
	g->stride = stride;
	g->pkt_gpu = addr;
	g->prof_on = sdp_eth_profile_enabled();
	if (sdp_gpu_mem_lookup(gpu, addr, (size_t)nb * stride, &range) == DOCA_SUCCESS &&
	    !range.on_device)
		g->pkt_cpu = range.cpu_ptr; /* written in place */
	status = alloc_mapped(gpu, ring_size, &g->ring_gpu, &ring_cpu);
	if (status != DOCA_SUCCESS) {
		sdp_error("eth_rxq %p: no mapped memory for a ring of %llu bytes: %s", (void *)rxq,
			  (unsigned long long)ring_size, doca_error_get_descr(status));
		goto err_free;
	}
	status = alloc_mapped(gpu, hsize, &g->h_gpu, &h_cpu);
	if (status != DOCA_SUCCESS) {
		sdp_error("eth_rxq %p: no mapped memory for its GPU handle: %s", (void *)rxq,
			  doca_error_get_descr(status));
		goto err_ring;
	}
	g->h = h_cpu;
	if (sdp_ring_rx_init(ring_cpu, ring_size, nb, stride,
			     rxq->overflow == SDP_ETH_OVERFLOW_CYCLIC ? SDP_RING_MODE_CYCLIC :
									SDP_RING_MODE_BACKPRESSURE,
			     0, &rxq->ring) != DOCA_SUCCESS) {
		sdp_error("eth_rxq %p: laying out the ring failed", (void *)rxq);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_handle;
	}
	g->max_pend = nb / 2 < RX_PEND ? nb / 2 : RX_PEND;
	if (g->pkt_cpu == NULL) {
		status = sdp_gpu_ctx_push(gpu);
		if (status == DOCA_SUCCESS) {
			if (g->cu->stream_create(&g->stream, SDP_CU_STREAM_NON_BLOCKING) != 0)
				status = DOCA_ERROR_DRIVER;
			for (uint32_t i = 0; status == DOCA_SUCCESS && i < RX_INFLIGHT; i++)
				if (g->cu->event_create(&g->ev[i], SDP_CU_EVENT_DISABLE_TIMING) !=
				    0)
					status = DOCA_ERROR_DRIVER;
			if (status == DOCA_SUCCESS)
				rx_done_word_init(g);
			sdp_gpu_ctx_pop(gpu);
		}
		if (status != DOCA_SUCCESS) {
			sdp_error("eth_rxq %p: creating a copy stream failed", (void *)rxq);
			goto err_handle;
		}
	}
	*g->h = (struct doca_gpu_eth_rxq){
		.magic = SDP_GPU_ETH_RXQ_MAGIC,
		.flags = rxq->overflow == SDP_ETH_OVERFLOW_CYCLIC ? 0 :
								    SDP_GPU_ETH_RXQ_F_BACKPRESSURE,
		.ring = (uint64_t)(uintptr_t)g->ring_gpu,
		.pkt_addr = (uint64_t)(uintptr_t)g->pkt_gpu,
		.pkt_num = nb,
		.max_pkt_sz = stride,
		.pkt_mkey = 0x5d000000u | (uint32_t)((uintptr_t)rxq >> 6 & 0xffffff),
	};
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	rxq->gpu_rx = g;
	sdp_info("eth_rxq %p: GPU ring of %u slots of %u bytes, packets %s", (void *)rxq, nb,
		 stride,
		 g->pkt_cpu ? "written in place (mapped host memory)" :
			      "copied into device memory by the copy engine");
	return DOCA_SUCCESS;

err_handle:
	rxq->ring = NULL;
	(void)doca_gpu_mem_free(gpu, g->h_gpu);
err_ring:
	(void)doca_gpu_mem_free(gpu, g->ring_gpu);
err_free:
	free(g);
	return status;
}

void sdp_eth_gpu_rxq_stop(struct doca_eth_rxq *rxq)
{
	struct sdp_eth_gpu_rxq *g = rxq->gpu_rx;

	if (g == NULL)
		return;
	if (g->prof_on && g->prof.frames != 0) {
		char line[512];
		int n = 0;

		for (int k = 0; k < RX_PROF_N && n >= 0 && n < (int)sizeof(line); k++)
			n += snprintf(line + n, sizeof(line) - (size_t)n, "%s %s %llu x %.0f ns",
				      k == 0 ? "" : ",", rx_prof_name[k],
				      (unsigned long long)g->prof.n[k],
				      g->prof.n[k] ? (double)g->prof.ns[k] / (double)g->prof.n[k] :
						     0.0);
		sdp_info("eth_rxq %p: %llu frames copied (%.1f per copy, %.1f per batch), driver "
			 "calls:%s",
			 (void *)rxq, (unsigned long long)g->prof.frames,
			 (double)g->prof.frames /
				 (double)(g->prof.n[RX_PROF_COPY] ? g->prof.n[RX_PROF_COPY] : 1),
			 (double)g->prof.frames / (double)(g->prof.n[RX_PROF_RECORD] ?
								   g->prof.n[RX_PROF_RECORD] :
								   1),
			 line);
	}
	if (g->stream != NULL && sdp_gpu_ctx_push(g->gpu) == DOCA_SUCCESS) {
		if (rxq->ring != NULL)
			rx_retire(rxq, 1);
		(void)g->cu->stream_synchronize(g->stream);
		for (uint32_t i = 0; i < RX_INFLIGHT; i++)
			if (g->ev[i] != NULL)
				(void)g->cu->event_destroy(g->ev[i]);
		(void)g->cu->stream_destroy(g->stream);
		sdp_gpu_ctx_pop(g->gpu);
	}
	g->h->magic = 0; /* a kernel still holding the handle gets INVALID_VALUE */
	rxq->gpu_rx = NULL;
	/* a kernel may still read them: no cuMemFreeHost (it would wait for it) until
	 * doca_gpu_destroy */
	(void)sdp_gpu_mem_free_deferred(g->gpu, g->h_gpu);
	(void)sdp_gpu_mem_free_deferred(g->gpu, g->ring_gpu);
	if (g->done_gpu != NULL)
		(void)sdp_gpu_mem_free_deferred(g->gpu, g->done_gpu);
	free(g);
}

struct doca_gpu_eth_rxq *sdp_eth_gpu_rxq_handle(const struct doca_eth_rxq *rxq)
{
	return rxq->gpu_rx != NULL ? rxq->gpu_rx->h_gpu : NULL;
}

/* Publish the staged frames [g->pub, upto) in order. */
static void rx_publish(struct doca_eth_rxq *rxq, uint32_t upto, int failed)
{
	struct sdp_eth_gpu_rxq *g = rxq->gpu_rx;

	for (; g->pub != upto; g->pub++) {
		const __typeof__(g->pend[0]) *p = &g->pend[g->pub % RX_PEND];

		sdp_ring_rx_publish(rxq->ring, p->pos, failed ? 0 : p->len, p->wire_len,
				    p->flags | (failed ? SDP_RING_CQE_F_TRUNCATED : 0), p->ts);
	}
}

/*
 * Whether copy batch n (ev_head) has landed: SUCCESS, NOT_READY, or the stream's error. With
 * wait, waits for it. The done word is a plain load; a batch that seems stuck for RX_STALL_NS
 * is looked at through its stream (a failed copy never writes the word).
 */
/* Whether the stream has written the done word of batch n (done-word mode). */
static int rx_done_reached(const struct sdp_eth_gpu_rxq *g, uint32_t n)
{
	return (int32_t)(__atomic_load_n(g->done, __ATOMIC_ACQUIRE) - (n + 1)) >= 0;
}

static sdp_cu_result_t rx_batch_state(struct sdp_eth_gpu_rxq *g, int wait)
{
	uint32_t n = g->ev_head, k = n % RX_INFLIGHT;
	sdp_cu_result_t res;
	uint64_t now;

	if (g->done == NULL) {
		res = RX_PROF(g, RX_PROF_QUERY, g->cu->event_query(g->ev[k]));
		if (res == SDP_CUDA_ERROR_NOT_READY && wait)
			res = RX_PROF(g, RX_PROF_WAIT, g->cu->stream_synchronize(g->stream));
		return res;
	}
	if (rx_done_reached(g, n))
		return SDP_CUDA_SUCCESS;
	if (wait) {
		res = RX_PROF(g, RX_PROF_WAIT, g->cu->stream_synchronize(g->stream));
	} else {
		now = sdp_eth_now_ns(CLOCK_MONOTONIC);
		if (now - g->ev_ns[k] < RX_STALL_NS)
			return SDP_CUDA_ERROR_NOT_READY;
		g->ev_ns[k] = now;
		res = RX_PROF(g, RX_PROF_QUERY, g->cu->stream_query(g->stream));
		if (res == SDP_CUDA_ERROR_NOT_READY)
			return res;
	}
	/* the stream is idle: its store has landed unless it failed */
	if (res == SDP_CUDA_SUCCESS && !rx_done_reached(g, n))
		res = SDP_CUDA_ERROR_INVALID_VALUE;
	return res;
}

/* Publish every batch whose copy has landed; with wait, wait for the oldest one first. */
static void rx_retire(struct doca_eth_rxq *rxq, int wait)
{
	struct sdp_eth_gpu_rxq *g = rxq->gpu_rx;

	while (g->ev_head != g->ev_tail) {
		uint32_t k = g->ev_head % RX_INFLIGHT;
		sdp_cu_result_t res = rx_batch_state(g, wait);

		if (res == SDP_CUDA_ERROR_NOT_READY)
			return;
		if (res != SDP_CUDA_SUCCESS && g->copy_errors++ == 0)
			sdp_error("eth_rxq %p: copying received packets into device memory failed",
				  (void *)rxq);
		/* completions are published only after the copy landed */
		rx_publish(rxq, g->ev_end[k], res != SDP_CUDA_SUCCESS);
		g->ev_head++;
		wait = 0;
	}
}

void sdp_eth_gpu_rx_push(struct doca_eth_rxq *rxq, const struct sdp_pkt *pkt)
{
	struct sdp_eth_gpu_rxq *g = rxq->gpu_rx;
	uint32_t pos, len = pkt->len, flags = pkt->flags & SDP_ETH_PKT_CQE_FLAGS;
	void *slot;

	if (g->pkt_cpu == NULL && g->end - g->pub >= g->max_pend) {
		/* everything staged is in flight or about to be: make room */
		sdp_eth_gpu_rx_flush(rxq, 0);
		/* the engine thread keeps the GPU's context bound (sdp_gpu_ctx_bind) */
		if (g->end - g->pub >= g->max_pend &&
		    RX_PROF(g, RX_PROF_BIND, sdp_gpu_ctx_bind(g->gpu)) == DOCA_SUCCESS)
			rx_retire(rxq, 1);
	}
	slot = sdp_ring_rx_reserve(rxq->ring, &pos);
	if (slot == NULL)
		return; /* dropped and counted by the ring */
	if (len > g->stride) {
		len = g->stride;
		flags |= SDP_RING_CQE_F_TRUNCATED;
	}
	if (g->pkt_cpu != NULL) {
		uint8_t *dst = g->pkt_cpu + (size_t)(pos & rxq->ring->slot_mask) * g->stride;

		if (dst != pkt->data) /* else the backend wrote it in place (engine_rx_direct) */
			memcpy(dst, pkt->data, len);
		sdp_ring_rx_publish(rxq->ring, pos, len, pkt->wire_len, flags, pkt->ts_ns);
		return;
	}
	if (slot != pkt->data)
		memcpy(slot, pkt->data, len);
	if (g->cp == g->end)
		g->stage_ns = sdp_eth_now_ns(CLOCK_MONOTONIC);
	g->pend[g->end % RX_PEND].pos = pos;
	g->pend[g->end % RX_PEND].len = len;
	g->pend[g->end % RX_PEND].wire_len = pkt->wire_len;
	g->pend[g->end % RX_PEND].flags = flags;
	g->pend[g->end % RX_PEND].ts = pkt->ts_ns;
	g->end++;
}

void sdp_eth_gpu_rx_flush(struct doca_eth_rxq *rxq, int more)
{
	struct sdp_eth_gpu_rxq *g = rxq->gpu_rx;
	struct sdp_ring_hdr *r = rxq->ring;
	uint32_t staged;
	int failed = 0;

	if (g == NULL || (g->cp == g->end && g->ev_head == g->ev_tail))
		return;
	/*
	 * The copy engine serves all queues' streams one copy at a time, and each costs 4 to 7 us
	 * however small (SOFTDPU_ETH_PROFILE, H100/H200): about 250 000 copies a second for the
	 * whole GPU. So frames are gathered into large copies:
	 *   - while the backend hands over full bursts, up to RX_COPY_FRAMES frames or
	 *     RX_COPY_BYTES (or until staged and in-flight frames reach max_pend), and while no
	 *     copy runs, for RX_STAGE_NS at most (the latency at moderate rates; when the copy
	 *     engine is busy, copies stay in flight longer and batches grow by themselves);
	 *   - when it has less to give (a short burst, a full ring, idle), the staged frames go
	 *     at once unless a copy is still in flight: the kernel has that one to work on, and
	 *     they go when it lands (the engine looks every 20 us while copies are in flight).
	 * Landed batches are published meanwhile (a load of the done word).
	 */
	staged = g->end - g->cp;
	if (staged < RX_COPY_FRAMES && (uint64_t)staged * g->stride < RX_COPY_BYTES &&
	    g->end - g->pub < g->max_pend && (more || g->ev_head != g->ev_tail)) {
		/*
		 * Every call while a batch is in flight: with the done word a load and a clock read,
		 * and the only place a batch whose copy failed (its word never comes) is noticed
		 * after RX_STALL_NS even when the source has gone quiet.
		 */
		if (g->ev_head != g->ev_tail &&
		    RX_PROF(g, RX_PROF_BIND, sdp_gpu_ctx_bind(g->gpu)) == DOCA_SUCCESS)
			rx_retire(rxq, 0);
		if (g->ev_head != g->ev_tail || staged == 0)
			return;
		if (more && sdp_eth_now_ns(CLOCK_MONOTONIC) - g->stage_ns < RX_STAGE_NS)
			return;
	}
	/* the engine thread keeps the GPU's context bound: no push/pop per copy */
	if (RX_PROF(g, RX_PROF_BIND, sdp_gpu_ctx_bind(g->gpu)) != DOCA_SUCCESS) {
		if (g->copy_errors++ == 0)
			sdp_error("eth_rxq %p: no CUDA context for the copy engine", (void *)rxq);
		rx_publish(rxq, g->end, 1);
		g->cp = g->end;
		g->ev_head = g->ev_tail;
		return;
	}
	if (g->cp != g->end) {
		if (g->ev_tail - g->ev_head == RX_INFLIGHT)
			rx_retire(rxq, 1); /* a batch slot for this one */
		for (uint32_t a = g->cp; a != g->end;) {
			uint32_t slot = g->pend[a % RX_PEND].pos & r->slot_mask, b = a + 1;
			size_t bytes;

			/* one copy per run of consecutive slots (a wrap starts a new run) */
			while (b != g->end &&
			       (g->pend[b % RX_PEND].pos & r->slot_mask) == slot + (b - a))
				b++;
			bytes = (size_t)(b - a - 1) * g->stride + g->pend[(b - 1) % RX_PEND].len;
			if (RX_PROF(g, RX_PROF_COPY,
				    g->cu->memcpy_htod_async(
					    (sdp_cu_deviceptr_t)(uintptr_t)(g->pkt_gpu +
									    (size_t)slot *
										    g->stride),
					    sdp_ring_rx_slot(r, g->pend[a % RX_PEND].pos), bytes,
					    g->stream)) != 0)
				failed = 1;
			g->prof.frames += b - a;
			g->prof.bytes += bytes;
			a = b;
		}
		if (!failed && g->done != NULL) {
			g->ev_ns[g->ev_tail % RX_INFLIGHT] = sdp_eth_now_ns(CLOCK_MONOTONIC);
			if (RX_PROF(g, RX_PROF_RECORD,
				    g->cu->stream_write_value32(
					    g->stream, (sdp_cu_deviceptr_t)(uintptr_t)g->done_gpu,
					    g->ev_tail + 1, 0)) != 0)
				failed = 1;
		} else if (!failed && RX_PROF(g, RX_PROF_RECORD,
					      g->cu->event_record(g->ev[g->ev_tail % RX_INFLIGHT],
								  g->stream)) != 0) {
			failed = 1;
		}
		if (failed) {
			/* publish what was before, then these as failed */
			rx_retire(rxq, 1);
			if (g->copy_errors++ == 0)
				sdp_error("eth_rxq %p: copying received packets into device memory "
					  "failed",
					  (void *)rxq);
			rx_publish(rxq, g->end, 1);
		} else {
			g->ev_end[g->ev_tail % RX_INFLIGHT] = g->end;
			g->ev_tail++;
		}
		g->cp = g->end;
	}
	rx_retire(rxq, 0);
}

void *sdp_eth_gpu_rx_dest(const struct doca_eth_rxq *rxq, uint32_t pos, uint32_t *cap)
{
	const struct sdp_eth_gpu_rxq *g = rxq->gpu_rx;

	*cap = g->stride; /* the ring's slots are stride bytes too (sdp_eth_gpu_rxq_start) */
	if (g->pkt_cpu != NULL)
		return g->pkt_cpu + (size_t)(pos & rxq->ring->slot_mask) * g->stride;
	return sdp_ring_rx_slot(rxq->ring, pos);
}

int sdp_eth_gpu_rx_inflight(const struct doca_eth_rxq *rxq)
{
	const struct sdp_eth_gpu_rxq *g = rxq->gpu_rx;

	return g != NULL && (g->ev_head != g->ev_tail || g->cp != g->end);
}

/* ---- send ----------------------------------------------------------------------------------- */

doca_error_t sdp_eth_gpu_txq_start(const struct sdp_eth_gpu_txq_cfg *cfg,
				   struct sdp_eth_dport *dport, struct sdp_eth_gpu_txq **gtxq_p)
{
	struct sdp_eth_gpu_txq *t;
	uint32_t nb = 64;
	uint64_t ring_size = 0;
	void *ring_cpu = NULL, *h_cpu = NULL;
	size_t hsize = (sizeof(struct doca_gpu_eth_txq) + 4095) & ~(size_t)4095;
	doca_error_t status;

	while (nb < cfg->max_burst_size && nb < SDP_RING_MAX_ENTRIES)
		nb *= 2;
	if (sdp_ring_tx_mem_size(nb, &ring_size) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		sdp_error("eth_txq %p: out of memory", cfg->txq);
		return DOCA_ERROR_NO_MEMORY;
	}
	t->cfg = *cfg;
	t->dport = dport;
	t->cu = sdp_gpu_get_cuda_api(cfg->gpu);
	t->csum = malloc((size_t)TX_RUN_MAX * SDP_ETH_MAX_FRAME);
	if (t->csum == NULL) {
		sdp_error("eth_txq %p: out of memory", cfg->txq);
		free(t);
		return DOCA_ERROR_NO_MEMORY;
	}
	status = alloc_mapped(cfg->gpu, TX_STAGE_BYTES, &t->stage_gpu, (void **)&t->stage);
	if (status == DOCA_SUCCESS) {
		status = sdp_gpu_ctx_push(cfg->gpu);
		if (status == DOCA_SUCCESS) {
			if (t->cu->stream_create(&t->stream, SDP_CU_STREAM_NON_BLOCKING) != 0)
				status = DOCA_ERROR_DRIVER;
			sdp_gpu_ctx_pop(cfg->gpu);
		}
		if (status != DOCA_SUCCESS)
			(void)doca_gpu_mem_free(cfg->gpu, t->stage_gpu);
	}
	if (status != DOCA_SUCCESS) {
		sdp_error("eth_txq %p: no staging memory or copy stream: %s", cfg->txq,
			  doca_error_get_descr(status));
		free(t->csum);
		free(t);
		return status;
	}
	status = alloc_mapped(cfg->gpu, ring_size, &t->ring_gpu, &ring_cpu);
	if (status == DOCA_SUCCESS) {
		status = alloc_mapped(cfg->gpu, hsize, &t->h_gpu, &h_cpu);
		if (status != DOCA_SUCCESS)
			(void)doca_gpu_mem_free(cfg->gpu, t->ring_gpu);
	}
	if (status != DOCA_SUCCESS) {
		sdp_error("eth_txq %p: no mapped memory for its ring and GPU handle: %s", cfg->txq,
			  doca_error_get_descr(status));
		goto err_stage;
	}
	if (sdp_ring_tx_init(ring_cpu, ring_size, nb, 0, &t->ring) != DOCA_SUCCESS) {
		sdp_error("eth_txq %p: laying out the ring failed", cfg->txq);
		(void)doca_gpu_mem_free(cfg->gpu, t->h_gpu);
		(void)doca_gpu_mem_free(cfg->gpu, t->ring_gpu);
		status = DOCA_ERROR_INVALID_VALUE;
		goto err_stage;
	}
	t->h = h_cpu;
	*t->h = (struct doca_gpu_eth_txq){
		.magic = SDP_GPU_ETH_TXQ_MAGIC,
		.flags = (cfg->l3_csum ? SDP_GPU_ETH_TXQ_F_L3_CSUM : 0) |
			 (cfg->l4_csum ? SDP_GPU_ETH_TXQ_F_L4_CSUM : 0) |
			 (cfg->wait_on_time ? SDP_GPU_ETH_TXQ_F_WAIT_ON_TIME : 0),
		.ring = (uint64_t)(uintptr_t)t->ring_gpu,
		.nb_desc = nb,
		.desc_mask = nb - 1,
		.nic_handler = cfg->nic_handler,
	};
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(&dport->lock);
	sdp_list_add_tail(&dport->gtxqs, &t->link);
	pthread_mutex_unlock(&dport->lock);
	sdp_eth_dport_kick(dport);
	*gtxq_p = t;
	return DOCA_SUCCESS;

err_stage:
	if (sdp_gpu_ctx_push(cfg->gpu) == DOCA_SUCCESS) {
		(void)t->cu->stream_destroy(t->stream);
		sdp_gpu_ctx_pop(cfg->gpu);
	}
	(void)doca_gpu_mem_free(cfg->gpu, t->stage_gpu);
	free(t->csum);
	free(t);
	return status;
}

void sdp_eth_gpu_txq_stop(struct sdp_eth_gpu_txq *t)
{
	struct doca_gpu *gpu = t->cfg.gpu;

	pthread_mutex_lock(&t->dport->lock);
	sdp_list_del(&t->link);
	pthread_mutex_unlock(&t->dport->lock);
	t->h->magic = 0;
	if (sdp_gpu_ctx_push(gpu) == DOCA_SUCCESS) {
		(void)t->cu->stream_synchronize(t->stream);
		(void)t->cu->stream_destroy(t->stream);
		sdp_gpu_ctx_pop(gpu);
	}
	/* a kernel may still post into them: released at doca_gpu_destroy, never waited for */
	(void)sdp_gpu_mem_free_deferred(gpu, t->h_gpu);
	(void)sdp_gpu_mem_free_deferred(gpu, t->ring_gpu);
	(void)sdp_gpu_mem_free_deferred(gpu, t->stage_gpu);
	free(t->csum);
	free(t);
}

struct doca_gpu_eth_txq *sdp_eth_gpu_txq_handle(const struct sdp_eth_gpu_txq *t)
{
	return t->h_gpu;
}

void sdp_eth_gpu_txq_counters(const struct sdp_eth_gpu_txq *t, struct sdp_eth_txq_counters *c)
{
	c->packets += __atomic_load_n(&t->packets, __ATOMIC_RELAXED);
	c->bytes += __atomic_load_n(&t->bytes, __ATOMIC_RELAXED);
	c->errors += __atomic_load_n(&t->errors, __ATOMIC_RELAXED);
}

/* Drain completions on the CPU: to the event callbacks, or just away. */
static int drain_cmpl(struct sdp_eth_gpu_txq *t)
{
	struct sdp_ring_txc c[32];
	uint32_t n;
	int did = 0;

	while ((n = sdp_ring_tx_poll_cmpl(t->ring, c, 32)) > 0) {
		did = 1;
		for (uint32_t i = 0; i < n; i++) {
			if (c[i].status != DOCA_SUCCESS) {
				if (t->cfg.error_cb != NULL)
					t->cfg.error_cb(t->cfg.txq, (uint32_t)c[i].user);
			} else if (t->cfg.notify_cb != NULL) {
				t->cfg.notify_cb(t->cfg.txq, (uint32_t)c[i].user, c[i].ts_ns);
			}
		}
	}
	return did;
}

int sdp_eth_gpu_txq_progress(struct sdp_eth_gpu_txq *t)
{
	if (t->cfg.completion_on_gpu || (t->cfg.notify_cb == NULL && t->cfg.error_cb == NULL))
		return 0;
	return drain_cmpl(t);
}

/*
 * Where the frame of d lives: 1 in mapped host memory (*cpu_p is its CPU address), 0 in device
 * memory, which may be copied in one piece with the frames after it up to *hi_p (the end of
 * the doca_gpu allocation holding it; just the frame for an address of the context that is not a
 * doca_gpu allocation). The allocation last found is cached, valid while no allocation of the
 * GPU has been freed since (sdp_gpu_mem_gen): no lock on the per-frame path.
 */
static int frame_where(struct sdp_eth_gpu_txq *t, const struct sdp_ring_txd *d,
		       const uint8_t **cpu_p, uint64_t *hi_p)
{
	struct sdp_gpu_mem_range *rc = &t->rcache;
	uint64_t base = (uint64_t)(uintptr_t)rc->alloc_gpu;

	/* (written so that no sum can wrap: the addresses come from a kernel) */
	if (!t->rcache_ok || d->addr < base || d->addr - base > rc->alloc_size ||
	    d->len > rc->alloc_size - (d->addr - base) || rc->gen != sdp_gpu_mem_gen(t->cfg.gpu)) {
		if (sdp_gpu_mem_lookup(t->cfg.gpu, (void *)(uintptr_t)d->addr, d->len, rc) !=
		    DOCA_SUCCESS) {
			t->rcache_ok = 0;
			*hi_p = d->addr + d->len;
			return 0;
		}
		t->rcache_ok = 1;
		base = (uint64_t)(uintptr_t)rc->alloc_gpu;
	}
	if (!rc->on_device && rc->alloc_cpu != NULL) {
		*cpu_p = (const uint8_t *)rc->alloc_cpu + (d->addr - base);
		return 1;
	}
	*hi_p = base + rc->alloc_size;
	return 0;
}

/* One copy out of device memory: the bytes [src, end) to stage + dst. */
struct tx_span {
	uint64_t src, end, lim; /* lim: the copy may grow up to here (same allocation) */
	uint32_t dst;
	int open;
};

/*
 * Issue the span's copy on the queue's stream; on failure the frames staged in it get DRIVER /
 * INVALID_VALUE and no frame pointer.
 */
static int tx_span_issue(struct sdp_eth_gpu_txq *t, struct tx_span *s, const uint8_t **frame,
			 doca_error_t *status, uint32_t nframes)
{
	const uint8_t *lo = t->stage + s->dst, *hi = lo + (s->end - s->src);
	doca_error_t err = DOCA_SUCCESS;

	s->open = 0;
	/* the engine thread keeps the GPU's context bound (a thread-local check once bound) */
	if (sdp_gpu_ctx_bind(t->cfg.gpu) != DOCA_SUCCESS)
		err = DOCA_ERROR_DRIVER;
	if (err == DOCA_SUCCESS && t->cu->memcpy_dtoh_async((void *)lo, (sdp_cu_deviceptr_t)s->src,
							    (size_t)(hi - lo), t->stream) != 0) {
		if (t->lookup_errors++ == 0)
			sdp_error(
				"eth_txq %p: reading packets at GPU address %p (%zu bytes) failed",
				t->cfg.txq, (void *)(uintptr_t)s->src, (size_t)(hi - lo));
		err = DOCA_ERROR_INVALID_VALUE;
	}
	if (err == DOCA_SUCCESS)
		return 1;
	for (uint32_t i = 0; i < nframes; i++)
		if (frame[i] >= lo && frame[i] < hi) {
			frame[i] = NULL;
			status[i] = err;
		}
	return 0;
}

/* Send what one GPU send queue posted; returns descriptors handled. */
static unsigned int tx_poll_one(struct sdp_eth_gpu_txq *t, uint64_t *next_ns)
{
	struct sdp_eth_dport *dport = t->dport;
	uint32_t first = 0, n = sdp_ring_tx_peek(t->ring, TX_POLL_MAX, &first), ready = 0;
	struct sdp_ring_txd dd[TX_POLL_MAX]; /* the descriptors, read once from mapped memory */
	const uint8_t *frame[TX_POLL_MAX];
	doca_error_t status[TX_POLL_MAX];
	struct sdp_pkt pkts[TX_POLL_MAX];
	struct tx_span span = {0};
	uint32_t cursor = 0; /* stage bytes used */
	unsigned int done = 0;
	int copies = 0;

	if (n == 0)
		goto out;
	/*
	 * 1: where each frame is. Frames in device memory are copied out into the stage, one copy
	 * per run of frames at increasing, non-overlapping addresses of one allocation with gaps
	 * below TX_SPAN_GAP (the slots of a packet buffer, as the GPU fills them).
	 */
	for (; ready < n; ready++) {
		const struct sdp_ring_txd *d = &dd[ready];
		uint64_t hi = 0;
		uint32_t dst;

		dd[ready] = *sdp_ring_tx_desc(t->ring, first + ready);
		if (d->send_ts_ns != 0 && d->send_ts_ns > sdp_eth_now_ns(CLOCK_REALTIME)) {
			if (*next_ns == 0 || d->send_ts_ns < *next_ns)
				*next_ns = d->send_ts_ns;
			break; /* in order: everything after it waits too */
		}
		status[ready] = DOCA_SUCCESS;
		frame[ready] = NULL;
		if (d->len < 14 || d->len > SDP_ETH_MAX_FRAME) {
			status[ready] = DOCA_ERROR_INVALID_VALUE;
			continue;
		}
		if (frame_where(t, d, &frame[ready], &hi) == 1)
			continue;
		if (span.open && d->addr >= span.end && d->addr <= span.lim &&
		    d->len <= span.lim - d->addr && d->addr - span.end <= TX_SPAN_GAP &&
		    (d->addr - span.src) + d->len <= TX_STAGE_BYTES - span.dst) {
			frame[ready] = t->stage + span.dst + (d->addr - span.src);
			span.end = d->addr + d->len;
			continue;
		}
		if (span.open) {
			copies += tx_span_issue(t, &span, frame, status, ready);
			cursor = span.dst + (uint32_t)(span.end - span.src);
		}
		dst = (cursor + 63u) & ~63u;
		if (dst + d->len > TX_STAGE_BYTES)
			break; /* the stage is full: the rest next round */
		span = (struct tx_span){
			.src = d->addr, .end = d->addr + d->len, .lim = hi, .dst = dst, .open = 1};
		frame[ready] = t->stage + dst;
	}
	if (span.open)
		copies += tx_span_issue(t, &span, frame, status, ready);
	/* 2: the copies land */
	if (copies > 0 && t->cu->stream_synchronize(t->stream) != 0) {
		if (t->lookup_errors++ == 0)
			sdp_error("eth_txq %p: copying packets out of device memory failed",
				  t->cfg.txq);
		for (uint32_t i = 0; i < ready; i++)
			if (frame[i] >= t->stage && frame[i] < t->stage + TX_STAGE_BYTES) {
				frame[i] = NULL;
				status[i] = DOCA_ERROR_DRIVER;
			}
	}
	/* 3: offloads, then send runs of good frames in one burst each and complete in order */
	for (uint32_t i = 0; i < ready;) {
		uint32_t np = 0;
		uint16_t sent;

		for (; i + np < ready && np < TX_RUN_MAX && frame[i + np] != NULL; np++) {
			const struct sdp_ring_txd *d = &dd[i + np];
			uint8_t *f = (uint8_t *)(uintptr_t)frame[i + np];

			if (d->flags & (SDP_RING_TXD_F_L3_CSUM | SDP_RING_TXD_F_L4_CSUM)) {
				/* the stage is ours; never modify the application's buffer */
				if (f < t->stage || f >= t->stage + TX_STAGE_BYTES) {
					uint8_t *mine = t->csum + (size_t)np * SDP_ETH_MAX_FRAME;

					memcpy(mine, f, d->len);
					f = mine;
				}
				sdp_pkt_csum_fill(f, d->len, !!(d->flags & SDP_RING_TXD_F_L3_CSUM),
						  !!(d->flags & SDP_RING_TXD_F_L4_CSUM));
			}
			pkts[np] = (struct sdp_pkt){.data = f, .len = d->len};
		}
		if (np > 0) {
			uint64_t bytes = 0;

			pthread_mutex_lock(&dport->tx_lock);
			sent = dport->ops->tx_burst(dport->port, 0, pkts, (uint16_t)np);
			for (uint16_t k = 0; k < sent; k++) {
				sdp_eth_dport_count_tx(dport, pkts[k].len);
				bytes += pkts[k].len;
			}
			pthread_mutex_unlock(&dport->tx_lock);
			cnt_add(&t->packets, sent);
			cnt_add(&t->bytes, bytes);
			for (uint16_t k = 0; k < sent; k++)
				(void)sdp_ring_tx_complete(t->ring, first + i + k, DOCA_SUCCESS,
							   sdp_eth_now_ns(CLOCK_REALTIME));
			done += sent;
			i += sent;
			if (sent < np)
				break; /* the backend is full: the rest again next round */
			continue;
		}
		/* a frame that failed */
		cnt_add(&t->errors, 1);
		(void)sdp_ring_tx_complete(t->ring, first + i, status[i],
					   sdp_eth_now_ns(CLOCK_REALTIME));
		done++;
		i++;
	}
out:
	if (!t->cfg.completion_on_gpu && t->cfg.notify_cb == NULL && t->cfg.error_cb == NULL)
		drain_cmpl(t); /* nobody else consumes them */
	return done;
}

unsigned int sdp_eth_gpu_tx_poll(struct sdp_eth_dport *dport, uint64_t *next_ns)
{
	struct sdp_eth_gpu_txq *t;
	unsigned int done = 0;

	pthread_mutex_lock(&dport->lock);
	sdp_list_for_each(t, &dport->gtxqs, link)
		done += tx_poll_one(t, next_ns);
	pthread_mutex_unlock(&dport->lock);
	return done;
}
