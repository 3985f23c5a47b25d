/*
 * Helpers shared by the GPUNetIO Ethernet samples (gpunetio_simple_receive, gpunetio_simple_send,
 * gpunetio_send_wait_time): command-line options, opening the NIC and the GPU, GPU memory
 * registered with an mmap, the DOCA Flow rule steering UDP to a receive queue, the resources
 * every sample holds (set up and torn down in one order), and the CPU side of a loop peer device
 * (a sender or a receiver on the other end of an in-process wire).
 *
 * Written against DOCA's public headers only. The CUDA runtime calls live in gpunetio_cuda.cu,
 * so the host C files need no CUDA include path.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef GPUNETIO_COMMON_H_
#define GPUNETIO_COMMON_H_

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_flow.h>
#include <doca_gpunetio.h>
#include <doca_mmap.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_pe;
struct doca_eth_rxq;
struct doca_eth_txq;
struct doca_gpu_eth_txq;

#define SAMPLE_PCI_LEN 32
#define SAMPLE_NAME_LEN 64

/* What the three samples take on the command line (each registers the options it uses). */
struct sample_args {
	char gpu_pcie[SAMPLE_PCI_LEN];	 /* -g/--gpu: PCIe address; empty: CUDA device 0 */
	char nic_pcie[SAMPLE_PCI_LEN];	 /* -n/--nic: PCIe address of the NIC */
	char dev_name[SAMPLE_NAME_LEN];	 /* -d/--device: the NIC by ibdev name (softdpu) */
	char peer_name[SAMPLE_NAME_LEN]; /* --peer: a loop peer the sample drives on the CPU */
	int exec_scope;			 /* -e/--exec-scope: 0 thread, 1 warp, 2 block */
	double duration_s;		 /* --duration: seconds; 0 = until SIGINT */
	uint32_t pkt_size;		 /* -s/--size: frame bytes (send samples) */
	uint32_t threads;		 /* -t/--threads: CUDA threads (simple_send) */
	uint64_t interval_ns;		 /* -t/--time-interval (send_wait_time) */
	uint64_t peer_count;		 /* --peer-count: frames the peer sender sends */
	uint32_t peer_rate;		 /* --peer-rate: frames per second of the peer sender */
};

/* Set by SIGINT/SIGTERM (the handler sample_argp_start installs). */
extern volatile sig_atomic_t sample_force_quit;

/* Option groups: sample_argp_start(..., SAMPLE_OPT_GPU | SAMPLE_OPT_NIC | ..., ...). */
#define SAMPLE_OPT_GPU 0x01u
#define SAMPLE_OPT_NIC 0x02u /* -n, -d */
#define SAMPLE_OPT_SCOPE 0x04u
#define SAMPLE_OPT_DURATION 0x08u
#define SAMPLE_OPT_PEER 0x10u /* --peer, --peer-count, --peer-rate */
#define SAMPLE_OPT_SIZE 0x20u
#define SAMPLE_OPT_THREADS 0x40u
#define SAMPLE_OPT_INTERVAL 0x80u

/*
 * The start of a sample's main: the standard log backend, doca_argp_init(program, config), the
 * option groups which, then register_own (when not NULL) for the
 * sample's own options, doca_argp_start and the SIGINT/SIGTERM handler. On failure it says why
 * and releases ARGP: main returns EXIT_FAILURE.
 */
doca_error_t sample_argp_start(const char *program, void *config, unsigned int which,
			       doca_error_t (*register_own)(void), int argc, char **argv);
/* The end of a sample's main: says how the sample ended, releases ARGP; the exit status. */
int sample_exit(doca_error_t result);

/* A CLOCK_MONOTONIC / CLOCK_REALTIME time in seconds / nanoseconds. */
double sample_now_s(void);
uint64_t sample_realtime_ns(void);

/* Open the device whose PCIe address is pci (if not empty) or whose ibdev name is name. */
doca_error_t sample_open_dev(const char *pci, const char *name, struct doca_dev **dev);

/* gpunetio_cuda.cu: select the GPU (gpu_pcie empty: CUDA device 0, whose address is written
 * back), make its context current, report its compute capability major. */
