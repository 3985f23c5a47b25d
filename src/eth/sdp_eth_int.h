/*
 * softdpu internal: libdoca_eth's queue engine, shared by the receive and send queues.
 *
 * Every doca_dev that runs Ethernet queues has one engine port (struct sdp_eth_dport): the
 * backend port opened through the device provider's sdp_eth_port_ops, with one RX and one TX
 * queue, and one engine thread. The port opens when the first queue of the device starts and
 * closes when the last one stops.
 *
 * Each running receive queue owns an RX ring (sdp_ring.h): the engine thread is its producer,
 * the queue's consumer (doca_pe_progress on the CPU data path) empties it. The engine takes a
 * burst from the backend, classifies each frame with DOCA Flow (when a flow port is started on
 * the device) and pushes it into the ring of the queue the verdict names. Back-pressured rings
 * (include/softdpu/eth.h) limit each burst to the room of the fullest one; when one is full the
 * engine leaves the backend alone and sleeps until a consumer releases slots.
 *
 * The engine thread sleeps on the backend's rx_fd (or a 1 ms timer where the backend has none)
 * while it can take frames, on its own eventfd otherwise (no receive queue, or a full
 * back-pressured ring); every sleep is bounded, so an idle port never spins.
 *
 * Locks, in the order they nest (a lock is only ever taken while holding those above it):
 *
 *   g_ports_lock (engine.c)  the list of open ports and each dport->refs. Held by
 *                            sdp_eth_dport_get (across the backend's port_open and the engine
 *                            thread's creation), sdp_eth_dport_put (dropped before the engine
 *                            thread is joined) and sdp_eth_dev_get_port_counters (across the
 *                            backend's stats op). Never held together with a dport lock, in
 *                            either order; the engine thread never takes it.
 *   dport->lock              the queues the engine serves, see below.
 *     flow port->lock        (read) sdp_flow_classify, per frame, inside the RX burst.
 *     dport->tx_lock         the GPU send poll's tx_burst, inside dport->lock; the CPU send
 *                            path (txq_cpu.c) takes it alone.
 *
 * dport->lock covers, as fields: dport->rxqs (running receive queues, in start order) and every
 * rxq's dport_link, has_queue_id, queue_id and eng_touched; dport->gtxqs (running GPU send
 * queues) and each one's link. It is held
 *   - by the engine thread across everything that uses a queue of those lists: the burst
 *     budget (engine_budget: ring room, marking rings full, held_by_gpu), a whole RX burst
 *     (engine_rx: classification, pick_rxq, the ring pushes or the GPU RX copies, then
 *     notify_consumers' eventfd writes), publishing landed GPU RX copies
 *     (engine_gpu_rx_retire), the check for GPU send queues and a whole GPU send poll
 *     (sdp_eth_gpu_tx_poll: copies out of device memory, offloads, tx_burst, completions);
 *   - by application threads to join or leave the lists and to set queue ids: the receive
 *     queue's start and stop (rxq.c), doca_eth_rxq_apply_queue_id, sdp_eth_gpu_txq_start/stop.
 * So a queue leaves a list only between the engine's bursts and polls, and once it is off the
 * list the engine no longer touches its ring, its eventfd or its GPU state. Inside it the
 * engine calls the CUDA driver (GPU RX/TX copies, stream synchronisation: bounded) and takes
 * the locks above; nothing inside it blocks on an application thread. sdp_flow_port_get/put
 * (sdp_flow_lock) are called outside it.
 *
 * dport->tx_lock serialises tx_burst on the port's TX queue 0 and covers the port's tx_*
 * counters and, on the CPU path, the queue's checksum stage (txq->stage). The backend's
 * rx_burst runs on the engine thread without a lock. A receive queue's ring consumer side, its
 * tasks and its consumer counters belong to the thread that calls doca_pe_progress; a send
 * queue's backlog and counters to the application thread that submits and progresses it.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_ETH_INT_H_
#define SDP_ETH_INT_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "doca_eth_rxq.h"
#include "doca_eth_rxq_cpu_data_path.h"
#include "doca_eth_txq.h"
#include "doca_eth_txq_cpu_data_path.h"
#include "doca_eth_txq_gpu_data_path.h"
#include "sdp_ctx.h"
#include "sdp_list.h"
#include "sdp_provider_eth.h"
#include "sdp_task_batch.h"
#include "softdpu/sdp_ring.h"
#include "softdpu/eth.h"

/*
 * The per-frame flags of the port ABI (enum sdp_pkt_flags, sdp_provider_eth.h) and the flags of a
 * receive ring's CQE (SDP_RING_CQE_F_*, softdpu/sdp_ring.h: installed, read by GPU kernels) are
 * one set: the engine copies a frame's flags into its CQE as they are, masked to the set.
 */
