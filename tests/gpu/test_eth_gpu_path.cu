/*
 * GPU test: the GPU data path of libdoca_eth's queues, at the level of the ring (no device API
 * headers): two loop devices, A and B.
 *  - RX, device memory: B's CYCLIC rxq on the GPU data path, back-pressured, its packet buffer
 *    in device memory (the copy engine path); A's CPU txq sends N frames with sequence numbers;
 *    a persistent single-thread kernel polls the ring through the GPU handle, checks every
 *    frame's bytes at pkt_addr + slot * stride, and records each sequence number: every one
 *    exactly once, in order.
 *  - RX, mapped host memory (CPU_GPU packet buffer: frames written in place), same checks.
 *  - RX, CYCLIC with a kernel that starts late: the ring keeps the newest frames; what the
 *    kernel sees plus the overwrite counter is exactly N.
 *  - TX: B's txq on the GPU data path with completions on the GPU; a kernel posts N frames from
 *    device memory, flagged NOTIFY, and waits for their completions; A's CPU rxq receives every
 *    frame byte for byte.
 *  - The handle calls' wrong states: BAD_STATE before start, NOT_SUPPORTED on a CPU queue.
 * Exits 77 only when /dev/nvidiactl is absent; any other CUDA failure is a failure.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <vector>

#include "softdpu/sdp_gpu_eth.h"

#include "ladder_common.h" /* the CPU queue helpers (it declares no device API) */

#define FLEN 128
#define NFRAMES 20000
#define RING 256

static __host__ __device__ void frame_fill(uint8_t *b, uint32_t seq, uint32_t len)
{
	const uint8_t hdr[14] = {2, 0, 0, 0, 0, 0xb, 2, 0, 0, 0, 0, 0xa, 0x88, 0xb5};

	for (int k = 0; k < 14; k++)
		b[k] = hdr[k];
	b[14] = (uint8_t)seq;
	b[15] = (uint8_t)(seq >> 8);
	b[16] = (uint8_t)(seq >> 16);
	b[17] = (uint8_t)(seq >> 24);
	for (uint32_t k = 18; k < len; k++)
		b[k] = (uint8_t)(seq * 7 + k);
}

static __device__ uint32_t frame_seq(const uint8_t *b)
{
	return (uint32_t)b[14] | (uint32_t)b[15] << 8 | (uint32_t)b[16] << 16 |
	       (uint32_t)b[17] << 24;
}