doca_error_t sample_cuda_init(char *gpu_pcie, size_t len, int *cc_major);
/* Copy size bytes from the CPU to GPU memory on stream and wait for it. */
doca_error_t sample_cuda_copy_to_gpu(void *stream, void *dst_gpu, const void *src, size_t size);
/* A non-blocking stream (as a void *: the C files do not include CUDA). */
doca_error_t sample_cuda_stream_create(void **stream);
/* Wait until the stream's work is done: DOCA_ERROR_TIME_OUT after timeout_s (polled every ms),
 * DOCA_ERROR_DRIVER when the kernel failed. */
doca_error_t sample_cuda_stream_wait(void *stream, double timeout_s);
void sample_cuda_stream_destroy(void *stream);

/* GPU memory of the given type registered for dev (dma-buf when the GPU can export it). A zeroed
 * sample_gpu_buf holds nothing: destroying it does nothing. */
struct sample_gpu_buf {
	void *gpu; /* GPU address */
	void *cpu; /* CPU address (GPU_CPU, CPU_GPU), else NULL */
	size_t size;
	int dmabuf_fd; /* -1 when none */
	struct doca_mmap *mmap;
};
doca_error_t sample_gpu_buf_create(struct doca_gpu *gpu, struct doca_dev *dev, size_t size,
				   enum doca_gpu_mem_type mtype, struct sample_gpu_buf *buf);
void sample_gpu_buf_destroy(struct doca_gpu *gpu, struct sample_gpu_buf *buf);

/* DOCA Flow: a root basic pipe sending IPv4/UDP to the receive queue with this id (others
 * dropped), as DOCA's simple_receive sets it up. */
struct sample_flow {
	struct doca_flow_port *port;
	struct doca_flow_pipe *pipe;
	struct doca_flow_pipe_entry *entry;
	bool initialised;
};
doca_error_t sample_flow_udp_to_queue(struct doca_dev *dev, uint16_t queue_id,
				      struct sample_flow *flow);
void sample_flow_destroy(struct sample_flow *flow);

/* Stop a context, progressing pe (may be NULL) until it is idle (at most timeout_s). */
doca_error_t sample_ctx_stop(struct doca_ctx *ctx, struct doca_pe *pe, double timeout_s);

/*
 * What every sample holds (the first member of its resources, zeroed): the GPU, the NIC, its
 * queue (a receive or a send queue) and the packet buffer in GPU memory, the sample's own GPU
 * memory (sample_gpu_mem_alloc), the stream of the kernel and the loop peer. Torn down in this
 * order:
 *   sample_teardown_begin   the kernel stopped (nothing else is torn down while it runs)
 *   the sample's own        flow rules, proxy thread
 *   sample_resources_close  the sample's GPU memory, peer, stream, queue stopped and destroyed,
 *                           packet buffer, NIC, GPU
 */
#define SAMPLE_GPU_MEM_MAX 4
struct sample_resources {
	struct doca_gpu *gpu;
	struct doca_dev *dev;
	struct doca_eth_rxq *rxq; /* the receive queue (simple_receive), or */
	struct doca_eth_txq *txq; /* the send queue (simple_send, send_wait_time) */
	bool ctx_started;	  /* the queue's context was started */
	struct sample_gpu_buf pkt_buf;
	void *gpu_mem[SAMPLE_GPU_MEM_MAX]; /* sample_gpu_mem_alloc's, freed in this order */
	uint32_t nb_gpu_mem;
	void *stream;
	bool kernel_running; /* a kernel was launched on stream and not seen to end */
	struct sample_peer *peer;
};

/* The GPU (-g, sample_cuda_init, doca_gpu_create) and the NIC (-n or -d); cc_major may be NULL. */
doca_error_t sample_resources_open(struct sample_resources *res, struct sample_args *args,
				   int *cc_major);
/*
 * The send queue res->txq (configured by the caller) on the GPU data path: started, queue id 0,
 * its GPU handle.
 */
doca_error_t sample_txq_start_on_gpu(struct sample_resources *res,
				     struct doca_gpu_eth_txq **txq_gpu);
/*
 * The packet buffer: n frames (sample_build_frame, sequence numbers 0 to n-1, len bytes each)
 * stride bytes apart in GPU memory registered for res->dev, copied on res->stream; *mkey gets the
 * buffer's mkey (host byte order).
 */
doca_error_t sample_pkt_buf_fill(struct sample_resources *res, uint32_t n, size_t stride,
				 uint32_t len, const uint8_t dst[6], const uint8_t src[6],
				 uint32_t *mkey);