_Static_assert(SDP_PKT_F_L3_CSUM_BAD == SDP_RING_CQE_F_L3_CSUM_BAD, "L3 checksum flag");
_Static_assert(SDP_PKT_F_L4_CSUM_BAD == SDP_RING_CQE_F_L4_CSUM_BAD, "L4 checksum flag");
_Static_assert(SDP_PKT_F_CSUM_PARTIAL == SDP_RING_CQE_F_CSUM_PARTIAL, "partial checksum flag");
_Static_assert(SDP_PKT_F_TRUNCATED == SDP_RING_CQE_F_TRUNCATED, "truncated flag");
#define SDP_ETH_PKT_CQE_FLAGS                                                                      \
	(SDP_RING_CQE_F_L3_CSUM_BAD | SDP_RING_CQE_F_L4_CSUM_BAD | SDP_RING_CQE_F_CSUM_PARTIAL |   \
	 SDP_RING_CQE_F_TRUNCATED)

#define SDP_ETH_RX_BURST 32	   /* frames the engine takes from the backend at once */
#define SDP_ETH_DEF_MAX_BURST 1024 /* doca_eth_*_cap_get_max_burst_size */

struct sdp_eth_dport {
	sdp_list_link_t link; /* in the list of open ports */
	struct doca_dev *dev;
	unsigned int refs; /* started queues using the port (global port lock) */
	const struct sdp_eth_port_ops *ops;
	struct sdp_eth_port *port;
	struct sdp_eth_port_info info;
	pthread_mutex_t lock;	 /* rxqs, gtxqs, the queues' links and ids (see the top) */
	pthread_mutex_t tx_lock; /* tx_burst on TX queue 0, tx counters (nests in lock) */
	sdp_list_link_t rxqs;	 /* running receive queues, in start order */
	pthread_t thread;
	int wake_fd; /* eventfd: a queue started, a ring has room again, or stop */
	atomic_int stop;
	uint8_t *stage; /* SDP_ETH_RX_BURST frames of SDP_ETH_MAX_FRAME bytes */
	/* port counters: rx_* written by the engine thread, tx_* under tx_lock (relaxed atomics) */
	uint64_t rx_packets, rx_bytes, rx_unsteered, rx_wait;
	uint64_t tx_packets, tx_bytes;
	sdp_list_link_t gtxqs; /* running GPU send queues (lock) */
	unsigned int gpu_idle; /* engine rounds without GPU send work (engine thread) */
	int held_by_gpu;       /* a full back-pressured ring is a kernel's (engine thread) */
	/* SOFTDPU_ETH_PROFILE: the engine's receive time (engine thread), logged at close */
	int prof_on;
	struct {
		uint64_t bursts, frames, burst_ns, work_ns;
	} prof;
	/* the steering the backend has (ops->steer; engine thread): flow generation, summary */
	int steer_set;
	uint64_t steer_gen;
	struct sdp_eth_steer steer;
};

/* SOFTDPU_ETH_PROFILE (docs/environment.md): read once per process. */
int sdp_eth_profile_enabled(void);

/* A clock in ns. */
static inline uint64_t sdp_eth_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The monotonic clock in ns while profiling, else 0 (no clock read). */
static inline uint64_t sdp_eth_prof_now(int on)
{
	return on ? sdp_eth_now_ns(CLOCK_MONOTONIC) : 0;
}

