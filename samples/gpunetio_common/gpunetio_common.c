/*
 * Helpers shared by the GPUNetIO Ethernet samples (gpunetio_common.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_eth_rxq.h>
#include <doca_eth_rxq_cpu_data_path.h>
#include <doca_eth_txq.h>
#include <doca_eth_txq_cpu_data_path.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <softdpu/gpunetio_rollback.h>

#include "gpunetio_common.h"

DOCA_LOG_REGISTER(GPUNETIO_COMMON);

volatile sig_atomic_t sample_force_quit;

static void signal_handler(int signum)
{
	(void)signum;
	sample_force_quit = 1;
}

static void sample_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = signal_handler;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

double sample_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t sample_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- options ------------------------------------------------------------------------------ */

static doca_error_t copy_str(const char *what, const char *src, char *dst, size_t size)
{
	if (strnlen(src, size) >= size) {
		DOCA_LOG_ERR("%s is too long (at most %zu characters)", what, size - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(dst, src);
	return DOCA_SUCCESS;
}

static doca_error_t gpu_cb(void *param, void *config)
{
	return copy_str("GPU PCIe address", param, ((struct sample_args *)config)->gpu_pcie,
			SAMPLE_PCI_LEN);
}

static doca_error_t nic_cb(void *param, void *config)
{
	return copy_str("NIC PCIe address", param, ((struct sample_args *)config)->nic_pcie,
			SAMPLE_PCI_LEN);
}

static doca_error_t dev_cb(void *param, void *config)
{
	return copy_str("device name", param, ((struct sample_args *)config)->dev_name,
			SAMPLE_NAME_LEN);
}

static doca_error_t peer_cb(void *param, void *config)
{
	return copy_str("peer device name", param, ((struct sample_args *)config)->peer_name,
			SAMPLE_NAME_LEN);
}

/* True when v is in [min, max] and a multiple of step; else logs err (given v, min and max). */
static bool int_param_ok(int v, int min, int max, int step, const char *err)
{
	if (v >= min && v <= max && v % step == 0)
		return true;
	DOCA_LOG_ERR(err, v, min, max);
	return false;
}

/* The callback of an integer option stored in sample_args.field (int_param_ok decides). */
#define INT_PARAM_CB(name, field, min, max, step, err)                                             \
	static doca_error_t name(void *param, void *config)                                        \
	{                                                                                          \
		int v = *(int *)param;                                                             \
                                                                                                   \
		if (!int_param_ok(v, min, max, step, err))                                         \
			return DOCA_ERROR_INVALID_VALUE;                                           \
		((struct sample_args *)config)->field = v;                                         \
		return DOCA_SUCCESS;                                                               \
	}

INT_PARAM_CB(scope_cb, exec_scope, 0, 2, 1, "exec scope %d: 0 (thread), 1 (warp) or 2 (block)")
INT_PARAM_CB(duration_cb, duration_s, 0, 86400, 1, "duration %d s out of range [%d, %d]")
INT_PARAM_CB(size_cb, pkt_size, SAMPLE_FRAME_MIN, 2048, 1, "packet size %d out of range [%d, %d]")
INT_PARAM_CB(threads_cb, threads, 32, 1024, 32, "CUDA threads %d: a multiple of 32 from 32 to 1024")
INT_PARAM_CB(interval_cb, interval_ns, 1000, 1000000000, 1,
	     "time interval %d ns out of range [%d, %d]")
INT_PARAM_CB(peer_count_cb, peer_count, 0, INT_MAX, 1, "peer count %d is negative")
INT_PARAM_CB(peer_rate_cb, peer_rate, 0, 100000000, 1, "peer rate %d out of range [%d, %d]")

/* Every option, in the order they are registered (and listed by --help), with its group. */
static const struct sample_param {
	unsigned int group;
	const char *short_name; /* NULL: none */
	const char *long_name;
	const char *descr;
	enum doca_argp_type type;
	doca_argp_param_cb_t cb;
} sample_params[] = {
	{SAMPLE_OPT_GPU, "g", "gpu", "GPU PCIe address (default: CUDA device 0)",
	 DOCA_ARGP_TYPE_STRING, gpu_cb},
	{SAMPLE_OPT_NIC, "n", "nic", "NIC PCIe address", DOCA_ARGP_TYPE_STRING, nic_cb},
	{SAMPLE_OPT_NIC, "d", "device", "NIC by ibdev name (softdpu; instead of -n)",
	 DOCA_ARGP_TYPE_STRING, dev_cb},
	{SAMPLE_OPT_SCOPE, "e", "exec-scope", "CUDA execution scope: 0 thread, 1 warp, 2 block",
	 DOCA_ARGP_TYPE_INT, scope_cb},
	{SAMPLE_OPT_DURATION, NULL, "duration", "stop after this many seconds (0: at SIGINT)",
	 DOCA_ARGP_TYPE_INT, duration_cb},
	{SAMPLE_OPT_SIZE, "s", "size", "packet size in bytes (60-2048)", DOCA_ARGP_TYPE_INT,
	 size_cb},
	{SAMPLE_OPT_THREADS, "t", "threads", "CUDA threads (a multiple of 32)", DOCA_ARGP_TYPE_INT,
	 threads_cb},
	{SAMPLE_OPT_INTERVAL, "t", "time-interval", "nanoseconds between two bursts",
	 DOCA_ARGP_TYPE_INT, interval_cb},
	{SAMPLE_OPT_PEER, NULL, "peer", "loop peer device the sample drives on the CPU (softdpu)",
	 DOCA_ARGP_TYPE_STRING, peer_cb},
	{SAMPLE_OPT_PEER, NULL, "peer-count", "frames the peer sends (0: until the end)",
	 DOCA_ARGP_TYPE_INT, peer_count_cb},
	{SAMPLE_OPT_PEER, NULL, "peer-rate", "frames per second the peer sends (0: flat out)",
	 DOCA_ARGP_TYPE_INT, peer_rate_cb},
};

static doca_error_t reg(const struct sample_param *sp)
{
	struct doca_argp_param *param = NULL;
	doca_error_t result = doca_argp_param_create(&param);

	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to create an ARGP param: %s", doca_error_get_descr(result));
		return result;
	}
	if (sp->short_name != NULL)
		doca_argp_param_set_short_name(param, sp->short_name);
	doca_argp_param_set_long_name(param, sp->long_name);
	doca_argp_param_set_description(param, sp->descr);
	doca_argp_param_set_callback(param, sp->cb);
	doca_argp_param_set_type(param, sp->type);
	result = doca_argp_register_param(param);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to register --%s: %s", sp->long_name,
			     doca_error_get_descr(result));
	return result;
}

