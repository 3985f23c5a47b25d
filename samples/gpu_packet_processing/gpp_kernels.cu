/*
 * The GPU mode's persistent kernels (gpp_gpu.h says what each does) and the few CUDA runtime
 * calls the host side needs. The protocol work is gpp_proto.h's, the same functions the CPU
 * mode and the unit tests run.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <cuda_runtime.h>
#include <time.h>

#include <doca_gpunetio_dev_eth_rxq.cuh>
#include <doca_gpunetio_dev_eth_txq.cuh>
#include <doca_gpunetio_dev_sem.cuh>
#include <doca_log.h>

#include "gpp_gpu.h"
#include "gpp_pages.h"

DOCA_LOG_REGISTER(GPP_KERNELS);

/* The built-in pages in GPU memory (every string a device array: the table points at them). */
__device__ const char gpp_d_index[] = GPP_PAGE_INDEX;
__device__ const char gpp_d_hello[] = GPP_PAGE_HELLO;
__device__ const char gpp_d_path_index[] = "/index.html";
__device__ const char gpp_d_path_root[] = "/";
__device__ const char gpp_d_path_hello[] = "/hello.txt";
__device__ const char gpp_d_html[] = "text/html";
__device__ const char gpp_d_plain[] = "text/plain";
__device__ const struct gpp_page gpp_d_pages[] = {
	{gpp_d_path_index, gpp_d_html, gpp_d_index, sizeof(gpp_d_index) - 1},
	{gpp_d_path_root, gpp_d_html, gpp_d_index, sizeof(gpp_d_index) - 1},
	{gpp_d_path_hello, gpp_d_plain, gpp_d_hello, sizeof(gpp_d_hello) - 1},
};
#define GPP_D_NB_PAGES 3u

/* The batch's counts, summed by the block's threads. */
struct gpp_batch {
	uint32_t udp_queries, icmp_replies, http_replies, tcp_replies, posted, not_posted;
};

/*
 * Hand p to the CPU through the next item of the semaphore ring when the CPU has freed it
 * (thread 0 only). true when p went (or was empty); false: p stays for a later item.
 */
__device__ static bool gpp_publish(const struct gpp_gpu_queue &q, uint32_t *idx,
				   struct gpp_gpu_counts *p)
{
	enum doca_gpu_semaphore_status st;
	void *info = NULL;

	if (p->batches == 0 && p->sent == 0 && p->send_errors == 0)
		return true; /* nothing to hand over */
	if (doca_gpu_dev_semaphore_get_status(q.sem, *idx, &st) != DOCA_SUCCESS ||
	    st != DOCA_GPU_SEMAPHORE_STATUS_FREE ||
	    doca_gpu_dev_semaphore_get_custom_info_addr(q.sem, *idx, &info) != DOCA_SUCCESS)
		return false;
	*(struct gpp_gpu_counts *)info = *p;
	/* set_status fences (system scope) before the status: the CPU sees the counts with it */
	(void)doca_gpu_dev_semaphore_set_status(q.sem, *idx, DOCA_GPU_SEMAPHORE_STATUS_READY);
	*idx = (*idx + 1) % GPP_GPU_SEM_ITEMS;
	*p = gpp_gpu_counts{};
	return true;
}

/* Stop every kernel (an error here is the whole application's). */
__device__ static void gpp_fail(const struct gpp_gpu_queue &q, uint32_t err)
{
	printf("gpp kernel: error %u\n", err);
	DOCA_GPUNETIO_VOLATILE(*q.error) = err;
	__threadfence_system();
	DOCA_GPUNETIO_VOLATILE(*q.exit_flag) = 1;
	__threadfence_system();
}

/*
 * The send side of a kernel (thread 0's): replies posted and completions consumed so far, and
 * for each reply region the posted count at the end of the batch that last wrote it. A region
 * is written again only once every reply up to that count has completed (completions come in
 * the order of the sends), so the engine never reads a slot being rewritten, and batches do not
 * wait for their own replies: the sends of up to GPP_GPU_TX_REGIONS batches are in flight.
 */
struct gpp_tx_state {
	uint64_t posted, done;
	uint64_t region_end[GPP_GPU_TX_REGIONS];
	uint32_t sent, errors; /* completions consumed: ok / failed (not yet counted in pend) */
};

/*
 * Consume one completion: 1 (counted in t), 0 none (NB: not there; B: the bounded wait ran
 * out), -1 the queue failed (said, the exit flag set).
 */