static __device__ uint64_t gtime(void)
{
	uint64_t t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

struct rx_result {
	uint32_t got; /* frames seen */
	uint32_t bad; /* frames whose bytes or length were wrong */
	uint32_t out_of_order;
	uint32_t first_seq;
	uint32_t last_seq;
};

/* One thread: poll the ring through the handle until `want` frames or the time limit. */
__global__ void rx_kernel(const struct doca_gpu_eth_rxq *h, uint32_t want, uint64_t limit_ns,
			  uint32_t start_delay_ms, struct rx_result *res, uint32_t *seen)
{
	struct sdp_ring_hdr *r = (struct sdp_ring_hdr *)h->ring;
	const uint8_t *pkts = (const uint8_t *)h->pkt_addr;
	uint64_t t0 = gtime(), end = t0 + limit_ns;
	uint32_t expect = 0;
	bool cyclic = !(h->flags & SDP_GPU_ETH_RXQ_F_BACKPRESSURE);

	if (h->magic != SDP_GPU_ETH_RXQ_MAGIC) {
		res->bad = 0xffffffffu;
		return;
	}
	while (gtime() < t0 + (uint64_t)start_delay_ms * 1000000ull)
		;
	while (res->got < want && gtime() < end) {
		uint32_t first = 0;
		uint32_t n = sdp_ring_rx_poll(r, 64, 1000, &first);

		for (uint32_t i = 0; i < n; i++) {
			const struct sdp_ring_cqe *c = sdp_ring_rx_cqe(r, first + i);
			const uint8_t *p = pkts + (size_t)c->slot * h->max_pkt_sz;
			uint32_t seq = frame_seq(p);
			bool ok = c->len == FLEN;

			for (uint32_t k = 18; ok && k < FLEN; k++)
				ok = p[k] == (uint8_t)(seq * 7 + k);
			if (!ok)
				res->bad++;
			if (res->got == 0)
				res->first_seq = seq;
			else if (seq <= res->last_seq)
				res->out_of_order++;
			if (!cyclic && seq != expect)
				res->out_of_order++;
			expect = seq + 1;
			res->last_seq = seq;
			if (seq < NFRAMES)
				seen[seq]++;
			res->got++;
		}
		if (n > 0)
			sdp_ring_rx_release(r, first + n);
	}
}

/* One thread: post n frames (in device memory) on the GPU send queue, then wait for them. */
__global__ void tx_kernel(const struct doca_gpu_eth_txq *h, const uint8_t *frames, uint32_t n,
			  uint64_t limit_ns, uint32_t *posted, uint32_t *completed,
			  uint32_t *errors)
{
	struct sdp_ring_tx_hdr *r = (struct sdp_ring_tx_hdr *)h->ring;
	uint64_t end = gtime() + limit_ns;
	struct sdp_ring_txc c[32];

	while ((*posted < n || *completed < n) && gtime() < end) {
		uint32_t m;

		if (*posted < n) {
			uint32_t first = 0;

			if (sdp_ring_tx_reserve(r, 1, &first) == 1) {
				struct sdp_ring_txd *d = sdp_ring_tx_desc(r, first);

				d->addr = (uint64_t)(uintptr_t)(frames + (size_t)*posted * FLEN);
				d->len = FLEN;
				d->flags = SDP_RING_TXD_F_NOTIFY;
				d->send_ts_ns = 0;
				d->user = *posted;
				sdp_ring_tx_submit(r, first + 1);
				(*posted)++;
			}
		}
		m = sdp_ring_tx_poll_cmpl(r, c, 32);
		for (uint32_t i = 0; i < m; i++)
			if (c[i].status != 0)
				(*errors)++;
		*completed += m;
	}
}

/* ---- host side ------------------------------------------------------------------------------ */

static struct doca_pe *g_pe;
static struct doca_dev *g_a, *g_b;
static struct doca_gpu *g_gpu;
static struct doca_buf_inventory *g_inv;
static struct doca_mmap *g_host_mmap;
static uint8_t *g_host_mem;
static int g_recv, g_recv_bad;

/* Send n frames with seq 0..n-1 from A's CPU txq (tasks recycled as they complete). */
static void cpu_send(struct doca_eth_txq *txq, uint32_t n)
{
	int before = ladder_sent;
	double end = host_now_s() + 60;

	for (uint32_t i = 0; i < n && host_now_s() < end;) {
		struct doca_eth_txq_task_send *t = NULL;
		struct doca_buf *b = NULL;
		uint8_t *mem = g_host_mem + (size_t)(i % 512) * FLEN;

		if ((int)i - (ladder_sent - before) >= 512) {
			if (!doca_pe_progress(g_pe))
				usleep(50);
			continue;
		}
		frame_fill(mem, i, FLEN);
		CHECK(doca_buf_inventory_buf_get_by_data(g_inv, g_host_mmap, mem, FLEN, &b));
		CHECK(doca_eth_txq_task_send_allocate_init(txq, b, (union doca_data){0}, &t));
		CHECK(doca_task_submit(doca_eth_txq_task_send_as_doca_task(t)));
		i++;
	}
	while (ladder_sent - before < (int)n && host_now_s() < end)
		if (!doca_pe_progress(g_pe))
			usleep(50);
	if (ladder_sent - before != (int)n)
		FAIL("sent %d of %u frames", ladder_sent - before, n);
}

static struct doca_eth_txq *cpu_txq(struct doca_dev *dev)
{
	return ladder_cpu_txq_start(dev, 1024, 1024, g_pe);
}

static void stop_destroy_txq(struct doca_eth_txq *txq)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	doca_error_t s = doca_ctx_stop(doca_eth_txq_as_doca_ctx(txq));

	if (s != DOCA_SUCCESS && s != DOCA_ERROR_IN_PROGRESS)
		FAIL("txq stop: %s", doca_error_get_name(s));
	for (int k = 0; k < 5000 && st != DOCA_CTX_STATE_IDLE; k++) {
		(void)doca_pe_progress(g_pe);
		(void)doca_ctx_get_state(doca_eth_txq_as_doca_ctx(txq), &st);
		usleep(200);
	}
	CHECK(doca_eth_txq_destroy(txq));
}