static doca_error_t sample_register_params(unsigned int which)
{
	for (size_t i = 0; i < sizeof(sample_params) / sizeof(sample_params[0]); i++) {
		doca_error_t r =
			which & sample_params[i].group ? reg(&sample_params[i]) : DOCA_SUCCESS;

		if (r != DOCA_SUCCESS)
			return r;
	}
	return DOCA_SUCCESS;
}

doca_error_t sample_argp_start(const char *program, void *config, unsigned int which,
			       doca_error_t (*register_own)(void), int argc, char **argv)
{
	doca_error_t result;

	result = doca_log_backend_create_standard();
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_argp_init(program, config);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to init ARGP: %s", doca_error_get_descr(result));
		return result;
	}
	result = sample_register_params(which);
	if (result == DOCA_SUCCESS && register_own != NULL)
		result = register_own();
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to parse the arguments: %s", doca_error_get_descr(result));
		doca_argp_destroy();
		return result;
	}
	sample_install_signals();
	return DOCA_SUCCESS;
}

int sample_exit(doca_error_t result)
{
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("sample finished successfully");
	else
		DOCA_LOG_ERR("sample failed: %s", doca_error_get_descr(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ---- devices ------------------------------------------------------------------------------ */

/* Whether info is the device of this PCIe address (pci not NULL) or ibdev name. */
static bool dev_matches(struct doca_devinfo *info, const char *pci, const char *name)
{
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";
	uint8_t eq = 0;

	if (pci != NULL)
		return doca_devinfo_is_equal_pci_addr(info, pci, &eq) == DOCA_SUCCESS && eq;
	return doca_devinfo_get_ibdev_name(info, ibdev, sizeof(ibdev)) == DOCA_SUCCESS &&
	       strcmp(ibdev, name) == 0;
}

doca_error_t sample_open_dev(const char *pci, const char *name, struct doca_dev **dev)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t result;

	if (pci != NULL && pci[0] == '\0')
		pci = NULL;
	if (pci == NULL && (name == NULL || name[0] == '\0')) {
		DOCA_LOG_ERR("no NIC given: -n <PCIe address> or -d <ibdev name>");
		return DOCA_ERROR_INVALID_VALUE;
	}
	result = doca_devinfo_create_list(&list, &n);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to list devices: %s", doca_error_get_descr(result));
		return result;
	}
	result = DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n; i++) {
		if (!dev_matches(list[i], pci, name))
			continue;
		result = doca_dev_open(list[i], dev);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("failed to open %s: %s", pci != NULL ? pci : name,
				     doca_error_get_descr(result));
		break;
	}
	if (result == DOCA_ERROR_NOT_FOUND)
		DOCA_LOG_ERR("no device %s among %u (declare one with SOFTDPU_DEVICES)",
			     pci != NULL ? pci : name, n);
	doca_devinfo_destroy_list(list);
	return result;
}

/* ---- GPU memory ------------------------------------------------------------------------------- */