/*
 * Wait (at most timeout_s) for the kernel to end, after setting *exit_cpu (GPU_CPU memory the
 * kernel polls; NULL for a kernel that ends by itself) to 1. DOCA_SUCCESS when no kernel runs.
 */
doca_error_t sample_kernel_stop(struct sample_resources *res, uint32_t *exit_cpu, double timeout_s);
/*
 * The CPU while a persistent kernel runs: every second, prints *packets (CPU_GPU memory the
 * kernel counts in) as "packets<what>" and the rate since the last line, until SIGINT,
 * duration_s (0: none), *exit_cpu set or *error (NULL: none) not 0. Returns the seconds it ran.
 */
double sample_monitor(double duration_s, const uint32_t *exit_cpu, const uint32_t *error,
		      const uint64_t *packets, const char *what);
/* sample_kernel_stop (5 s); false, said, when the kernel still runs: tear nothing down. */
bool sample_teardown_begin(struct sample_resources *res, uint32_t *exit_cpu);
/*
 * The GPU part of res torn down through softdpu's rollback helper (a softdpu extension,
 * include/softdpu/gpunetio_rollback.h): *exit_cpu set to 1 (NULL: no kernel to stop), the
 * kernel's stream drained within 5 s or nothing is torn down (fail closed, false), then
 * before_stop(user) (the sample's own, e.g. its flow rules; may be NULL), the queue stopped and
 * destroyed, the packet buffer's mmap unregistered, the GPU memory freed (the sample's, newest
 * first, then the packet buffer), the doca_gpu destroyed. true when all of it went; then
 * sample_resources_close releases what is left (peer, stream, NIC).
 */
bool sample_rollback(struct sample_resources *res, uint32_t *exit_cpu, void (*before_stop)(void *),
		     void *user);
/*
 * size bytes of GPU memory of a type the CPU sees too (GPU_CPU or CPU_GPU), 4 KiB aligned, zeroed;
 * *gpu_ptr and *cpu_ptr get its two addresses. Recorded in res: sample_resources_close frees it.
 * On failure it says so, naming the memory what.
 */
doca_error_t sample_gpu_mem_alloc(struct sample_resources *res, const char *what, size_t size,
				  enum doca_gpu_mem_type mtype, void **gpu_ptr, void **cpu_ptr);
void sample_resources_close(struct sample_resources *res);

/*
 * Build an Ethernet/IPv4/UDP frame of len bytes (len >= 60): dst/src MAC, 10.0.0.1:1024 ->
 * 10.0.0.2:5001, valid IPv4 checksum, UDP checksum 0, payload: a 64-bit big-endian sequence
 * number at offset 42, then the byte (seq + k) at frame offset k.
 */
#define SAMPLE_FRAME_SEQ_OFF 42
#define SAMPLE_FRAME_MIN 60
void sample_build_frame(uint8_t *frame, uint32_t len, uint64_t seq, const uint8_t dst[6],
			const uint8_t src[6]);
/* 1 when frame is what sample_build_frame(len, its own seq) makes; *seq gets the number. */
int sample_check_frame(const uint8_t *frame, uint32_t len, uint64_t *seq);

/*
 * The CPU side of a loop peer (another device of this process): a sender thread that sends
 * count frames (0 = until stopped) of size bytes at rate frames/s (0 = as fast as the queue
 * takes them), or a receiver that counts frames, checks them with sample_check_frame and
 * records their CLOCK_REALTIME arrival times (the first max_times ones).
 */
struct sample_peer;
doca_error_t sample_peer_sender_start(const char *name, uint64_t count, uint32_t size,
				      uint32_t rate, struct sample_peer **peer);
doca_error_t sample_peer_receiver_start(const char *name, uint32_t max_times,
					struct sample_peer **peer);
struct sample_peer_stats {
	uint64_t frames; /* sent, or received */
	uint64_t bytes;
	uint64_t bad;		  /* received frames that fail sample_check_frame */
	uint32_t nb_times;	  /* arrival times recorded */
	const uint64_t *times_ns; /* valid until sample_peer_stop */
	const uint64_t *seqs;	  /* sequence number of each timed frame */
};
void sample_peer_get_stats(struct sample_peer *peer, struct sample_peer_stats *stats);
/* Stops the thread, the queue and the device; the stats pointers die with it. */
void sample_peer_stop(struct sample_peer *peer);

#ifdef __cplusplus
}
#endif

#endif /* GPUNETIO_COMMON_H_ */
