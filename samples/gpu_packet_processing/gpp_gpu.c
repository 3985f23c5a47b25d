/*
 * The GPU mode of softdpu's GPU packet processing application, host side: the GPU, its three
 * receive queues on the GPU data path (CYCLIC, packets in GPU memory), two send queues on the
 * GPU data path (ICMP and TCP replies, completions polled by the kernels), one semaphore ring
 * per kernel, the kernels' launch and stop, and the statistics thread that drains the rings.
 * gpp_gpu.h says what the kernels do; gpu_packet_processing.c drives this and keeps the CPU's
 * part (the queue for everything else, DOCA Flow, the rollback order).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <doca_ctx.h>
#include <doca_eth_rxq.h>
#include <doca_eth_rxq_gpu_data_path.h>
#include <doca_eth_txq.h>
#include <doca_eth_txq_gpu_data_path.h>
#include <doca_gpunetio.h>
#include <doca_log.h>
#include <doca_mmap.h>

#include "gpp_gpu_host.h"

DOCA_LOG_REGISTER(GPP_GPU);

static const char *const proto_name[GPP_GPU_NB] = {"udp", "tcp", "icmp"};

/* GPU memory registered with an mmap of the NIC (dma-buf where the GPU exports it). */
struct gpp_gmem {
	void *gpu;
	size_t size;
	int dmabuf_fd;
	struct doca_mmap *mmap;
};

struct gpp_gpu_q {
	struct doca_eth_rxq *rxq;
	struct doca_gpu_eth_rxq *rxq_gpu;
	bool rxq_started;
	struct gpp_gmem pkt;
	struct doca_eth_txq *txq; /* none for UDP */
	struct doca_gpu_eth_txq *txq_gpu;
	bool txq_started;
	struct gpp_gmem tx;
	uint32_t tx_mkey;
	struct doca_gpu_semaphore *sem;
	struct doca_gpu_semaphore_gpu *sem_gpu;
	void *stream;
	bool launched; /* a kernel runs on stream (not seen to end) */
	uint32_t cons; /* the next item the statistics thread reads */
	struct gpp_gpu_total total;
};

/* CPU-visible words the kernels share with the CPU (GPU_CPU memory). */
struct gpp_gpu_ctl {
	uint32_t exit_flag;
	uint32_t error;
	struct gpp_gpu_counts residual[GPP_GPU_NB];
	struct gpp_gpu_timing timing[GPP_GPU_NB];
};

struct gpp_gpu {
	char pcie[32];
	struct doca_gpu *gpu;
	struct gpp_gpu_q q[GPP_GPU_NB];
	struct gpp_gpu_ctl *ctl_gpu, *ctl;
	pthread_t stats;
	bool stats_running;
	volatile int stats_stop;
	const uint64_t *other_pkts; /* the CPU queue's count (main thread's, read atomically) */
	pthread_mutex_t lock;	    /* the totals: stats thread writes, gpp_gpu_totals reads */
};

static void gmem_free(struct doca_gpu *gpu, struct gpp_gmem *m)
{
	if (m->mmap != NULL) {
		doca_mmap_stop(m->mmap);
		doca_mmap_destroy(m->mmap);
	}
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	if (m->gpu != NULL)
		doca_gpu_mem_free(gpu, m->gpu);
	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
}

static doca_error_t gmem_alloc(struct doca_gpu *gpu, struct doca_dev *dev, size_t size,
			       struct gpp_gmem *m)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	doca_error_t st;

	memset(m, 0, sizeof(*m));
	m->dmabuf_fd = -1;
	m->size = (size + page - 1) / page * page;
	st = doca_gpu_mem_alloc(gpu, m->size, page, DOCA_GPU_MEM_TYPE_GPU, &m->gpu, NULL);
	if (st != DOCA_SUCCESS) {
		m->gpu = NULL;
		DOCA_LOG_ERR("%zu bytes of GPU memory: %s", m->size, doca_error_get_descr(st));
		return st;
	}
	st = doca_mmap_create(&m->mmap);
	if (st == DOCA_SUCCESS)
		st = doca_mmap_add_dev(m->mmap, dev);
	if (st == DOCA_SUCCESS) {
		if (doca_gpu_dmabuf_fd(gpu, m->gpu, m->size, &m->dmabuf_fd) == DOCA_SUCCESS) {
			st = doca_mmap_set_dmabuf_memrange(m->mmap, m->dmabuf_fd, m->gpu, 0,
							   m->size);
		} else {
			m->dmabuf_fd = -1;
			st = doca_mmap_set_memrange(m->mmap, m->gpu, m->size);
		}
	}
	if (st == DOCA_SUCCESS)
		st = doca_mmap_set_permissions(m->mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	if (st == DOCA_SUCCESS)
		st = doca_mmap_start(m->mmap);
	if (st != DOCA_SUCCESS) {
		DOCA_LOG_ERR("registering GPU memory: %s", doca_error_get_descr(st));
		gmem_free(gpu, m);
	}
	return st;
}

