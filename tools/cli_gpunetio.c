/*
 * The CPU side shared by `softdpu ladder gpunetio` and `softdpu rollback gpunetio`
 * (cli_gpunetio.h): the tool's own devices, CPU data path queues, frames.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_eth_rxq.h"
#include "doca_eth_rxq_cpu_data_path.h"
#include "doca_eth_txq.h"
#include "doca_eth_txq_cpu_data_path.h"
#include "doca_mmap.h"
#include "doca_pe.h"
#include "doca_eth_rxq_gpu_data_path.h"
#include "doca_eth_txq_gpu_data_path.h"
#include "doca_gpunetio.h"
#include "softdpu/eth.h"
#include "softdpu/gpunetio_rollback.h"

#include "cli_gpunetio.h"

#define SLOT 2048u
#define MAX_TASKS 256u

double cg_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nap_us(long us)
{
	nanosleep(&(struct timespec){.tv_nsec = us * 1000}, NULL);
}

static char cg_names[5][CG_NAME_LEN];
static const char *const cg_tags[5] = {"one", "burst", "rate", "a", "b"};

void cg_declare_devices(uint32_t burst, uint32_t rate_pps)
{
	const char *old = getenv("SOFTDPU_DEVICES");
	int pid = (int)getpid();
	char *decls = NULL;
	size_t n;

	for (int k = 0; k < 5; k++)
		snprintf(cg_names[k], CG_NAME_LEN, "sdpgn%s%d", cg_tags[k], pid);
	n = (size_t)snprintf(
		NULL, 0,
		"%s%sgen:name=%s,size=%d,count=1;gen:name=%s,size=%d,count=%u;"
		"gen:name=%s,size=%d,rate=%u;loop:name=%s,peer=%s;loop:name=%s,peer=%s",
		old ? old : "", old && old[0] ? ";" : "", cg_names[0], CG_FRAME_LEN, cg_names[1],
		CG_FRAME_LEN, burst, cg_names[2], CG_FRAME_LEN, rate_pps, cg_names[3], cg_names[4],
		cg_names[4], cg_names[3]);
	decls = malloc(n + 1);
	if (decls == NULL)
		return;
	snprintf(decls, n + 1,
		 "%s%sgen:name=%s,size=%d,count=1;gen:name=%s,size=%d,count=%u;"
		 "gen:name=%s,size=%d,rate=%u;loop:name=%s,peer=%s;loop:name=%s,peer=%s",
		 old ? old : "", old && old[0] ? ";" : "", cg_names[0], CG_FRAME_LEN, cg_names[1],
		 CG_FRAME_LEN, burst, cg_names[2], CG_FRAME_LEN, rate_pps, cg_names[3], cg_names[4],
		 cg_names[4], cg_names[3]);
	setenv("SOFTDPU_DEVICES", decls, 1);
	free(decls);
}

const char *cg_dev_name(const char *tag)
{
	for (int k = 0; k < 5; k++)
		if (strcmp(tag, cg_tags[k]) == 0)
			return cg_names[k];
	return "";
}

doca_error_t cg_open(const char *name, struct doca_dev **dev)
{
	struct doca_devinfo **list = NULL;
	doca_error_t s = DOCA_ERROR_NOT_FOUND;
	uint32_t n = 0;

	*dev = NULL;
	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n && *dev == NULL; i++) {
		char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";

		if (doca_devinfo_get_ibdev_name(list[i], ibdev, sizeof(ibdev)) == DOCA_SUCCESS &&
		    strcmp(ibdev, name) == 0)
			s = doca_dev_open(list[i], dev);
	}
	doca_devinfo_destroy_list(list);
	return s;
}

/* ---- CPU receive queue ---- */