__device__ static int gpp_consume_one(const struct gpp_gpu_queue &q, struct gpp_tx_state *t,
				      enum doca_gpu_dev_eth_wait_flags mode)
{
	uint32_t n = 0;
	doca_error_t ret =
		doca_gpu_dev_eth_txq_poll_completion<DOCA_GPUNETIO_ETH_CQ_POLL_ALL,
						     DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
						     DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA>(q.txq, 1,
										       mode, &n);

	if (n == 1) {
		t->done++;
		if (ret == DOCA_SUCCESS)
			t->sent++;
		else
			t->errors++; /* UNEXPECTED: this send completed with an error */
		return 1;
	}
	if (ret == DOCA_SUCCESS || ret == DOCA_ERROR_TIME_OUT)
		return 0;
	gpp_fail(q, (uint32_t)ret);
	return -1;
}

/* Consume completions until done reaches need (bounded waits, retried until the exit flag). */
__device__ static bool gpp_wait_done(const struct gpp_gpu_queue &q, struct gpp_tx_state *t,
				     uint64_t need)
{
	while (t->done < need) {
		int r = gpp_consume_one(q, t, DOCA_GPUNETIO_ETH_WAIT_FLAG_B);

		if (r < 0 || (r == 0 && DOCA_GPUNETIO_VOLATILE(*q.exit_flag) != 0))
			return false;
	}
	return true;
}