/* The GPU data path of a running receive queue (gpu.c). */
struct sdp_eth_gpu_rxq;
/* The GPU data path of a running send queue (gpu.c); the engine sends its descriptors. */
struct sdp_eth_gpu_txq;

struct doca_eth_rxq_event_batch_managed_recv {
	struct doca_eth_rxq *rxq;
};

struct doca_eth_rxq {
	struct doca_ctx ctx; /* first: the context base */
	struct doca_dev *dev;
	enum doca_eth_rxq_type type;
	uint32_t max_burst_size;
	uint32_t max_packet_size;
	struct doca_mmap *mmap; /* set_pkt_buf (referenced) */
	uint32_t mmap_offset;
	uint32_t mmap_len;
	/* REGULAR: receive tasks */
	doca_eth_rxq_task_recv_completion_cb_t recv_ok_cb;
	doca_eth_rxq_task_recv_completion_cb_t recv_err_cb;
	uint32_t task_recv_num;	 /* 0: set_conf not called */
	sdp_list_link_t waiting; /* submitted receive tasks (consumer thread) */
	uint32_t nwaiting;	 /* their number */
	/* MANAGED_MEMPOOL: batch receive events */
	int batch_registered;
	uint32_t batch_max, batch_min;
	union doca_data batch_user_data;
	doca_eth_rxq_event_batch_managed_recv_handler_cb_t batch_ok_cb;
	doca_eth_rxq_event_batch_managed_recv_handler_cb_t batch_err_cb;
	struct doca_buf_inventory *inv; /* buffers over ring slots (while started) */
	struct doca_buf **batch_bufs;	/* batch_max, the buffers of the batch in flight */
	struct doca_eth_rxq_event_batch_managed_recv batch_event;
	/* the ring */
	enum sdp_eth_overflow overflow; /* as set (DEFAULT resolved at start) */
	uint32_t ring_slots_req;	/* sdp_eth_rxq_set_ring_size, 0: default */
	struct sdp_ring_hdr *ring;	/* while started */
	void *ring_alloc;		/* ring memory we allocated (NULL: in the pkt_buf mmap) */
	struct sdp_ring_counters ring_acc; /* ring counters of earlier runs */
	struct sdp_eth_dport *dport;	   /* while started */
	sdp_list_link_t dport_link;	   /* in dport->rxqs while running (dport->lock) */
	int has_queue_id;		   /* (dport->lock) */
	uint16_t queue_id;
	/* event mode: the engine writes ev_fd when want_wake is set */
	int ev_fd;
	atomic_int want_wake;
	atomic_int ev_signaled;
	int eng_touched; /* the current burst pushed into the ring (engine, dport->lock) */
	/* consumer counters (consumer thread) */
	uint64_t packets, bytes, truncated;
	/* GPU data path (issue 5): set while started with doca_ctx_set_datapath_on_gpu */
	struct sdp_eth_gpu_rxq *gpu_rx;
	int gpu_mcst; /* doca_eth_rxq_gpu_enable_mcst_qp (accepted; nothing to do here) */
};

struct doca_eth_rxq_task_recv {
	struct doca_task task; /* first */
	struct doca_eth_rxq *rxq;
	struct doca_buf *pkt;
	/* the received frame, for the checksum verdicts (computed when asked: rxq_cpu.c) */
	const uint8_t *frame;
	uint32_t frame_len;
	uint32_t cqe_flags;   /* SDP_RING_CQE_F_* */
	sdp_list_link_t link; /* in rxq->waiting */
};

/* ---- the send queue (txq.c, txq_cpu.c, txq_gpu.c) ---- */

struct doca_eth_txq_task_send;
struct sdp_eth_txq_batch;

/* An entry of the backlog: a send task or a batch send task (exactly one is set). */
struct sdp_eth_txq_item {
	sdp_list_link_t link; /* in txq->backlog */
	struct doca_eth_txq_task_send *send;
	struct sdp_eth_txq_batch *batch;
};