static void rx_ok(struct doca_eth_rxq_task_recv *task, union doca_data u, union doca_data c)
{
	struct cg_rxq *q = u.ptr;
	struct doca_task *t = doca_eth_rxq_task_recv_as_doca_task(task);
	struct doca_buf *pkt = NULL;
	void *data = NULL;
	size_t len = 0;

	(void)c;
	if (doca_eth_rxq_task_recv_get_pkt(task, &pkt) == DOCA_SUCCESS && pkt != NULL &&
	    doca_buf_get_data(pkt, &data) == DOCA_SUCCESS &&
	    doca_buf_get_data_len(pkt, &len) == DOCA_SUCCESS) {
		if (q->received == 0) {
			q->first_len = (uint32_t)len;
			memcpy(q->first, data, len < sizeof(q->first) ? len : sizeof(q->first));
		}
		q->received++;
		(void)doca_buf_reset_data_len(pkt);
	}
	if (q->no_repost || doca_task_submit(t) != DOCA_SUCCESS) {
		if (pkt != NULL)
			(void)doca_buf_dec_refcount(pkt, NULL);
		doca_task_free(t);
	}
}

static void rx_err(struct doca_eth_rxq_task_recv *task, union doca_data u, union doca_data c)
{
	struct cg_rxq *q = u.ptr;
	struct doca_task *t = doca_eth_rxq_task_recv_as_doca_task(task);
	doca_error_t st = doca_task_get_status(t);
	struct doca_buf *pkt = NULL;

	(void)c;
	if (st != DOCA_ERROR_IO_FAILED) {
		q->errors++;
		q->last_error = st;
	}
	if (doca_eth_rxq_task_recv_get_pkt(task, &pkt) == DOCA_SUCCESS && pkt != NULL)
		(void)doca_buf_dec_refcount(pkt, NULL);
	doca_task_free(t);
}

doca_error_t cg_rxq_post(struct cg_rxq *q)
{
	for (uint32_t i = 0; i < q->tasks; i++) {
		struct doca_eth_rxq_task_recv *t = NULL;
		struct doca_buf *b = NULL;
		doca_error_t s;

		s = doca_buf_inventory_buf_get_by_addr(q->inv, q->mmap, q->mem + (size_t)i * SLOT,
						       SLOT, &b);
		if (s == DOCA_SUCCESS)
			s = doca_eth_rxq_task_recv_allocate_init(q->rxq, b,
								 (union doca_data){.ptr = q}, &t);
		if (s == DOCA_SUCCESS)
			s = doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t));
		if (s != DOCA_SUCCESS)
			return s;
	}
	return DOCA_SUCCESS;
}

doca_error_t cg_rxq_start(struct doca_dev *dev, uint32_t ring_slots, int cyclic, uint32_t tasks,
			  int post, struct cg_rxq *q)
{
	doca_error_t s;

	memset(q, 0, sizeof(*q));
	q->tasks = tasks < 1 ? 1 : tasks > MAX_TASKS ? MAX_TASKS : tasks;
	q->mem = aligned_alloc(4096, (size_t)MAX_TASKS * SLOT);
	if (q->mem == NULL)
		return DOCA_ERROR_NO_MEMORY;
	s = doca_pe_create(&q->pe);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_create(&q->mmap);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_set_memrange(q->mmap, q->mem, (size_t)MAX_TASKS * SLOT);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_add_dev(q->mmap, dev);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_start(q->mmap);
	if (s == DOCA_SUCCESS)
		s = doca_buf_inventory_create(MAX_TASKS, &q->inv);
	if (s == DOCA_SUCCESS)
		s = doca_buf_inventory_start(q->inv);
	if (s == DOCA_SUCCESS)
		s = doca_eth_rxq_create(dev, q->tasks, SLOT, &q->rxq);
	if (s == DOCA_SUCCESS)
		s = doca_eth_rxq_set_type(q->rxq, DOCA_ETH_RXQ_TYPE_REGULAR);
	if (s == DOCA_SUCCESS && ring_slots != 0)
		s = sdp_eth_rxq_set_ring_size(q->rxq, ring_slots);
	if (s == DOCA_SUCCESS && cyclic)
		s = sdp_eth_rxq_set_overflow(q->rxq, SDP_ETH_OVERFLOW_CYCLIC);
	if (s == DOCA_SUCCESS)
		s = doca_eth_rxq_task_recv_set_conf(q->rxq, rx_ok, rx_err, q->tasks);
	if (s == DOCA_SUCCESS)
		s = doca_pe_connect_ctx(q->pe, doca_eth_rxq_as_doca_ctx(q->rxq));
	if (s == DOCA_SUCCESS)
		s = doca_ctx_start(doca_eth_rxq_as_doca_ctx(q->rxq));
	if (s == DOCA_SUCCESS && post)
		s = cg_rxq_post(q);
	if (s != DOCA_SUCCESS)
		cg_rxq_stop(q);
	return s;
}