/*
 * RX through the GPU data path. mtype: where the packet buffer lives. cyclic: CYCLIC with a
 * kernel that starts only after everything was sent.
 */
static void test_rx(enum doca_gpu_mem_type mtype, bool cyclic)
{
	struct doca_eth_rxq *rxq = NULL;
	struct doca_gpu_eth_rxq *h = NULL;
	struct doca_mmap *mmap = NULL;
	struct doca_eth_txq *txq;
	struct rx_result *res;
	struct sdp_eth_rxq_counters rc;
	uint32_t *seen;
	void *pkt_gpu = NULL, *pkt_cpu = NULL;
	size_t size = (size_t)RING * 256;
	uint32_t dups = 0, missing = 0;

	CHECK(doca_gpu_mem_alloc(g_gpu, size, 65536, mtype, &pkt_gpu,
				 mtype == DOCA_GPU_MEM_TYPE_GPU ? NULL : &pkt_cpu));
	CHECK(doca_mmap_create(&mmap));
	CHECK(doca_mmap_set_memrange(mmap, pkt_gpu, size));
	CHECK(doca_mmap_add_dev(mmap, g_b));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_eth_rxq_create(g_b, RING, 256, &rxq));
	CHECK(doca_eth_rxq_set_type(rxq, DOCA_ETH_RXQ_TYPE_CYCLIC));
	CHECK(doca_eth_rxq_set_pkt_buf(rxq, mmap, 0, (uint32_t)size));
	CHECK(sdp_eth_rxq_set_overflow(rxq, cyclic ? SDP_ETH_OVERFLOW_CYCLIC :
						     SDP_ETH_OVERFLOW_BACKPRESSURE));
	CHECK_STATUS(doca_eth_rxq_get_gpu_handle(rxq, &h), DOCA_ERROR_BAD_STATE);
	CHECK(doca_eth_rxq_gpu_enable_mcst_qp(rxq));
	CHECK(doca_ctx_set_datapath_on_gpu(doca_eth_rxq_as_doca_ctx(rxq), g_gpu));
	CHECK(doca_ctx_start(doca_eth_rxq_as_doca_ctx(rxq)));
	CHECK(doca_eth_rxq_get_gpu_handle(rxq, &h));
	CHECK(doca_eth_rxq_gpu_cpu_proxy_progress(rxq));

	CHECK_CUDA(cudaMallocManaged(&res, sizeof(*res)));
	CHECK_CUDA(cudaMallocManaged(&seen, sizeof(uint32_t) * NFRAMES));
	std::memset(res, 0, sizeof(*res));
	std::memset(seen, 0, sizeof(uint32_t) * NFRAMES);
	txq = cpu_txq(g_a);
	if (cyclic) {
		/* everything is sent before the kernel looks: the ring keeps the newest RING */
		cpu_send(txq, NFRAMES);
		usleep(200000);
		rx_kernel<<<1, 1>>>(h, RING, 2000000000ull, 0, res, seen);
	} else {
		rx_kernel<<<1, 1>>>(h, NFRAMES, 60000000000ull, 0, res, seen);
		cpu_send(txq, NFRAMES);
	}
	CHECK_CUDA(cudaDeviceSynchronize());
	CHECK(sdp_eth_rxq_get_counters(rxq, &rc));
	for (uint32_t i = 0; i < NFRAMES; i++) {
		if (seen[i] > 1)
			dups++;
		if (seen[i] == 0)
			missing++;
	}
	std::printf("rx %s %s: kernel saw %u (bad %u, out of order %u, dups %u, missing %u); ring "
		    "packets %llu overwrites %llu drops %llu ring-full %llu\n",
		    mtype == DOCA_GPU_MEM_TYPE_GPU ? "device-memory" : "mapped-host",
		    cyclic ? "CYCLIC" : "BACKPRESSURE", res->got, res->bad, res->out_of_order, dups,
		    missing, (unsigned long long)rc.ring_packets, (unsigned long long)rc.overwrites,
		    (unsigned long long)rc.drops, (unsigned long long)rc.ring_full);
	if (res->bad != 0 || res->out_of_order != 0 || dups != 0)
		FAIL("frames seen wrong");
	if (cyclic) {
		/* seen + overwritten == sent; the survivors are the newest */
		if (res->got + rc.overwrites != NFRAMES || res->got != RING ||
		    res->first_seq != NFRAMES - RING)
			FAIL("CYCLIC: seen %u + overwritten %llu != %u (first %u)", res->got,
			     (unsigned long long)rc.overwrites, NFRAMES, res->first_seq);
	} else if (res->got != NFRAMES || missing != 0 || rc.drops != 0 || rc.overwrites != 0) {
		FAIL("BACKPRESSURE: seen %u of %u", res->got, NFRAMES);
	}
	stop_destroy_txq(txq);
	CHECK(doca_ctx_stop(doca_eth_rxq_as_doca_ctx(rxq)));
	CHECK(doca_eth_rxq_destroy(rxq));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_gpu_mem_free(g_gpu, pkt_gpu));
	CHECK_CUDA(cudaFree(res));
	CHECK_CUDA(cudaFree(seen));
}