doca_error_t sample_gpu_buf_create(struct doca_gpu *gpu, struct doca_dev *dev, size_t size,
				   enum doca_gpu_mem_type mtype, struct sample_gpu_buf *buf)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	doca_error_t result;

	memset(buf, 0, sizeof(*buf));
	buf->dmabuf_fd = -1;
	buf->size = (size + page - 1) / page * page;
	result = doca_gpu_mem_alloc(gpu, buf->size, page, mtype, &buf->gpu,
				    mtype == DOCA_GPU_MEM_TYPE_GPU ? NULL : &buf->cpu);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to allocate %zu bytes of GPU memory: %s", buf->size,
			     doca_error_get_descr(result));
		buf->gpu = NULL;
		return result;
	}
	result = doca_mmap_create(&buf->mmap);
	if (result != DOCA_SUCCESS)
		goto fail;
	result = doca_mmap_add_dev(buf->mmap, dev);
	if (result != DOCA_SUCCESS)
		goto fail;
	/* dma-buf where the GPU exports it, else the plain range (nvidia-peermem style) */
	if (mtype == DOCA_GPU_MEM_TYPE_GPU &&
	    doca_gpu_dmabuf_fd(gpu, buf->gpu, buf->size, &buf->dmabuf_fd) == DOCA_SUCCESS) {
		result = doca_mmap_set_dmabuf_memrange(buf->mmap, buf->dmabuf_fd, buf->gpu, 0,
						       buf->size);
	} else {
		buf->dmabuf_fd = -1;
		result = doca_mmap_set_memrange(buf->mmap, buf->gpu, buf->size);
	}
	if (result != DOCA_SUCCESS)
		goto fail;
	result =
		doca_mmap_set_permissions(buf->mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE |
							     DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING);
	if (result != DOCA_SUCCESS)
		goto fail;
	result = doca_mmap_start(buf->mmap);
	if (result != DOCA_SUCCESS)
		goto fail;
	return DOCA_SUCCESS;
fail:
	DOCA_LOG_ERR("failed to register GPU memory: %s", doca_error_get_descr(result));
	sample_gpu_buf_destroy(gpu, buf);
	return result;
}

void sample_gpu_buf_destroy(struct doca_gpu *gpu, struct sample_gpu_buf *buf)
{
	/* the mmap and the dma-buf exist only with the memory: a zeroed buf holds nothing */
	if (buf->gpu == NULL)
		return;
	if (buf->mmap != NULL && doca_mmap_destroy(buf->mmap) != DOCA_SUCCESS)
		DOCA_LOG_WARN("failed to destroy an mmap");
	buf->mmap = NULL;
	if (buf->dmabuf_fd >= 0)
		close(buf->dmabuf_fd);
	buf->dmabuf_fd = -1;
	if (buf->gpu != NULL && doca_gpu_mem_free(gpu, buf->gpu) != DOCA_SUCCESS)
		DOCA_LOG_WARN("failed to free GPU memory");
	buf->gpu = NULL;
}

/* ---- DOCA Flow ---------------------------------------------------------------------------- */

doca_error_t sample_flow_udp_to_queue(struct doca_dev *dev, uint16_t queue_id,
				      struct sample_flow *flow)
{
	struct doca_flow_cfg *cfg = NULL;
	struct doca_flow_port_cfg *pcfg = NULL;
	struct doca_flow_pipe_cfg *pipe_cfg = NULL;
	struct doca_flow_match match;
	struct doca_flow_fwd fwd, miss;
	uint16_t queues[1] = {queue_id};
	doca_error_t result;

	memset(flow, 0, sizeof(*flow));
	result = doca_flow_cfg_create(&cfg);
	if (result != DOCA_SUCCESS)
		goto out;
	result = doca_flow_cfg_set_pipe_queues(cfg, 1);
	if (result == DOCA_SUCCESS)
		result = doca_flow_cfg_set_mode_args(cfg, "vnf");
	if (result == DOCA_SUCCESS)
		result = doca_flow_init(cfg);
	doca_flow_cfg_destroy(cfg);
	if (result != DOCA_SUCCESS)
		goto out;
	flow->initialised = true;

	result = doca_flow_port_cfg_create(&pcfg);
	if (result != DOCA_SUCCESS)
		goto out;
	result = doca_flow_port_cfg_set_port_id(pcfg, 0);
	if (result == DOCA_SUCCESS)
		result = doca_flow_port_cfg_set_dev(pcfg, dev);
	if (result == DOCA_SUCCESS)
		result = doca_flow_port_start(pcfg, &flow->port);
	doca_flow_port_cfg_destroy(pcfg);
	if (result != DOCA_SUCCESS)
		goto out;

	memset(&match, 0, sizeof(match));
	match.parser_meta.outer_l3_type = DOCA_FLOW_L3_META_IPV4;
	match.parser_meta.outer_l4_type = DOCA_FLOW_L4_META_UDP;
	memset(&fwd, 0, sizeof(fwd));
	fwd.type = DOCA_FLOW_FWD_RSS;
	fwd.rss_type = DOCA_FLOW_RESOURCE_TYPE_NON_SHARED;
	fwd.rss.outer_flags = DOCA_FLOW_RSS_IPV4 | DOCA_FLOW_RSS_UDP;
	fwd.rss.queues_array = queues;
	fwd.rss.nr_queues = 1;
	memset(&miss, 0, sizeof(miss));
	miss.type = DOCA_FLOW_FWD_DROP;