void cg_rxq_progress(struct cg_rxq *q, double seconds, uint64_t want)
{
	double end = cg_now_s() + seconds;

	while (cg_now_s() < end && (want == 0 || q->received < want)) {
		if (doca_pe_progress(q->pe) == 0)
			nap_us(100);
	}
}

void cg_rxq_stop(struct cg_rxq *q)
{
	if (q->rxq != NULL) {
		struct doca_ctx *ctx = doca_eth_rxq_as_doca_ctx(q->rxq);
		enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;
		double end = cg_now_s() + 5;

		if (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != DOCA_CTX_STATE_IDLE) {
			(void)doca_ctx_stop(ctx);
			while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS &&
			       st != DOCA_CTX_STATE_IDLE && cg_now_s() < end)
				if (doca_pe_progress(q->pe) == 0)
					nap_us(100);
		}
		(void)doca_eth_rxq_destroy(q->rxq);
	}
	if (q->inv != NULL) {
		(void)doca_buf_inventory_stop(q->inv);
		(void)doca_buf_inventory_destroy(q->inv);
	}
	if (q->mmap != NULL)
		(void)doca_mmap_destroy(q->mmap);
	if (q->pe != NULL)
		(void)doca_pe_destroy(q->pe);
	free(q->mem);
	q->rxq = NULL;
	q->inv = NULL;
	q->mmap = NULL;
	q->pe = NULL;
	q->mem = NULL;
}

/* ---- CPU send of one frame ---- */

static int tx_done_count;
static doca_error_t tx_status;

static void tx_done(struct doca_eth_txq_task_send *t, union doca_data u, union doca_data c)
{
	struct doca_task *task = doca_eth_txq_task_send_as_doca_task(t);
	struct doca_buf *b = NULL;

	(void)u;
	(void)c;
	tx_status = doca_task_get_status(task);
	(void)doca_eth_txq_task_send_get_pkt(t, &b);
	if (b != NULL)
		(void)doca_buf_dec_refcount(b, NULL);
	doca_task_free(task);
	tx_done_count++;
}