static void recv_ok(struct doca_eth_rxq_task_recv *t, union doca_data u, union doca_data c)
{
	struct doca_buf *b = NULL;
	void *data = NULL;
	size_t len = 0;
	uint8_t want[FLEN];

	(void)u;
	(void)c;
	(void)doca_eth_rxq_task_recv_get_pkt(t, &b);
	(void)doca_buf_get_data(b, &data);
	(void)doca_buf_get_data_len(b, &len);
	frame_fill(want, (uint32_t)g_recv, FLEN);
	if (len != FLEN || std::memcmp(data, want, FLEN) != 0)
		g_recv_bad++;
	g_recv++;
	if (doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t)) != DOCA_SUCCESS)
		g_recv_bad++;
}

static void recv_err(struct doca_eth_rxq_task_recv *t, union doca_data u, union doca_data c)
{
	struct doca_buf *b = NULL;

	(void)u;
	(void)c;
	(void)doca_eth_rxq_task_recv_get_pkt(t, &b);
	(void)doca_buf_dec_refcount(b, NULL);
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(t));
}

/* TX through the GPU data path: a kernel sends frames from device memory to A's CPU rxq. */
static void test_tx(uint32_t n)
{
	struct doca_eth_txq *txq = NULL, *cpu = NULL;
	struct doca_eth_rxq *rxq = NULL;
	struct doca_gpu_eth_txq *h = NULL;
	struct sdp_eth_txq_counters tc;
	std::vector<uint8_t> frames((size_t)n * FLEN);
	void *fr_gpu = NULL;
	uint32_t *ctr;
	double end;

	for (uint32_t i = 0; i < n; i++)
		frame_fill(frames.data() + (size_t)i * FLEN, i, FLEN);
	CHECK(doca_gpu_mem_alloc(g_gpu, frames.size(), 0, DOCA_GPU_MEM_TYPE_GPU, &fr_gpu, NULL));
	CHECK_CUDA(cudaMemcpy(fr_gpu, frames.data(), frames.size(), cudaMemcpyHostToDevice));

	/* A receives on the CPU */
	rxq = ladder_cpu_rxq_start(g_a, 512, recv_ok, recv_err, 256, g_pe, g_inv, g_host_mmap,
				   g_host_mem + (size_t)1024 * 2048);
	/* a CPU queue has no GPU handle */
	cpu = cpu_txq(g_b);
	{
		struct doca_gpu_eth_txq *none = NULL;

		CHECK_STATUS(doca_eth_txq_get_gpu_handle(cpu, &none), DOCA_ERROR_NOT_SUPPORTED);
	}
	stop_destroy_txq(cpu);

	CHECK(doca_eth_txq_create(g_b, 1024, &txq));
	CHECK_STATUS(doca_eth_txq_get_gpu_handle(txq, &h), DOCA_ERROR_BAD_STATE);
	CHECK(doca_eth_txq_gpu_set_completion_on_gpu(txq));
	CHECK(doca_ctx_set_datapath_on_gpu(doca_eth_txq_as_doca_ctx(txq), g_gpu));
	CHECK(doca_ctx_start(doca_eth_txq_as_doca_ctx(txq)));
	CHECK(doca_eth_txq_get_gpu_handle(txq, &h));
	CHECK_CUDA(cudaMallocManaged(&ctr, 3 * sizeof(uint32_t)));
	std::memset(ctr, 0, 3 * sizeof(uint32_t));
	tx_kernel<<<1, 1>>>(h, (const uint8_t *)fr_gpu, n, 60000000000ull, ctr, ctr + 1, ctr + 2);
	end = host_now_s() + 60;
	while (g_recv < (int)n && host_now_s() < end)
		if (!doca_pe_progress(g_pe))
			usleep(50);
	CHECK_CUDA(cudaDeviceSynchronize());
	CHECK(sdp_eth_txq_get_counters(txq, &tc));
	std::printf("tx: kernel posted %u, completed %u (errors %u); peer received %d (bad %d); "
		    "txq packets %llu\n",
		    ctr[0], ctr[1], ctr[2], g_recv, g_recv_bad, (unsigned long long)tc.packets);
	if (ctr[0] != n || ctr[1] != n || ctr[2] != 0 || g_recv != (int)n || g_recv_bad != 0 ||
	    tc.packets != n)
		FAIL("GPU send of %u frames", n);
	stop_destroy_txq(txq);
	{
		doca_error_t s = doca_ctx_stop(doca_eth_rxq_as_doca_ctx(rxq));
		enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

		if (s != DOCA_SUCCESS && s != DOCA_ERROR_IN_PROGRESS)
			FAIL("rxq stop: %s", doca_error_get_name(s));
		for (int k = 0; k < 5000 && st != DOCA_CTX_STATE_IDLE; k++) {
			(void)doca_pe_progress(g_pe);
			(void)doca_ctx_get_state(doca_eth_rxq_as_doca_ctx(rxq), &st);
			usleep(200);
		}
	}
	CHECK(doca_eth_rxq_destroy(rxq));
	CHECK(doca_gpu_mem_free(g_gpu, fr_gpu));
	CHECK_CUDA(cudaFree(ctr));
}