	result = doca_flow_pipe_cfg_create(&pipe_cfg, flow->port);
	if (result != DOCA_SUCCESS)
		goto out;
	result = doca_flow_pipe_cfg_set_name(pipe_cfg, "GPU_RXQ_UDP_PIPE");
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_type(pipe_cfg, DOCA_FLOW_PIPE_BASIC);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_is_root(pipe_cfg, true);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_cfg_set_match(pipe_cfg, &match, NULL);
	if (result == DOCA_SUCCESS)
		result = doca_flow_pipe_create(pipe_cfg, &fwd, &miss, &flow->pipe);
	doca_flow_pipe_cfg_destroy(pipe_cfg);
	if (result != DOCA_SUCCESS)
		goto out;
	result = doca_flow_pipe_basic_add_entry(0, flow->pipe, &match, 0, NULL, NULL, NULL, 0, NULL,
						&flow->entry);
	if (result == DOCA_SUCCESS)
		result = doca_flow_entries_process(flow->port, 0, 0, 0);
out:
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to steer UDP to queue %u: %s", queue_id,
			     doca_error_get_descr(result));
		sample_flow_destroy(flow);
	}
	return result;
}

void sample_flow_destroy(struct sample_flow *flow)
{
	if (flow->pipe != NULL)
		doca_flow_pipe_destroy(flow->pipe);
	flow->pipe = NULL;
	if (flow->port != NULL && doca_flow_port_stop(flow->port) != DOCA_SUCCESS)
		DOCA_LOG_WARN("failed to stop the flow port");
	flow->port = NULL;
	if (flow->initialised)
		doca_flow_destroy();
	flow->initialised = false;
}

doca_error_t sample_ctx_stop(struct doca_ctx *ctx, struct doca_pe *pe, double timeout_s)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	doca_error_t result = doca_ctx_stop(ctx);
	double end = sample_now_s() + timeout_s;

	if (result != DOCA_SUCCESS && result != DOCA_ERROR_IN_PROGRESS) {
		DOCA_LOG_ERR("failed to stop a context: %s", doca_error_get_descr(result));
		return result;
	}
	while (doca_ctx_get_state(ctx, &st) == DOCA_SUCCESS && st != DOCA_CTX_STATE_IDLE) {
		if (sample_now_s() > end) {
			DOCA_LOG_ERR("a context did not stop within %.0f s", timeout_s);
			return DOCA_ERROR_TIME_OUT;
		}
		if (pe == NULL || doca_pe_progress(pe) == 0)
			usleep(200);
	}
	return DOCA_SUCCESS;
}

/* ---- the resources every sample holds ------------------------------------------------------ */

doca_error_t sample_resources_open(struct sample_resources *res, struct sample_args *args,
				   int *cc_major)
{
	int major = 0;
	doca_error_t result;

	result = sample_cuda_init(args->gpu_pcie, sizeof(args->gpu_pcie), &major);
	if (result != DOCA_SUCCESS)
		return result;
	if (cc_major != NULL)
		*cc_major = major;
	result = doca_gpu_create(args->gpu_pcie, &res->gpu);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("doca_gpu_create(%s): %s", args->gpu_pcie,
			     doca_error_get_descr(result));
		return result;
	}
	return sample_open_dev(args->nic_pcie, args->dev_name, &res->dev);
}

doca_error_t sample_txq_start_on_gpu(struct sample_resources *res,
				     struct doca_gpu_eth_txq **txq_gpu)
{
	doca_error_t result;

	result = doca_ctx_set_datapath_on_gpu(doca_eth_txq_as_doca_ctx(res->txq), res->gpu);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(doca_eth_txq_as_doca_ctx(res->txq));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to start the send queue: %s", doca_error_get_descr(result));
		return result;
	}
	res->ctx_started = true;
	result = doca_eth_txq_apply_queue_id(res->txq, 0);
	if (result == DOCA_SUCCESS)
		result = doca_eth_txq_get_gpu_handle(res->txq, txq_gpu);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("send queue GPU handle: %s", doca_error_get_descr(result));
	return result;
}