doca_error_t cg_cpu_send_one(struct doca_dev *dev, const uint8_t *frame, uint32_t len)
{
	struct doca_pe *pe = NULL;
	struct doca_mmap *mmap = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_eth_txq *txq = NULL;
	struct doca_eth_txq_task_send *t = NULL;
	struct doca_buf *b = NULL;
	uint8_t *mem = aligned_alloc(4096, 4096);
	doca_error_t s;
	double end;

	if (mem == NULL)
		return DOCA_ERROR_NO_MEMORY;
	memcpy(mem, frame, len);
	tx_done_count = 0;
	tx_status = DOCA_ERROR_TIME_OUT;
	s = doca_pe_create(&pe);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_create(&mmap);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_set_memrange(mmap, mem, 4096);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_add_dev(mmap, dev);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_start(mmap);
	if (s == DOCA_SUCCESS)
		s = doca_buf_inventory_create(4, &inv);
	if (s == DOCA_SUCCESS)
		s = doca_buf_inventory_start(inv);
	if (s == DOCA_SUCCESS)
		s = doca_eth_txq_create(dev, 16, &txq);
	if (s == DOCA_SUCCESS)
		s = doca_eth_txq_task_send_set_conf(txq, tx_done, tx_done, 4);
	if (s == DOCA_SUCCESS)
		s = doca_pe_connect_ctx(pe, doca_eth_txq_as_doca_ctx(txq));
	if (s == DOCA_SUCCESS)
		s = doca_ctx_start(doca_eth_txq_as_doca_ctx(txq));
	if (s == DOCA_SUCCESS)
		s = doca_buf_inventory_buf_get_by_data(inv, mmap, mem, len, &b);
	if (s == DOCA_SUCCESS)
		s = doca_eth_txq_task_send_allocate_init(txq, b, (union doca_data){0}, &t);
	if (s == DOCA_SUCCESS)
		s = doca_task_submit(doca_eth_txq_task_send_as_doca_task(t));
	end = cg_now_s() + 5;
	while (s == DOCA_SUCCESS && tx_done_count == 0 && cg_now_s() < end)
		if (doca_pe_progress(pe) == 0)
			nap_us(100);
	if (s == DOCA_SUCCESS)
		s = tx_status;
	if (txq != NULL) {
		struct doca_ctx *ctx = doca_eth_txq_as_doca_ctx(txq);
		enum doca_ctx_states st = DOCA_CTX_STATE_IDLE;

		end = cg_now_s() + 5;
		if (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != DOCA_CTX_STATE_IDLE) {
			(void)doca_ctx_stop(ctx);
			while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS &&
			       st != DOCA_CTX_STATE_IDLE && cg_now_s() < end)
				if (doca_pe_progress(pe) == 0)
					nap_us(100);
		}
		(void)doca_eth_txq_destroy(txq);
	}
	if (inv != NULL) {
		(void)doca_buf_inventory_stop(inv);
		(void)doca_buf_inventory_destroy(inv);
	}
	if (mmap != NULL)
		(void)doca_mmap_destroy(mmap);
	if (pe != NULL)
		(void)doca_pe_destroy(pe);
	free(mem);
	return s;
}