int main(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	char decls[256], na[32], nb[32], bus[32];

	gpu_check_require_driver();
	CHECK_CUDA(cudaFree(0));
	CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0));
	CHECK(doca_gpu_create(bus, &g_gpu));

	std::snprintf(na, sizeof(na), "ga%d", (int)getpid());
	std::snprintf(nb, sizeof(nb), "gb%d", (int)getpid());
	std::snprintf(decls, sizeof(decls),
		      "loop:name=%s,peer=%s,depth=4096;loop:name=%s,peer=%s,"
		      "depth=4096",
		      na, nb, nb, na);
	setenv("SOFTDPU_DEVICES", decls, 1);
	setenv("SOFTDPU_DEVICE_CONFIG", "", 1);
	CHECK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n; i++) {
		char name[64] = "";

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) != DOCA_SUCCESS)
			continue;
		if (std::strcmp(name, na) == 0)
			CHECK(doca_dev_open(list[i], &g_a));
		else if (std::strcmp(name, nb) == 0)
			CHECK(doca_dev_open(list[i], &g_b));
	}
	if (g_a == NULL || g_b == NULL) {
		FAIL("loop devices %s/%s not listed", na, nb);
		return 1;
	}
	CHECK(doca_pe_create(&g_pe));
	g_host_mem = (uint8_t *)std::aligned_alloc(4096, (size_t)(1024 + 256) * 2048);
	CHECK(doca_mmap_create(&g_host_mmap));
	CHECK(doca_mmap_set_memrange(g_host_mmap, g_host_mem, (size_t)(1024 + 256) * 2048));
	CHECK(doca_mmap_add_dev(g_host_mmap, g_a));
	CHECK(doca_mmap_add_dev(g_host_mmap, g_b));
	CHECK(doca_mmap_start(g_host_mmap));
	CHECK(doca_buf_inventory_create(2048, &g_inv));
	CHECK(doca_buf_inventory_start(g_inv));

	test_rx(DOCA_GPU_MEM_TYPE_GPU, false);
	test_rx(DOCA_GPU_MEM_TYPE_CPU_GPU, false);
	test_rx(DOCA_GPU_MEM_TYPE_GPU, true);
	test_tx(5000);

	ladder_host_bufs_destroy(g_host_mmap, g_inv);
	std::free(g_host_mem);
	CHECK(doca_pe_destroy(g_pe));
	CHECK(doca_dev_close(g_a));
	CHECK(doca_dev_close(g_b));
	CHECK(doca_devinfo_destroy_list(list));
	CHECK(doca_gpu_destroy(g_gpu));
	std::printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}