doca_error_t sample_pkt_buf_fill(struct sample_resources *res, uint32_t n, size_t stride,
				 uint32_t len, const uint8_t dst[6], const uint8_t src[6],
				 uint32_t *mkey)
{
	uint8_t *frames;
	doca_error_t result;

	result = sample_gpu_buf_create(res->gpu, res->dev, (size_t)n * stride,
				       DOCA_GPU_MEM_TYPE_GPU, &res->pkt_buf);
	if (result != DOCA_SUCCESS)
		return result;
	frames = calloc(n, stride);
	if (frames == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (uint32_t i = 0; i < n; i++)
		sample_build_frame(frames + (size_t)i * stride, len, i, dst, src);
	result = sample_cuda_copy_to_gpu(res->stream, res->pkt_buf.gpu, frames, (size_t)n * stride);
	free(frames);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_mmap_get_mkey(res->pkt_buf.mmap, res->dev, mkey);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("doca_mmap_get_mkey: %s", doca_error_get_descr(result));
	return result;
}

doca_error_t sample_kernel_stop(struct sample_resources *res, uint32_t *exit_cpu, double timeout_s)
{
	doca_error_t result;

	if (!res->kernel_running)
		return DOCA_SUCCESS;
	if (exit_cpu != NULL)
		DOCA_GPUNETIO_VOLATILE(*exit_cpu) = 1;
	result = sample_cuda_stream_wait(res->stream, timeout_s);
	if (result != DOCA_SUCCESS)
		return result;
	res->kernel_running = false;
	return DOCA_SUCCESS;
}

double sample_monitor(double duration_s, const uint32_t *exit_cpu, const uint32_t *error,
		      const uint64_t *packets, const char *what)
{
	double start, last, end;
	uint64_t last_pkts = 0, pkts;

	start = last = sample_now_s();
	end = duration_s > 0 ? start + duration_s : 0;
	while (!sample_force_quit && (end == 0 || sample_now_s() < end) &&
	       (error == NULL || DOCA_GPUNETIO_VOLATILE(*error) == 0) &&
	       DOCA_GPUNETIO_VOLATILE(*exit_cpu) == 0) {
		double now;

		usleep(100000);
		now = sample_now_s();
		if (now - last >= 1.0) {
			pkts = DOCA_GPUNETIO_VOLATILE(*packets);
			printf("%8.1f s: %llu packets%s (%.3f Mpps)\n", now - start,
			       (unsigned long long)pkts, what,
			       (double)(pkts - last_pkts) / (now - last) / 1e6);
			fflush(stdout);
			last_pkts = pkts;
			last = now;
		}
	}
	return sample_now_s() - start;
}

bool sample_teardown_begin(struct sample_resources *res, uint32_t *exit_cpu)
{
	if (sample_kernel_stop(res, exit_cpu, 5.0) != DOCA_SUCCESS) {
		/* stopping the queue or freeing GPU memory would wait for the kernel */
		DOCA_LOG_ERR("the kernel did not stop: nothing is torn down");
		return false;
	}
	return true;
}

bool sample_rollback(struct sample_resources *res, uint32_t *exit_cpu, void (*before_stop)(void *),
		     void *user)
{
	struct sdp_gpu_rollback_report rep;
	struct sdp_gpu_rollback *rb = NULL;
	doca_error_t result;

	if (res->gpu == NULL) { /* nothing GPU was made */
		if (before_stop != NULL)
			before_stop(user);
		return true;
	}
	result = sdp_gpu_rollback_create(res->gpu, &rb);
	if (result == DOCA_SUCCESS && res->kernel_running && exit_cpu != NULL)
		result = sdp_gpu_rollback_set_kernel(rb, exit_cpu, 1, res->stream, 5000);
	if (result == DOCA_SUCCESS)
		result = sdp_gpu_rollback_set_before_stop(rb, before_stop, user);
	/* in the order they were made: the packet buffer, its mmap, the queue, the sample's memory */
	if (result == DOCA_SUCCESS && res->pkt_buf.gpu != NULL)
		result = sdp_gpu_rollback_add_gpu_mem(rb, res->pkt_buf.gpu);
	if (result == DOCA_SUCCESS && res->pkt_buf.mmap != NULL)
		result = sdp_gpu_rollback_add_mmap(rb, res->pkt_buf.mmap);
	if (result == DOCA_SUCCESS && res->rxq != NULL)
		result = sdp_gpu_rollback_add_rxq(rb, res->rxq);
	if (result == DOCA_SUCCESS && res->txq != NULL)
		result = sdp_gpu_rollback_add_txq(rb, res->txq);
	for (uint32_t i = 0; result == DOCA_SUCCESS && i < res->nb_gpu_mem; i++)
		result = sdp_gpu_rollback_add_gpu_mem(rb, res->gpu_mem[i]);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("rollback plan: %s; nothing is torn down",
			     doca_error_get_descr(result));
		sdp_gpu_rollback_destroy(rb);
		return false;
	}
	result = sdp_gpu_rollback_run(rb, &rep);
	sdp_gpu_rollback_destroy(rb);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR(
			"rollback stopped at %s: %s%s", sdp_gpu_rollback_step_name(rep.failed_step),
			doca_error_get_descr(result),
			rep.kernel_running ? " (the kernel still runs: nothing is torn down)" : "");
		return false;
	}
	res->kernel_running = false;
	res->rxq = NULL;
	res->txq = NULL;
	res->ctx_started = false;
	res->nb_gpu_mem = 0;
	if (res->pkt_buf.gpu != NULL && res->pkt_buf.dmabuf_fd >= 0)
		close(res->pkt_buf.dmabuf_fd); /* the memory is freed; the export goes with it */
	memset(&res->pkt_buf, 0, sizeof(res->pkt_buf));
	res->pkt_buf.dmabuf_fd = -1;
	res->gpu = NULL;
	return true;
}

doca_error_t sample_gpu_mem_alloc(struct sample_resources *res, const char *what, size_t size,
				  enum doca_gpu_mem_type mtype, void **gpu_ptr, void **cpu_ptr)
{
	doca_error_t result;

	*gpu_ptr = NULL;
	*cpu_ptr = NULL;
	if (res->nb_gpu_mem == SAMPLE_GPU_MEM_MAX) {
		DOCA_LOG_ERR("no room to record %s (SAMPLE_GPU_MEM_MAX)", what);
		return DOCA_ERROR_NO_MEMORY;
	}
	result = doca_gpu_mem_alloc(res->gpu, size, 4096, mtype, gpu_ptr, cpu_ptr);
	if (*gpu_ptr != NULL)
		res->gpu_mem[res->nb_gpu_mem++] = *gpu_ptr;
	if (result != DOCA_SUCCESS || *gpu_ptr == NULL || *cpu_ptr == NULL) {
		DOCA_LOG_ERR("failed to allocate %s: %s", what, doca_error_get_descr(result));
		return result != DOCA_SUCCESS ? result : DOCA_ERROR_NO_MEMORY;
	}
	memset(*cpu_ptr, 0, size);
	return DOCA_SUCCESS;
}