template <enum gpp_gpu_proto proto>
__global__ void __launch_bounds__(GPP_GPU_THREADS) gpp_kernel(struct gpp_gpu_queue q)
{
	__shared__ uint64_t first_idx;
	__shared__ uint32_t num_pkts;
	__shared__ struct doca_gpu_dev_eth_rxq_attr attr[GPP_GPU_THREADS];
	__shared__ struct gpp_batch b;
	__shared__ uint32_t stop, rx_err, region_ok;
	const uint32_t tid = threadIdx.x;
	struct gpp_gpu_counts pend = {}; /* thread 0's: not yet handed to the CPU */
	struct gpp_tx_state tx = {};	 /* thread 0's */
	uint32_t sem_idx = 0;
	uint64_t batch = 0;
	struct gpp_gpu_timing tm = {}; /* thread 0's */
	uint64_t t0 = 0, t1 = 0;

	if (tid == 0)
		rx_err = 0;
	for (;;) {
		doca_error_t ret;
		uint64_t first;
		uint32_t n, err;

		if (tid == 0) {
			stop = DOCA_GPUNETIO_VOLATILE(*q.exit_flag);
			b = gpp_batch{};
		}
		__syncthreads();
		if (stop != 0)
			break;
		if (tid == 0)
			t0 = doca_gpu_dev_eth_query_globaltimer();
		ret = doca_gpu_dev_eth_rxq_recv<
			DOCA_GPUNETIO_ETH_EXEC_SCOPE_BLOCK, DOCA_GPUNETIO_ETH_MCST_AUTO,
			DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO, DOCA_GPUNETIO_ETH_RX_ATTR_ALL>(
			q.rxq, GPP_GPU_THREADS, GPP_GPU_RX_TIMEOUT_NS, &first_idx, &num_pkts, attr);
		if (ret != DOCA_SUCCESS)
			atomicExch(&rx_err, (uint32_t)ret);
		__syncthreads();
		n = num_pkts;
		first = first_idx;
		err = rx_err;
		__syncthreads(); /* all have read the batch before the next call rewrites it */
		if (err != 0) {
			if (tid == 0)
				gpp_fail(q, err);
			break;
		}
		if (tid == 0) {
			t1 = doca_gpu_dev_eth_query_globaltimer();
			tm.loops++;
			tm.recv_ns += t1 - t0;
			region_ok = 1;
			if (proto != GPP_GPU_UDP) {
				/* what completed meanwhile; then this batch's reply region must be free */
				while (tx.done < tx.posted &&
				       gpp_consume_one(q, &tx, DOCA_GPUNETIO_ETH_WAIT_FLAG_NB) == 1)
					;
				if (n != 0)
					region_ok = gpp_wait_done(
						q, &tx, tx.region_end[batch % GPP_GPU_TX_REGIONS]);
			}
			pend.sent += tx.sent;
			pend.send_errors += tx.errors;
			tx.sent = tx.errors = 0;
			t0 = doca_gpu_dev_eth_query_globaltimer();
			tm.wait_ns += t0 - t1;
			if (n == 0)
				(void)gpp_publish(q, &sem_idx, &pend);
		}
		__syncthreads();
		if (n == 0)
			continue;
		if (region_ok == 0) {
			/* stopping, or the queue failed: the batch is counted, not answered */
			if (tid == 0) {
				pend.pkts += n;
				pend.batches++;
			}
			continue;
		}
		if (tid < n) {
			const uint8_t *f = (const uint8_t *)doca_gpu_dev_eth_rxq_get_pkt_addr(
				q.rxq, first + tid);
			const uint32_t len = attr[tid].bytes;
			uint8_t *out = (uint8_t *)(q.tx_buf +
						   ((batch % GPP_GPU_TX_REGIONS) * GPP_GPU_THREADS +
						    tid) * (uint64_t)GPP_GPU_TX_SLOT);
			uint32_t r = 0;

			if (proto == GPP_GPU_UDP) {
				if (gpp_udp_query(&q.host, f, len))
					atomicAdd(&b.udp_queries, 1u);
			} else if (proto == GPP_GPU_ICMP) {
				r = gpp_icmp_echo(&q.host, f, len, out, GPP_GPU_TX_SLOT);
				if (r != 0)
					atomicAdd(&b.icmp_replies, 1u);
			} else {
				/* the NIC's word on the TCP checksum where it has one, else check it */
				uint32_t fl = sdp_gpu_dev_eth_rxq_get_pkt_flags(q.rxq, first + tid);
				int l4_ok = (fl & SDP_RING_CQE_F_L4_CSUM_BAD)  ? 0 :
					    (fl & SDP_RING_CQE_F_CSUM_PARTIAL) ? 1 :
										 -1;

				r = gpp_http(&q.host, gpp_d_pages, GPP_D_NB_PAGES, f, len, l4_ok,
					     out, GPP_GPU_TX_SLOT);
				if (r != 0) {
					atomicAdd(&b.tcp_replies, 1u);
					if (gpp_tcp_reply_has_data(out, r))
						atomicAdd(&b.http_replies, 1u);
				}
			}
			if (r != 0) {
				doca_gpu_dev_eth_ticket_t ticket = ~0ull;

				doca_gpu_dev_eth_txq_send<
					DOCA_GPUNETIO_ETH_RESOURCE_SHARING_MODE_CTA,
					DOCA_GPUNETIO_ETH_SYNC_SCOPE_CTA,
					DOCA_GPUNETIO_ETH_NIC_HANDLER_AUTO,
					DOCA_GPUNETIO_ETH_EXEC_SCOPE_THREAD>(
					q.txq, (uint64_t)(uintptr_t)out, q.tx_mkey, r,
					DOCA_GPUNETIO_ETH_SEND_FLAG_NOTIFY, &ticket);
				atomicAdd(ticket == ~0ull ? &b.not_posted : &b.posted, 1u);
			}
		}
		__syncthreads();
		if (tid == 0) {
			tm.batches++;
			tm.work_ns += doca_gpu_dev_eth_query_globaltimer() - t0;
			tx.posted += b.posted;
			tx.region_end[batch % GPP_GPU_TX_REGIONS] = tx.posted;
			pend.pkts += n;
			pend.udp_queries += b.udp_queries;
			pend.icmp_replies += b.icmp_replies;
			pend.http_replies += b.http_replies;
			pend.tcp_replies += b.tcp_replies;
			pend.send_errors += b.not_posted;
			pend.batches++;
			(void)gpp_publish(q, &sem_idx, &pend);
		}
		batch++;
	}
	if (tid == 0) {
		uint64_t end = doca_gpu_dev_eth_query_globaltimer() + GPP_GPU_FLUSH_NS;

		/* the replies still in flight: their completions (bounded); the rest unconfirmed */
		while (proto != GPP_GPU_UDP && tx.done < tx.posted &&
		       doca_gpu_dev_eth_query_globaltimer() < end)
			if (gpp_consume_one(q, &tx, DOCA_GPUNETIO_ETH_WAIT_FLAG_NB) < 0)
				break;
		pend.sent += tx.sent;
		pend.send_errors += tx.errors + (uint32_t)(tx.posted - tx.done);
		/* the CPU drains the ring until every kernel has ended: wait (bounded) for an item */
		end = doca_gpu_dev_eth_query_globaltimer() + GPP_GPU_FLUSH_NS;
		while (!gpp_publish(q, &sem_idx, &pend) &&
		       doca_gpu_dev_eth_query_globaltimer() < end)
			__nanosleep(10000);
		{
			const uint64_t *src = (const uint64_t *)&tm;
			volatile uint64_t *dst = (volatile uint64_t *)q.timing;

			for (uint32_t i = 0; i < sizeof(tm) / sizeof(uint64_t); i++)
				dst[i] = src[i];
		}
		if (pend.batches != 0 || pend.sent != 0 || pend.send_errors != 0) {
			const uint32_t *src = (const uint32_t *)&pend;
			volatile uint32_t *dst = (volatile uint32_t *)q.residual;

			for (uint32_t i = 0; i < sizeof(pend) / sizeof(uint32_t); i++)
				dst[i] = src[i];
			__threadfence_system();
		}
	}
}