doca_error_t gpp_gpu_open(const char *gpu_pcie, struct gpp_gpu **out)
{
	struct gpp_gpu *g = calloc(1, sizeof(*g));
	doca_error_t st;

	*out = NULL;
	if (g == NULL)
		return DOCA_ERROR_NO_MEMORY;
	pthread_mutex_init(&g->lock, NULL);
	for (int p = 0; p < GPP_GPU_NB; p++)
		g->q[p].pkt.dmabuf_fd = g->q[p].tx.dmabuf_fd = -1;
	snprintf(g->pcie, sizeof(g->pcie), "%s", gpu_pcie != NULL ? gpu_pcie : "");
	st = gpp_cuda_init(g->pcie, sizeof(g->pcie));
	if (st == DOCA_SUCCESS) {
		st = doca_gpu_create(g->pcie, &g->gpu);
		if (st != DOCA_SUCCESS)
			DOCA_LOG_ERR("doca_gpu_create(%s): %s", g->pcie, doca_error_get_descr(st));
	}
	if (st == DOCA_SUCCESS)
		st = doca_gpu_mem_alloc(g->gpu, sizeof(struct gpp_gpu_ctl), 0,
					DOCA_GPU_MEM_TYPE_GPU_CPU, (void **)&g->ctl_gpu,
					(void **)&g->ctl);
	if (st != DOCA_SUCCESS) {
		gpp_gpu_close(g);
		return st;
	}
	memset(g->ctl, 0, sizeof(*g->ctl));
	*out = g;
	return DOCA_SUCCESS;
}

const char *gpp_gpu_pcie(const struct gpp_gpu *g)
{
	return g->pcie;
}