void sample_resources_close(struct sample_resources *res)
{
	for (uint32_t i = 0; i < res->nb_gpu_mem; i++)
		(void)doca_gpu_mem_free(res->gpu, res->gpu_mem[i]);
	res->nb_gpu_mem = 0;
	sample_peer_stop(res->peer);
	res->peer = NULL;
	sample_cuda_stream_destroy(res->stream);
	res->stream = NULL;
	if (res->rxq != NULL) {
		if (res->ctx_started)
			(void)sample_ctx_stop(doca_eth_rxq_as_doca_ctx(res->rxq), NULL, 10);
		if (doca_eth_rxq_destroy(res->rxq) != DOCA_SUCCESS)
			DOCA_LOG_ERR("failed to destroy the receive queue");
		res->rxq = NULL;
	}
	if (res->txq != NULL) {
		if (res->ctx_started)
			(void)sample_ctx_stop(doca_eth_txq_as_doca_ctx(res->txq), NULL, 10);
		if (doca_eth_txq_destroy(res->txq) != DOCA_SUCCESS)
			DOCA_LOG_ERR("failed to destroy the send queue");
		res->txq = NULL;
	}
	res->ctx_started = false;
	sample_gpu_buf_destroy(res->gpu, &res->pkt_buf);
	if (res->dev != NULL && doca_dev_close(res->dev) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to close the device");
	res->dev = NULL;
	if (res->gpu != NULL && doca_gpu_destroy(res->gpu) != DOCA_SUCCESS)
		DOCA_LOG_ERR("failed to destroy the GPU handle");
	res->gpu = NULL;
}

/* ---- frames ------------------------------------------------------------------------------- */

static uint16_t ip_csum(const uint8_t *h, size_t len)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

void sample_build_frame(uint8_t *f, uint32_t len, uint64_t seq, const uint8_t dst[6],
			const uint8_t src[6])
{
	uint16_t ip_len = (uint16_t)(len - 14), udp_len = (uint16_t)(len - 34), c;

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(f + 14, 0, 20);
	f[14] = 0x45;
	f[16] = (uint8_t)(ip_len >> 8);
	f[17] = (uint8_t)ip_len;
	f[18] = (uint8_t)(seq >> 8);
	f[19] = (uint8_t)seq;
	f[20] = 0x40; /* DF */
	f[22] = 64;   /* TTL */
	f[23] = 17;   /* UDP */
	f[26] = 10, f[27] = 0, f[28] = 0, f[29] = 1;
	f[30] = 10, f[31] = 0, f[32] = 0, f[33] = 2;
	c = ip_csum(f + 14, 20);
	f[24] = (uint8_t)(c >> 8);
	f[25] = (uint8_t)c;
	f[34] = 1024 >> 8, f[35] = 1024 & 0xff;
	f[36] = 5001 >> 8, f[37] = 5001 & 0xff;
	f[38] = (uint8_t)(udp_len >> 8);
	f[39] = (uint8_t)udp_len;
	f[40] = 0, f[41] = 0;
	for (int k = 0; k < 8; k++)
		f[SAMPLE_FRAME_SEQ_OFF + k] = (uint8_t)(seq >> (56 - 8 * k));
	for (uint32_t k = SAMPLE_FRAME_SEQ_OFF + 8; k < len; k++)
		f[k] = (uint8_t)(seq + k);
}

int sample_check_frame(const uint8_t *f, uint32_t len, uint64_t *seq)
{
	uint64_t s = 0;

	if (len < SAMPLE_FRAME_MIN || f[12] != 0x08 || f[13] != 0x00 || f[23] != 17 ||
	    (uint32_t)(f[16] << 8 | f[17]) + 14 != len || ip_csum(f + 14, 20) != 0)
		return 0;
	for (int k = 0; k < 8; k++)
		s = s << 8 | f[SAMPLE_FRAME_SEQ_OFF + k];
	for (uint32_t k = SAMPLE_FRAME_SEQ_OFF + 8; k < len; k++)
		if (f[k] != (uint8_t)(s + k))
			return 0;
	*seq = s;
	return 1;
}

/* ---- the loop peer ------------------------------------------------------------------------ */

#define PEER_BUFS 256
#define PEER_BUF_SIZE 2048

struct sample_peer {
	bool sender;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_eth_txq *txq;
	struct doca_eth_rxq *rxq;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	pthread_t thread;
	bool thread_started;
	volatile int stop;
	/* sender */
	uint64_t count;
	uint32_t size, rate;
	uint64_t inflight;
	/* stats (written by the thread, read after stop or approximately while running) */
	volatile uint64_t frames, bytes, bad;
	uint64_t *times, *seqs;
	uint32_t max_times;
	volatile uint32_t nb_times;
};

static void peer_send_done(struct doca_eth_txq_task_send *t, union doca_data task_user,
			   union doca_data ctx_user)
{
	struct sample_peer *p = ctx_user.ptr;
	struct doca_buf *b = NULL;

	(void)task_user;
	if (doca_eth_txq_task_send_get_pkt(t, &b) == DOCA_SUCCESS && b != NULL)
		(void)doca_buf_dec_refcount(b, NULL);
	doca_task_free(doca_eth_txq_task_send_as_doca_task(t));
	p->inflight--;
}

static void peer_send_err(struct doca_eth_txq_task_send *t, union doca_data task_user,
			  union doca_data ctx_user)
{
	struct sample_peer *p = ctx_user.ptr;

	p->bad++;
	peer_send_done(t, task_user, ctx_user);
}

static void peer_recv_done(struct doca_eth_rxq_task_recv *t, union doca_data task_user,
			   union doca_data ctx_user)
{
	struct sample_peer *p = ctx_user.ptr;
	struct doca_buf *b = NULL;
	void *data = NULL;
	size_t len = 0;
	uint64_t seq = 0;

	(void)task_user;
	(void)doca_eth_rxq_task_recv_get_pkt(t, &b);
	(void)doca_buf_get_data(b, &data);
	(void)doca_buf_get_data_len(b, &len);
	if (!sample_check_frame(data, (uint32_t)len, &seq))
		p->bad++;
	if (p->nb_times < p->max_times) {
		p->times[p->nb_times] = sample_realtime_ns();
		p->seqs[p->nb_times] = seq;
		p->nb_times++;
	}
	p->frames++;
	p->bytes += len;
	(void)doca_buf_set_data(b, (uint8_t *)data, 0);
	if (p->stop || doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t)) != DOCA_SUCCESS) {
		(void)doca_buf_dec_refcount(b, NULL);
		doca_task_free(doca_eth_rxq_task_recv_as_doca_task(t));
	}
}