struct doca_eth_txq {
	struct doca_ctx ctx; /* first: the context base */
	struct doca_dev *dev;
	uint32_t max_burst_size;
	uint8_t l3_csum;
	uint8_t l4_csum;
	doca_eth_txq_task_send_completion_cb_t send_ok_cb;
	doca_eth_txq_task_send_completion_cb_t send_err_cb;
	uint32_t task_send_num;
	uint32_t num_send; /* send tasks allocated and not freed */
	/* batch send tasks (batch_max 0: not configured) */
	doca_eth_txq_task_batch_send_completion_cb_t batch_ok_cb;
	doca_eth_txq_task_batch_send_completion_cb_t batch_err_cb;
	uint16_t batch_max;		      /* tasks per batch at most: 16, 32, 64 or 128 */
	uint16_t batch_num;		      /* batches the application may hold */
	uint16_t batch_held;		      /* batches allocated and not freed */
	struct sdp_eth_txq_batch *batch_pool; /* freed batches (all of batch_max tasks) */
	int has_queue_id;
	uint16_t queue_id;
	struct sdp_eth_dport *dport; /* while started */
	sdp_list_link_t backlog;     /* txq_items not sent yet, in order (application thread) */
	int unpushed;		     /* the backlog has items never offered to the backend */
	/*
	 * Event mode: a timerfd in the PE, armed when the application goes to sleep with the
	 * backlog waiting for a full backend (1 ms, doubling to 16 ms while it stays full), so
	 * the program wakes up and the next progress call retries (backends give no
	 * room-again event the PE could wait on for every queue). -1 when not started.
	 */
	int retry_fd;
	int retry_armed;
	uint32_t retry_ms;
	uint8_t *stage; /* checksum offload: the frame as sent (dport->tx_lock) */
	struct sdp_eth_txq_counters counters; /* application thread; read by get_counters */
	/* GPU data path (issue 5) */
	struct sdp_eth_gpu_txq *gpu_tx; /* while started on the GPU */
	int wait_on_time, completion_on_gpu, uar_on_cpu;
	doca_eth_txq_gpu_event_error_send_packet_cb_t ev_error_cb;
	doca_eth_txq_gpu_event_notify_send_packet_cb_t ev_notify_cb;
	union doca_data ev_error_ud, ev_notify_ud;
};

struct doca_eth_txq_task_send {
	struct doca_task task; /* first */
	struct doca_eth_txq *txq;
	struct doca_buf *pkt;
	struct sdp_eth_txq_item item;
};

struct sdp_eth_txq_batch {
	struct doca_task_batch batch; /* first */
	struct doca_eth_txq *txq;
	struct doca_buf **pkts; /* batch_max entries; the application fills tasks_num */
	uint16_t next;		/* while submitted: frames handled so far */
	struct sdp_eth_txq_item item;
	struct sdp_eth_txq_batch *pool_next; /* in txq->batch_pool while freed */
	/* followed by the arrays: pkts, task user data, statuses (batch_max each) */
};

/* Take (open on first use) / release the engine port of dev. Errors are logged. */
doca_error_t sdp_eth_dport_get(struct doca_dev *dev, struct sdp_eth_dport **dport_p);
void sdp_eth_dport_put(struct sdp_eth_dport *dport);

/* Wake the engine thread: a queue started or stopped, or a full ring has room (any thread). */
void sdp_eth_dport_kick(struct sdp_eth_dport *dport);

/* Count frames the port sent (tx_lock held). */
static inline void sdp_eth_dport_count_tx(struct sdp_eth_dport *dport, uint64_t bytes)
{
	__atomic_store_n(&dport->tx_packets, dport->tx_packets + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&dport->tx_bytes, dport->tx_bytes + bytes, __ATOMIC_RELAXED);
}

/* ---- receive queue: CPU data path (rxq_cpu.c), the context ops' progress and arm ---- */

int sdp_eth_rxq_progress(struct doca_ctx *ctx);
int sdp_eth_rxq_arm(struct doca_ctx *ctx);

/* ---- send queue: CPU data path (txq_cpu.c) ---- */