/* One protocol's receive queue (queue id qid), send queue (not UDP), semaphore and stream. */
static doca_error_t queue_start(struct gpp_gpu *g, struct doca_dev *dev, int p, uint16_t qid)
{
	struct gpp_gpu_q *q = &g->q[p];
	uint32_t buf_size = 0;
	doca_error_t st;

	st = doca_eth_rxq_create(dev, GPP_GPU_RX_PKTS, GPP_GPU_TX_SLOT, &q->rxq);
	if (st == DOCA_SUCCESS)
		st = doca_eth_rxq_set_type(q->rxq, DOCA_ETH_RXQ_TYPE_CYCLIC);
	if (st == DOCA_SUCCESS)
		st = doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0,
							   GPP_GPU_TX_SLOT, GPP_GPU_RX_PKTS, 0, 0,
							   0, &buf_size);
	if (st == DOCA_SUCCESS)
		st = gmem_alloc(g->gpu, dev, buf_size, &q->pkt);
	if (st == DOCA_SUCCESS)
		st = doca_eth_rxq_set_pkt_buf(q->rxq, q->pkt.mmap, 0, (uint32_t)q->pkt.size);
	if (st == DOCA_SUCCESS)
		st = doca_ctx_set_datapath_on_gpu(doca_eth_rxq_as_doca_ctx(q->rxq), g->gpu);
	if (st == DOCA_SUCCESS)
		st = doca_ctx_start(doca_eth_rxq_as_doca_ctx(q->rxq));
	if (st == DOCA_SUCCESS) {
		q->rxq_started = true;
		st = doca_eth_rxq_get_gpu_handle(q->rxq, &q->rxq_gpu);
	}
	if (st == DOCA_SUCCESS)
		st = doca_eth_rxq_apply_queue_id(q->rxq, qid);
	if (st != DOCA_SUCCESS) {
		DOCA_LOG_ERR("%s receive queue on the GPU: %s", proto_name[p],
			     doca_error_get_descr(st));
		return st;
	}
	if (p != GPP_GPU_UDP) {
		st = doca_eth_txq_create(dev, GPP_GPU_TX_DESC, &q->txq);
		if (st == DOCA_SUCCESS)
			st = doca_eth_txq_gpu_set_completion_on_gpu(q->txq);
		if (st == DOCA_SUCCESS)
			st = doca_ctx_set_datapath_on_gpu(doca_eth_txq_as_doca_ctx(q->txq), g->gpu);
		if (st == DOCA_SUCCESS)
			st = doca_ctx_start(doca_eth_txq_as_doca_ctx(q->txq));
		if (st == DOCA_SUCCESS) {
			q->txq_started = true;
			st = doca_eth_txq_get_gpu_handle(q->txq, &q->txq_gpu);
		}
		if (st == DOCA_SUCCESS)
			st = gmem_alloc(g->gpu, dev,
					(size_t)GPP_GPU_TX_REGIONS * GPP_GPU_THREADS *
						GPP_GPU_TX_SLOT,
					&q->tx);
		if (st == DOCA_SUCCESS)
			st = doca_mmap_get_mkey(q->tx.mmap, dev, &q->tx_mkey);
		if (st != DOCA_SUCCESS) {
			DOCA_LOG_ERR("%s send queue on the GPU: %s", proto_name[p],
				     doca_error_get_descr(st));
			return st;
		}
	}
	/* the counts go to the CPU: items and custom info in CPU memory the GPU reaches */
	st = doca_gpu_semaphore_create(g->gpu, &q->sem);
	if (st == DOCA_SUCCESS)
		st = doca_gpu_semaphore_set_memory_type(q->sem, DOCA_GPU_MEM_TYPE_CPU_GPU);
	if (st == DOCA_SUCCESS)
		st = doca_gpu_semaphore_set_items_num(q->sem, GPP_GPU_SEM_ITEMS);
	if (st == DOCA_SUCCESS)
		st = doca_gpu_semaphore_set_custom_info(q->sem, sizeof(struct gpp_gpu_counts),
							DOCA_GPU_MEM_TYPE_CPU_GPU);
	if (st == DOCA_SUCCESS)
		st = doca_gpu_semaphore_start(q->sem);
	if (st == DOCA_SUCCESS)
		st = doca_gpu_semaphore_get_gpu_handle(q->sem, &q->sem_gpu);
	if (st != DOCA_SUCCESS) {
		DOCA_LOG_ERR("%s semaphore: %s", proto_name[p], doca_error_get_descr(st));
		return st;
	}
	return gpp_cuda_stream_create(&q->stream);
}

doca_error_t gpp_gpu_queues_start(struct gpp_gpu *g, struct doca_dev *dev,
				  const uint16_t qid[GPP_GPU_NB])
{
	for (int p = 0; p < GPP_GPU_NB; p++) {
		doca_error_t st = queue_start(g, dev, p, qid[p]);

		if (st != DOCA_SUCCESS)
			return st;
	}
	return DOCA_SUCCESS;
}