static void peer_recv_err(struct doca_eth_rxq_task_recv *t, union doca_data task_user,
			  union doca_data ctx_user)
{
	struct doca_buf *b = NULL;

	(void)task_user;
	(void)ctx_user;
	(void)doca_eth_rxq_task_recv_get_pkt(t, &b);
	if (b != NULL)
		(void)doca_buf_dec_refcount(b, NULL);
	doca_task_free(doca_eth_rxq_task_recv_as_doca_task(t));
}

/* The sender may send frame seq now: its count, room in the queue and its rate allow it. */
static bool peer_may_send(const struct sample_peer *p, uint64_t seq, double start)
{
	return p->sender && (p->count == 0 || seq < p->count) && p->inflight < PEER_BUFS &&
	       (p->rate == 0 || (double)seq < (sample_now_s() - start) * p->rate);
}

/* Build frame seq in its slot and submit it; false (nothing held) when the queue refused it. */
static bool peer_send(struct sample_peer *p, uint64_t seq)
{
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x02}, src[6] = {0x02, 0, 0, 0, 0, 0x01};
	uint8_t *mem = p->mem + (size_t)(seq % PEER_BUFS) * PEER_BUF_SIZE;
	struct doca_eth_txq_task_send *t = NULL;
	struct doca_buf *b = NULL;
	union doca_data u = {.u64 = seq};

	sample_build_frame(mem, p->size, seq, dst, src);
	if (doca_buf_inventory_buf_get_by_data(p->inv, p->mmap, mem, p->size, &b) == DOCA_SUCCESS &&
	    doca_eth_txq_task_send_allocate_init(p->txq, b, u, &t) == DOCA_SUCCESS &&
	    doca_task_submit(doca_eth_txq_task_send_as_doca_task(t)) == DOCA_SUCCESS) {
		p->inflight++;
		p->frames++;
		p->bytes += p->size;
		return true;
	}
	if (t != NULL)
		doca_task_free(doca_eth_txq_task_send_as_doca_task(t));
	if (b != NULL)
		(void)doca_buf_dec_refcount(b, NULL);
	return false;
}

static void *peer_thread(void *arg)
{
	struct sample_peer *p = arg;
	double start = sample_now_s();
	uint64_t seq = 0;

	while (!p->stop) {
		bool sent = peer_may_send(p, seq, start) && peer_send(p, seq);

		if (sent)
			seq++;
		if (doca_pe_progress(p->pe) == 0 && !sent)
			usleep(p->rate != 0 || !p->sender ? 100 : 20);
	}
	return NULL;
}