/* ---- host side ------------------------------------------------------------------------------ */

extern "C" doca_error_t gpp_cuda_init(char *gpu_pcie, size_t len)
{
	cudaError_t e;
	int dev = 0;

	if (gpu_pcie[0] == '\0')
		e = cudaDeviceGetPCIBusId(gpu_pcie, (int)len, 0);
	else
		e = cudaDeviceGetByPCIBusId(&dev, gpu_pcie);
	if (e == cudaSuccess)
		e = cudaSetDevice(dev);
	if (e == cudaSuccess)
		e = cudaFree(0); /* makes the primary context current */
	if (e != cudaSuccess) {
		DOCA_LOG_ERR("CUDA device %s: %s", gpu_pcie[0] ? gpu_pcie : "0",
			     cudaGetErrorString(e));
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

extern "C" doca_error_t gpp_cuda_stream_create(void **stream)
{
	cudaStream_t s;
	cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

	if (e != cudaSuccess) {
		DOCA_LOG_ERR("cudaStreamCreateWithFlags: %s", cudaGetErrorString(e));
		return DOCA_ERROR_DRIVER;
	}
	*stream = s;
	return DOCA_SUCCESS;
}

extern "C" doca_error_t gpp_cuda_stream_wait(void *stream, double timeout_s)
{
	const struct timespec nap = {0, 1000000};
	long ms = (long)(timeout_s * 1000);

	for (long i = 0;; i++) {
		cudaError_t e = cudaStreamQuery((cudaStream_t)stream);

		if (e == cudaSuccess)
			return DOCA_SUCCESS;
		if (e != cudaErrorNotReady) {
			DOCA_LOG_ERR("a kernel failed: %s", cudaGetErrorString(e));
			return DOCA_ERROR_DRIVER;
		}
		if (i >= ms)
			return DOCA_ERROR_TIME_OUT;
		nanosleep(&nap, NULL);
	}
}

extern "C" void gpp_cuda_stream_destroy(void *stream)
{
	if (stream != NULL)
		cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" doca_error_t gpp_cuda_stream_status(void *stream)
{
	cudaError_t e = cudaStreamQuery((cudaStream_t)stream);

	if (e == cudaSuccess || e == cudaErrorNotReady)
		return e == cudaSuccess ? DOCA_SUCCESS : DOCA_ERROR_IN_PROGRESS;
	DOCA_LOG_ERR("a kernel failed: %s", cudaGetErrorString(e));
	return DOCA_ERROR_DRIVER;
}

extern "C" doca_error_t gpp_kernels_load(void)
{
	/*
	 * Every kernel loaded before the first runs: with CUDA's lazy loading (the default) a
	 * kernel is loaded at its first launch, and loading one while a persistent kernel runs
	 * waits for that kernel to end (never). DOCA's application launches each kernel once with
	 * the exit flag set for the same reason.
	 */
	cudaFuncAttributes fa;
	cudaError_t e = cudaFuncGetAttributes(&fa, gpp_kernel<GPP_GPU_UDP>);

	if (e == cudaSuccess)
		e = cudaFuncGetAttributes(&fa, gpp_kernel<GPP_GPU_TCP>);
	if (e == cudaSuccess)
		e = cudaFuncGetAttributes(&fa, gpp_kernel<GPP_GPU_ICMP>);
	if (e != cudaSuccess) {
		DOCA_LOG_ERR("loading the kernels: %s", cudaGetErrorString(e));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

extern "C" doca_error_t gpp_kernel_launch(enum gpp_gpu_proto proto, void *stream,
					  const struct gpp_gpu_queue *q)
{
	cudaStream_t s = (cudaStream_t)stream;
	cudaError_t e;

	if (proto == GPP_GPU_UDP)
		gpp_kernel<GPP_GPU_UDP><<<1, GPP_GPU_THREADS, 0, s>>>(*q);
	else if (proto == GPP_GPU_TCP)
		gpp_kernel<GPP_GPU_TCP><<<1, GPP_GPU_THREADS, 0, s>>>(*q);
	else
		gpp_kernel<GPP_GPU_ICMP><<<1, GPP_GPU_THREADS, 0, s>>>(*q);
	e = cudaGetLastError();
	if (e != cudaSuccess) {
		DOCA_LOG_ERR("launching a kernel: %s", cudaGetErrorString(e));
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}