/* Take every READY item of q's ring into its totals and free it (statistics thread). */
static void drain(struct gpp_gpu *g, struct gpp_gpu_q *q)
{
	for (uint32_t k = 0; k < GPP_GPU_SEM_ITEMS; k++) {
		enum doca_gpu_semaphore_status st = DOCA_GPU_SEMAPHORE_STATUS_FREE;
		struct gpp_gpu_counts c;
		void *info = NULL;

		if (doca_gpu_semaphore_get_status(q->sem, q->cons, &st) != DOCA_SUCCESS ||
		    st != DOCA_GPU_SEMAPHORE_STATUS_READY ||
		    doca_gpu_semaphore_get_custom_info_addr(q->sem, q->cons, &info) != DOCA_SUCCESS)
			return;
		memcpy(&c, info, sizeof(c));
		(void)doca_gpu_semaphore_set_status(q->sem, q->cons,
						    DOCA_GPU_SEMAPHORE_STATUS_FREE);
		q->cons = (q->cons + 1) % GPP_GPU_SEM_ITEMS;
		pthread_mutex_lock(&g->lock);
		gpp_gpu_total_add(&q->total, &c);
		pthread_mutex_unlock(&g->lock);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The statistics thread: drains the rings every millisecond, a line of rates every second. */
static void *stats_loop(void *arg)
{
	struct gpp_gpu *g = arg;
	const struct timespec nap = {0, 1000000};
	uint64_t last[GPP_GPU_NB] = {0}, last_other = 0;
	double start = now_s(), next = start + 1;

	while (!__atomic_load_n(&g->stats_stop, __ATOMIC_ACQUIRE)) {
		for (int p = 0; p < GPP_GPU_NB; p++)
			drain(g, &g->q[p]);
		if (now_s() >= next) {
			uint64_t other = __atomic_load_n(g->other_pkts, __ATOMIC_RELAXED);

			pthread_mutex_lock(&g->lock);
			printf("gpp: %.0f s", next - start);
			for (int p = 0; p < GPP_GPU_NB; p++) {
				printf(" %s %llu/s", proto_name[p],
				       (unsigned long long)(g->q[p].total.pkts - last[p]));
				last[p] = g->q[p].total.pkts;
			}
			pthread_mutex_unlock(&g->lock);
			printf(" other %llu/s\n", (unsigned long long)(other - last_other));
			last_other = other;
			fflush(stdout);
			next += 1;
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

doca_error_t gpp_gpu_launch(struct gpp_gpu *g, const struct gpp_host *host,
			    const uint64_t *other_pkts)
{
	doca_error_t loaded = gpp_kernels_load();

	if (loaded != DOCA_SUCCESS)
		return loaded;
	g->other_pkts = other_pkts;
	for (int p = 0; p < GPP_GPU_NB; p++) {
		struct gpp_gpu_q *q = &g->q[p];
		struct gpp_gpu_queue k = {
			.rxq = q->rxq_gpu,
			.txq = q->txq_gpu,
			.sem = q->sem_gpu,
			.tx_buf = (uint64_t)(uintptr_t)q->tx.gpu,
			.tx_mkey = __builtin_bswap32(q->tx_mkey),
			.residual = &g->ctl_gpu->residual[p],
			.timing = &g->ctl_gpu->timing[p],
			.exit_flag = &g->ctl_gpu->exit_flag,
			.error = &g->ctl_gpu->error,
			.host = *host,
		};
		doca_error_t st = gpp_kernel_launch((enum gpp_gpu_proto)p, q->stream, &k);

		if (st != DOCA_SUCCESS)
			return st;
		q->launched = true;
	}
	if (pthread_create(&g->stats, NULL, stats_loop, g) != 0) {
		DOCA_LOG_ERR("starting the statistics thread failed");
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	g->stats_running = true;
	return DOCA_SUCCESS;
}

uint32_t gpp_gpu_error(struct gpp_gpu *g)
{
	uint32_t err = g->ctl == NULL ? 0 : DOCA_GPUNETIO_VOLATILE(g->ctl->error);

	/* a kernel that faulted (or ended) says nothing through the control words */
	for (int p = 0; p < GPP_GPU_NB && err == 0; p++) {
		doca_error_t st;

		if (!g->q[p].launched)
			continue;
		st = gpp_cuda_stream_status(g->q[p].stream);
		if (st == DOCA_SUCCESS) {
			DOCA_LOG_ERR("the %s kernel ended unasked", proto_name[p]);
			g->q[p].launched = false;
			err = DOCA_ERROR_BAD_STATE;
		} else if (st != DOCA_ERROR_IN_PROGRESS) {
			err = st;
		}
	}
	return err;
}

doca_error_t gpp_gpu_halt(struct gpp_gpu *g)
{
	doca_error_t result = DOCA_SUCCESS;

	if (g->ctl != NULL) {
		DOCA_GPUNETIO_VOLATILE(g->ctl->exit_flag) = 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	/* the statistics thread drains while the kernels flush their last counts */
	for (int p = 0; p < GPP_GPU_NB; p++) {
		struct gpp_gpu_q *q = &g->q[p];
		doca_error_t st;

		if (!q->launched)
			continue;
		st = gpp_cuda_stream_wait(q->stream, 5.0);
		if (st == DOCA_SUCCESS) {
			q->launched = false;
		} else if (st == DOCA_ERROR_DRIVER) {
			q->launched = false; /* it faulted (said): it runs no more */
		} else {
			DOCA_LOG_ERR("the %s kernel did not end within 5 s: %s", proto_name[p],
				     doca_error_get_descr(st));
			result = st;
		}
	}
	if (g->stats_running) {
		__atomic_store_n(&g->stats_stop, 1, __ATOMIC_RELEASE);
		pthread_join(g->stats, NULL);
		g->stats_running = false;
	}
	if (result != DOCA_SUCCESS)
		return result;
	/* what the kernels left: the rings' last items, then the residual counts */
	for (int p = 0; p < GPP_GPU_NB; p++) {
		const struct gpp_gpu_timing *t = &g->ctl->timing[p];

		if (g->q[p].sem == NULL)
			continue;
		drain(g, &g->q[p]);
		gpp_gpu_total_add(&g->q[p].total, &g->ctl->residual[p]);
		memset(&g->ctl->residual[p], 0, sizeof(g->ctl->residual[p]));
		/* where the kernel's time went: the first thing to look at when a rate is low */
		printf("gpp: %s kernel: %llu receive calls, %llu with packets; %.3f s receiving, "
		       "%.3f s on the work and posting replies, %.3f s waiting for reply slots\n",
		       proto_name[p], (unsigned long long)t->loops, (unsigned long long)t->batches,
		       (double)t->recv_ns / 1e9, (double)t->work_ns / 1e9,
		       (double)t->wait_ns / 1e9);
	}
	return DOCA_SUCCESS;
}

void gpp_gpu_totals(struct gpp_gpu *g, struct gpp_gpu_total out[GPP_GPU_NB])
{
	pthread_mutex_lock(&g->lock);
	for (int p = 0; p < GPP_GPU_NB; p++)
		out[p] = g->q[p].total;
	pthread_mutex_unlock(&g->lock);
}

/* Stop a context on the GPU data path (nothing to progress: it goes idle at once). */
static void ctx_stop(struct doca_ctx *ctx, const char *what)
{
	enum doca_ctx_states s = DOCA_CTX_STATE_IDLE;
	doca_error_t st = doca_ctx_stop(ctx);

	if (st != DOCA_SUCCESS && st != DOCA_ERROR_IN_PROGRESS)
		DOCA_LOG_WARN("stopping the %s: %s", what, doca_error_get_descr(st));
	if (doca_ctx_get_state(ctx, &s) == DOCA_SUCCESS && s != DOCA_CTX_STATE_IDLE)
		DOCA_LOG_WARN("the %s did not stop", what);
}

void gpp_gpu_queues_destroy(struct gpp_gpu *g)
{
	if (g == NULL)
		return;
	for (int p = 0; p < GPP_GPU_NB; p++) {
		struct gpp_gpu_q *q = &g->q[p];

		if (q->launched)
			continue; /* a kernel that never ended still uses them: fail closed */
		if (q->rxq_started)
			ctx_stop(doca_eth_rxq_as_doca_ctx(q->rxq), "receive queue");
		q->rxq_started = false;
		if (q->rxq != NULL)
			doca_eth_rxq_destroy(q->rxq);
		q->rxq = NULL;
		if (q->txq_started)
			ctx_stop(doca_eth_txq_as_doca_ctx(q->txq), "send queue");
		q->txq_started = false;
		if (q->txq != NULL)
			doca_eth_txq_destroy(q->txq);
		q->txq = NULL;
	}
}

void gpp_gpu_close(struct gpp_gpu *g)
{
	bool busy = false;

	if (g == NULL)
		return;
	if (g->stats_running) {
		__atomic_store_n(&g->stats_stop, 1, __ATOMIC_RELEASE);
		pthread_join(g->stats, NULL);
		g->stats_running = false;
	}
	for (int p = 0; p < GPP_GPU_NB; p++)
		busy = busy || g->q[p].launched;
	if (busy) {
		/* memory a running kernel may touch is never freed: the process exit releases it */
		DOCA_LOG_ERR("a kernel still runs: its GPU memory is left to the process exit");
		return;
	}
	gpp_gpu_queues_destroy(g);
	for (int p = 0; p < GPP_GPU_NB; p++) {
		struct gpp_gpu_q *q = &g->q[p];

		if (q->sem != NULL)
			doca_gpu_semaphore_destroy(q->sem);
		gmem_free(g->gpu, &q->tx);
		gmem_free(g->gpu, &q->pkt);
		gpp_cuda_stream_destroy(q->stream);
	}
	if (g->ctl_gpu != NULL)
		doca_gpu_mem_free(g->gpu, g->ctl_gpu);
	if (g->gpu != NULL && doca_gpu_destroy(g->gpu) != DOCA_SUCCESS)
		DOCA_LOG_WARN("doca_gpu_destroy failed");
	pthread_mutex_destroy(&g->lock);
	free(g);
}