static doca_error_t peer_start(struct sample_peer *p, const char *name)
{
	union doca_data ud = {.ptr = p};
	struct doca_ctx *ctx;
	size_t memsize = (size_t)PEER_BUFS * PEER_BUF_SIZE;
	doca_error_t r;

	r = sample_open_dev(NULL, name, &p->dev);
	if (r != DOCA_SUCCESS)
		return r;
	p->mem = aligned_alloc(4096, memsize);
	if (p->mem == NULL)
		return DOCA_ERROR_NO_MEMORY;
	r = doca_pe_create(&p->pe);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_create(&p->mmap);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_set_memrange(p->mmap, p->mem, memsize);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_add_dev(p->mmap, p->dev);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_start(p->mmap);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_create(PEER_BUFS, &p->inv);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_start(p->inv);
	if (r != DOCA_SUCCESS)
		return r;
	if (p->sender) {
		r = doca_eth_txq_create(p->dev, PEER_BUFS, &p->txq);
		if (r == DOCA_SUCCESS)
			r = doca_eth_txq_task_send_set_conf(p->txq, peer_send_done, peer_send_err,
							    PEER_BUFS);
		ctx = r == DOCA_SUCCESS ? doca_eth_txq_as_doca_ctx(p->txq) : NULL;
	} else {
		r = doca_eth_rxq_create(p->dev, PEER_BUFS, PEER_BUF_SIZE, &p->rxq);
		if (r == DOCA_SUCCESS)
			r = doca_eth_rxq_task_recv_set_conf(p->rxq, peer_recv_done, peer_recv_err,
							    PEER_BUFS);
		ctx = r == DOCA_SUCCESS ? doca_eth_rxq_as_doca_ctx(p->rxq) : NULL;
	}
	if (r == DOCA_SUCCESS)
		r = doca_ctx_set_user_data(ctx, ud);
	if (r == DOCA_SUCCESS)
		r = doca_pe_connect_ctx(p->pe, ctx);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_start(ctx);
	for (uint32_t i = 0; r == DOCA_SUCCESS && !p->sender && i < PEER_BUFS; i++) {
		struct doca_eth_rxq_task_recv *t = NULL;
		struct doca_buf *b = NULL;

		r = doca_buf_inventory_buf_get_by_addr(
			p->inv, p->mmap, p->mem + (size_t)i * PEER_BUF_SIZE, PEER_BUF_SIZE, &b);
		if (r == DOCA_SUCCESS)
			r = doca_eth_rxq_task_recv_allocate_init(p->rxq, b, ud, &t);
		if (r == DOCA_SUCCESS)
			r = doca_task_submit(doca_eth_rxq_task_recv_as_doca_task(t));
	}
	if (r != DOCA_SUCCESS) {
		DOCA_LOG_ERR("failed to set up the peer %s: %s", name, doca_error_get_descr(r));
		return r;
	}
	if (pthread_create(&p->thread, NULL, peer_thread, p) != 0)
		return DOCA_ERROR_OPERATING_SYSTEM;
	p->thread_started = true;
	return DOCA_SUCCESS;
}

doca_error_t sample_peer_sender_start(const char *name, uint64_t count, uint32_t size,
				      uint32_t rate, struct sample_peer **peer)
{
	struct sample_peer *p = calloc(1, sizeof(*p));
	doca_error_t r;

	if (p == NULL)
		return DOCA_ERROR_NO_MEMORY;
	p->sender = true;
	p->count = count;
	p->size = size < SAMPLE_FRAME_MIN ? SAMPLE_FRAME_MIN : size;
	p->rate = rate;
	r = peer_start(p, name);
	if (r != DOCA_SUCCESS) {
		sample_peer_stop(p);
		return r;
	}
	*peer = p;
	return DOCA_SUCCESS;
}

doca_error_t sample_peer_receiver_start(const char *name, uint32_t max_times,
					struct sample_peer **peer)
{
	struct sample_peer *p = calloc(1, sizeof(*p));
	doca_error_t r;

	if (p == NULL)
		return DOCA_ERROR_NO_MEMORY;
	p->max_times = max_times;
	p->times = calloc(max_times ? max_times : 1, sizeof(uint64_t));
	p->seqs = calloc(max_times ? max_times : 1, sizeof(uint64_t));
	r = p->times && p->seqs ? peer_start(p, name) : DOCA_ERROR_NO_MEMORY;
	if (r != DOCA_SUCCESS) {
		sample_peer_stop(p);
		return r;
	}
	*peer = p;
	return DOCA_SUCCESS;
}

void sample_peer_get_stats(struct sample_peer *p, struct sample_peer_stats *s)
{
	s->frames = p->frames;
	s->bytes = p->bytes;
	s->bad = p->bad;
	s->nb_times = p->nb_times;
	s->times_ns = p->times;
	s->seqs = p->seqs;
}

void sample_peer_stop(struct sample_peer *p)
{
	if (p == NULL)
		return;
	p->stop = 1;
	if (p->thread_started)
		pthread_join(p->thread, NULL);
	if (p->txq != NULL) {
		(void)sample_ctx_stop(doca_eth_txq_as_doca_ctx(p->txq), p->pe, 10);
		(void)doca_eth_txq_destroy(p->txq);
	}
	if (p->rxq != NULL) {
		(void)sample_ctx_stop(doca_eth_rxq_as_doca_ctx(p->rxq), p->pe, 10);
		(void)doca_eth_rxq_destroy(p->rxq);
	}
	if (p->inv != NULL) {
		(void)doca_buf_inventory_stop(p->inv);
		(void)doca_buf_inventory_destroy(p->inv);
	}
	if (p->mmap != NULL)
		(void)doca_mmap_destroy(p->mmap);
	if (p->pe != NULL)
		(void)doca_pe_destroy(p->pe);
	if (p->dev != NULL)
		(void)doca_dev_close(p->dev);
	free(p->mem);
	free(p->times);
	free(p->seqs);
	free(p);
}