/* Send what waits in the backlog while the backend takes it; 1 when anything moved. */
int sdp_eth_txq_backlog_push(struct doca_eth_txq *txq);
/* Complete every backlog entry with DOCA_ERROR_IO_FAILED, in order (the queue stops). */
void sdp_eth_txq_backlog_fail(struct doca_eth_txq *txq);
/* Free the pooled batch send tasks (destroy). */
void sdp_eth_txq_batch_pool_drain(struct doca_eth_txq *txq);

/* ---- send queue: GPU data path (txq_gpu.c) ---- */

/* Start / stop a send queue on the GPU data path (the context's start and stop). */
doca_error_t sdp_eth_txq_gpu_start(struct doca_eth_txq *txq);
void sdp_eth_txq_gpu_stop(struct doca_eth_txq *txq);

/* ---- GPU data path (gpu.c) ---- */

/* Start/stop the GPU side of a CYCLIC receive queue (ring and handle in mapped host memory). */
doca_error_t sdp_eth_gpu_rxq_start(struct doca_eth_rxq *rxq);
void sdp_eth_gpu_rxq_stop(struct doca_eth_rxq *rxq);
/*
 * Engine: one frame into a GPU queue's ring; flush: copies land, then completions publish.
 * more: the backend gave a full burst (more is likely waiting): the copy may wait to carry
 * more frames.
 */
void sdp_eth_gpu_rx_push(struct doca_eth_rxq *rxq, const struct sdp_pkt *pkt);
/* Where the frame of ring position pos belongs (*cap: its room): the packet slot of a queue on
 * mapped host memory, else the ring slot it is staged in for the copy engine. A frame the backend
 * wrote there is pushed without a copy. */
void *sdp_eth_gpu_rx_dest(const struct doca_eth_rxq *rxq, uint32_t pos, uint32_t *cap);
void sdp_eth_gpu_rx_flush(struct doca_eth_rxq *rxq, int more);
/* Whether frames of the queue are staged or copies in flight (completions not published). */
int sdp_eth_gpu_rx_inflight(const struct doca_eth_rxq *rxq);
/* The device address of the queue's GPU handle. */
struct doca_gpu_eth_rxq *sdp_eth_gpu_rxq_handle(const struct doca_eth_rxq *rxq);

/* What a GPU send queue needs from its doca_eth_txq (txq.c fills it before start). */
struct sdp_eth_gpu_txq_cfg {
	struct doca_ctx *ctx;
	struct doca_gpu *gpu;
	uint32_t max_burst_size;
	int l3_csum, l4_csum, wait_on_time, completion_on_gpu;
	uint32_t nic_handler;
	void (*notify_cb)(void *txq, uint32_t pos, uint64_t ts_ns); /* NULL: not registered */
	void (*error_cb)(void *txq, uint32_t pos);		    /* NULL: not registered */
	void *txq;
};
doca_error_t sdp_eth_gpu_txq_start(const struct sdp_eth_gpu_txq_cfg *cfg,
				   struct sdp_eth_dport *dport, struct sdp_eth_gpu_txq **gtxq_p);
void sdp_eth_gpu_txq_stop(struct sdp_eth_gpu_txq *gtxq);
/* PE progress of a GPU send queue whose completions the CPU consumes (events). */
int sdp_eth_gpu_txq_progress(struct sdp_eth_gpu_txq *gtxq);
struct doca_gpu_eth_txq *sdp_eth_gpu_txq_handle(const struct sdp_eth_gpu_txq *gtxq);
void sdp_eth_gpu_txq_counters(const struct sdp_eth_gpu_txq *gtxq, struct sdp_eth_txq_counters *c);
/* Engine: send what the GPU send queues of the port posted; returns the descriptors handled. */
unsigned int sdp_eth_gpu_tx_poll(struct sdp_eth_dport *dport, uint64_t *next_ns);

/* Whether the device's provider has Ethernet ports (capability queries). */
int sdp_eth_devinfo_has_port(const struct doca_devinfo *devinfo);

#endif /* SDP_ETH_INT_H_ */