void cg_build_frame(uint8_t *f, uint32_t len, uint32_t seq)
{
	static const uint8_t hdr[42] = {
		0x02, 0x4c, 0x00, 0x00, 0x00, 0x02, 0x02, 0x4c, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
		0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 10,   0,
		0,    1,    10,	  0,	0,    2,    0x04, 0x00, 0x13, 0x89, 0x00, 0x00, 0x00, 0x00};
	uint32_t ip_len = len - 14, udp_len = len - 34, sum = 0;

	memcpy(f, hdr, sizeof(hdr));
	f[16] = (uint8_t)(ip_len >> 8);
	f[17] = (uint8_t)ip_len;
	f[38] = (uint8_t)(udp_len >> 8);
	f[39] = (uint8_t)udp_len;
	for (int k = 14; k < 34; k += 2)
		sum += (uint32_t)f[k] << 8 | f[k + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	f[24] = (uint8_t)(~sum >> 8);
	f[25] = (uint8_t)~sum;
	for (uint32_t k = 42; k < len; k++)
		f[k] = (uint8_t)(k + seq);
}

/* ---- GPU attach ---- */

#define FAIL_AT(l, ...)                                                                            \
	do {                                                                                       \
		*layer = (l);                                                                      \
		snprintf(why, len, __VA_ARGS__);                                                   \
		return s;                                                                          \
	} while (0)

doca_error_t cg_gpu_rx_attach(const char *bus, struct doca_dev *dev, uint32_t slots,
			      struct cg_gpu_rx *g, const char **layer, char *why, size_t len)
{
	uint32_t size = 0;
	void *cpu = NULL;
	doca_error_t s;

	memset(g, 0, sizeof(*g));
	s = doca_gpu_create(bus, &g->gpu);
	if (s != DOCA_SUCCESS)
		FAIL_AT("gpu", "doca_gpu_create(%s): %s", bus, doca_error_get_name(s));
	s = sdp_gpu_rollback_create(g->gpu, &g->rb);
	if (s != DOCA_SUCCESS)
		FAIL_AT("program", "rollback plan: %s", doca_error_get_name(s));
	s = doca_eth_rxq_estimate_packet_buf_size(DOCA_ETH_RXQ_TYPE_CYCLIC, 0, 0, SLOT, slots, 0, 0,
						  0, &size);
	if (s != DOCA_SUCCESS)
		FAIL_AT("queue", "estimate_packet_buf_size(%u slots): %s", slots,
			doca_error_get_name(s));
	g->size = ((size_t)size + 65535) & ~(size_t)65535;
	s = doca_gpu_mem_alloc(g->gpu, g->size, 65536, DOCA_GPU_MEM_TYPE_GPU, &g->pkt_gpu, NULL);
	if (s == DOCA_SUCCESS)
		s = sdp_gpu_rollback_add_gpu_mem(g->rb, g->pkt_gpu);
	if (s != DOCA_SUCCESS)
		FAIL_AT("gpu", "packet buffer (%zu B of device memory): %s", g->size,
			doca_error_get_name(s));
	s = doca_gpu_mem_alloc(g->gpu, 4096, 4096, DOCA_GPU_MEM_TYPE_GPU_CPU, (void **)&g->flag_gpu,
			       (void **)&g->flag_cpu);
	if (s == DOCA_SUCCESS)
		s = sdp_gpu_rollback_add_gpu_mem(g->rb, g->flag_gpu);
	if (s == DOCA_SUCCESS)
		s = doca_gpu_mem_alloc(g->gpu, sizeof(struct cg_rx_stats), 4096,
				       DOCA_GPU_MEM_TYPE_CPU_GPU, (void **)&g->st_gpu, &cpu);
	if (s == DOCA_SUCCESS)
		s = sdp_gpu_rollback_add_gpu_mem(g->rb, g->st_gpu);
	if (s != DOCA_SUCCESS)
		FAIL_AT("gpu", "stop flag / statistics memory: %s", doca_error_get_name(s));
	g->st_cpu = cpu;
	__atomic_store_n(g->flag_cpu, 0, __ATOMIC_SEQ_CST);
	memset(g->st_cpu, 0, sizeof(*g->st_cpu));
	s = doca_mmap_create(&g->mmap);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_set_memrange(g->mmap, g->pkt_gpu, g->size);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_set_permissions(g->mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_add_dev(g->mmap, dev);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_start(g->mmap);
	if (s == DOCA_SUCCESS)
		s = sdp_gpu_rollback_add_mmap(g->rb, g->mmap);
	else if (g->mmap != NULL) {
		(void)doca_mmap_destroy(g->mmap);
		g->mmap = NULL;
	}
	if (s != DOCA_SUCCESS)
		FAIL_AT("gpu", "registering the packet buffer (mmap): %s", doca_error_get_name(s));
	s = doca_eth_rxq_create(dev, slots, SLOT, &g->rxq);
	if (s != DOCA_SUCCESS)
		FAIL_AT("queue", "doca_eth_rxq_create(%u, %u): %s", slots, SLOT,
			doca_error_get_name(s));
	s = sdp_gpu_rollback_add_rxq(g->rb, g->rxq);
	if (s == DOCA_SUCCESS)
		s = doca_eth_rxq_set_type(g->rxq, DOCA_ETH_RXQ_TYPE_CYCLIC);
	if (s == DOCA_SUCCESS)
		s = doca_eth_rxq_set_pkt_buf(g->rxq, g->mmap, 0, (uint32_t)g->size);
	if (s == DOCA_SUCCESS)
		s = doca_ctx_set_datapath_on_gpu(doca_eth_rxq_as_doca_ctx(g->rxq), g->gpu);
	if (s == DOCA_SUCCESS)
		s = doca_ctx_start(doca_eth_rxq_as_doca_ctx(g->rxq));
	if (s == DOCA_SUCCESS)
		s = doca_eth_rxq_get_gpu_handle(g->rxq, &g->h);
	if (s != DOCA_SUCCESS)
		FAIL_AT("queue", "GPU receive queue (CYCLIC, %u slots): %s", slots,
			doca_error_get_name(s));
	s = cg_stream_create(&g->stream);
	if (s != DOCA_SUCCESS)
		FAIL_AT("driver", "cudaStreamCreateWithFlags: %s", doca_error_get_name(s));
	return DOCA_SUCCESS;
}

doca_error_t cg_gpu_rx_launch(struct cg_gpu_rx *g, uint32_t deadline_ms, char *why, size_t len)
{
	doca_error_t s = sdp_gpu_rollback_set_kernel(g->rb, g->flag_cpu, 1, g->stream, deadline_ms);

	if (s != DOCA_SUCCESS) {
		snprintf(why, len, "rollback plan: %s", doca_error_get_name(s));
		return s;
	}
	s = cg_rx_kernel_launch(g->stream, g->h, g->flag_gpu, g->st_gpu);
	if (s != DOCA_SUCCESS) {
		snprintf(why, len, "launching the receive kernel: %s", doca_error_get_name(s));
		return s;
	}
	g->launched = 1;
	return DOCA_SUCCESS;
}

void cg_gpu_rx_wait(struct cg_gpu_rx *g, double seconds, uint64_t want)
{
	double end = cg_now_s() + seconds;

	while (cg_now_s() < end &&
	       (want == 0 || __atomic_load_n(&g->st_cpu->packets, __ATOMIC_ACQUIRE) < want) &&
	       __atomic_load_n(&g->st_cpu->error, __ATOMIC_ACQUIRE) == 0)
		nap_us(1000);
}

doca_error_t cg_gpu_rx_detach(struct cg_gpu_rx *g, void *report)
{
	doca_error_t s;

	if (g->rb == NULL) {
		if (g->gpu != NULL)
			(void)doca_gpu_destroy(g->gpu);
		g->gpu = NULL;
		return DOCA_SUCCESS;
	}
	s = sdp_gpu_rollback_run(g->rb, report);
	if (s == DOCA_SUCCESS || s == DOCA_ERROR_UNEXPECTED) {
		cg_stream_destroy(g->stream);
		g->stream = NULL;
		sdp_gpu_rollback_destroy(g->rb);
		g->rb = NULL;
	}
	return s;
}

doca_error_t cg_gpu_tx_one(const char *bus, struct doca_dev *tx_dev, struct doca_dev *rx_dev,
			   uint32_t flen, uint64_t *received, int *intact, int32_t *cq_status,
			   const char **layer, char *why, size_t len)
{
	struct sdp_gpu_rollback *rb = NULL;
	struct sdp_gpu_rollback_report rep;
	struct doca_gpu *gpu = NULL;
	struct doca_mmap *mmap = NULL;
	struct doca_eth_txq *txq = NULL;
	struct doca_gpu_eth_txq *h = NULL;
	struct cg_tx_stats *st_gpu = NULL, *st_cpu = NULL;
	struct cg_rxq rx;
	uint8_t frame[CG_FRAME_LEN * 2];
	void *fr_gpu = NULL, *cpu = NULL, *stream = NULL;
	uint32_t mkey = 0;
	doca_error_t s;
	double end;
	int done = 0, running = 0;

	*received = 0;
	*intact = 0;
	*cq_status = -1;
	if (flen > sizeof(frame))
		flen = sizeof(frame);
	cg_build_frame(frame, flen, 3);
	s = cg_rxq_start(rx_dev, 0, 0, 16, 1, &rx);
	if (s != DOCA_SUCCESS)
		FAIL_AT("queue", "CPU receive queue on the peer: %s", doca_error_get_name(s));
	s = doca_gpu_create(bus, &gpu);
	if (s != DOCA_SUCCESS) {
		cg_rxq_stop(&rx);
		FAIL_AT("gpu", "doca_gpu_create(%s): %s", bus, doca_error_get_name(s));
	}
	s = sdp_gpu_rollback_create(gpu, &rb);
	if (s == DOCA_SUCCESS)
		s = doca_gpu_mem_alloc(gpu, 65536, 65536, DOCA_GPU_MEM_TYPE_GPU, &fr_gpu, NULL);
	if (s == DOCA_SUCCESS)
		s = sdp_gpu_rollback_add_gpu_mem(rb, fr_gpu);
	if (s == DOCA_SUCCESS)
		s = doca_gpu_mem_alloc(gpu, 4096, 4096, DOCA_GPU_MEM_TYPE_CPU_GPU, (void **)&st_gpu,
				       &cpu);
	if (s == DOCA_SUCCESS)
		s = sdp_gpu_rollback_add_gpu_mem(rb, st_gpu);
	if (s == DOCA_SUCCESS) {
		st_cpu = cpu;
		memset(st_cpu, 0, sizeof(*st_cpu));
		s = cg_copy_to_gpu(fr_gpu, frame, flen);
	}
	if (s != DOCA_SUCCESS) {
		*layer = "gpu";
		snprintf(why, len, "frame memory: %s", doca_error_get_name(s));
		goto out;
	}
	s = doca_mmap_create(&mmap);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_set_memrange(mmap, fr_gpu, 65536);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_add_dev(mmap, tx_dev);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_start(mmap);
	if (s == DOCA_SUCCESS)
		s = sdp_gpu_rollback_add_mmap(rb, mmap);
	else if (mmap != NULL)
		(void)doca_mmap_destroy(mmap);
	if (s == DOCA_SUCCESS)
		s = doca_mmap_get_mkey(mmap, tx_dev, &mkey);
	if (s != DOCA_SUCCESS) {
		*layer = "gpu";
		snprintf(why, len, "registering the frame (mmap): %s", doca_error_get_name(s));
		goto out;
	}
	s = doca_eth_txq_create(tx_dev, 256, &txq);
	if (s == DOCA_SUCCESS)
		s = sdp_gpu_rollback_add_txq(rb, txq);
	if (s == DOCA_SUCCESS)
		s = doca_eth_txq_gpu_set_completion_on_gpu(txq);
	if (s == DOCA_SUCCESS)
		s = doca_ctx_set_datapath_on_gpu(doca_eth_txq_as_doca_ctx(txq), gpu);
	if (s == DOCA_SUCCESS)
		s = doca_ctx_start(doca_eth_txq_as_doca_ctx(txq));
	if (s == DOCA_SUCCESS)
		s = doca_eth_txq_get_gpu_handle(txq, &h);
	if (s != DOCA_SUCCESS) {
		*layer = "queue";
		snprintf(why, len, "GPU send queue: %s", doca_error_get_name(s));
		goto out;
	}
	s = cg_stream_create(&stream);
	if (s == DOCA_SUCCESS)
		s = cg_tx_kernel_launch(stream, h, fr_gpu, __builtin_bswap32(mkey), flen, st_gpu);
	if (s != DOCA_SUCCESS) {
		*layer = "driver";
		snprintf(why, len, "launching the send kernel: %s", doca_error_get_name(s));
		goto out;
	}
	running = 1;
	end = cg_now_s() + 10;
	while ((done = cg_stream_done(stream, why, len)) == 0 && cg_now_s() < end)
		nap_us(1000);
	running = done == 0;
	if (done <= 0) {
		*layer = done < 0 ? "driver" : "program";
		if (done == 0)
			snprintf(why, len, "the send kernel did not finish within 10 s");
		s = done < 0 ? DOCA_ERROR_DRIVER : DOCA_ERROR_TIME_OUT;
		goto out;
	}
	*cq_status = st_cpu->status;
	cg_rxq_progress(&rx, 5, 1);
	cg_rxq_progress(&rx, 0.2, 0); /* and nothing more */
	*received = rx.received;
	*intact = rx.received >= 1 && rx.first_len == flen && memcmp(rx.first, frame, flen) == 0;
out:
	if (running) {
		/* a send kernel still running: the plan refuses to tear down; leave it all */
		cg_rxq_stop(&rx);
		return s;
	}
	if (rb != NULL) {
		doca_error_t r = sdp_gpu_rollback_run(rb, &rep);

		if (r != DOCA_SUCCESS && s == DOCA_SUCCESS) {
			*layer = "program";
			snprintf(why, len, "rollback step %s: %s",
				 sdp_gpu_rollback_step_name(rep.failed_step),
				 doca_error_get_name(r));
			s = r;
		}
		sdp_gpu_rollback_destroy(rb);
	} else if (gpu != NULL) {
		(void)doca_gpu_destroy(gpu);
	}
	cg_stream_destroy(stream);
	cg_rxq_stop(&rx);
	return s;
}
