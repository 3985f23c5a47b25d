/*
 * softdpu: the GPU handles of the Ethernet queues (struct doca_gpu_eth_rxq / doca_gpu_eth_txq)
 * as the device API headers (doca_gpunetio_dev_eth_*.cuh) and libdoca_eth's engine both see
 * them. Installed because the device API is header-only; applications treat the handles as
 * opaque, as on DOCA.
 *
 * A handle lives in pinned host memory mapped into the GPU (doca_eth_*_get_gpu_handle returns
 * its device address), next to the queue's ring (softdpu/sdp_ring.h), which lives there too:
 * the engine (a CPU thread) and the kernels read and write them over PCIe with the ring's
 * single-writer rules. Only the fields marked "device" are written by kernels.
 *
 * RX: the engine produces into the ring; the frames themselves are in the application's packet
 * buffer (doca_eth_rxq_set_pkt_buf), slot i at pkt_addr + i * max_pkt_sz: copied there by the
 * engine with the copy engine when it is device memory (the completion is published only after
 * the copy landed), written in place when it is host memory mapped into the GPU. A receive call
 * claims what is published and releases it to the engine: at the end of the call in CYCLIC mode
 * (DOCA's semantics: a frame may be overwritten one ring lap later), at the start of the next
 * call in BACKPRESSURE mode (the frames of a call stay intact until the caller's next call).
 *
 * TX: kernels reserve descriptors with an atomic add on tx_rsvd, fill them (the frame's device
 * address, length, flags, send time), publish them in order (tx_ready, then the ring's producer
 * index), and the engine sends them: it reads each frame in place when its memory is host memory
 * mapped into the GPU, or copies it out of device memory. A descriptor flagged NOTIFY (and any
 * failed one) produces a completion that poll_completion consumes.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_SDP_GPU_ETH_H_
#define SOFTDPU_SDP_GPU_ETH_H_

#include <stdint.h>

#include "softdpu/sdp_ring.h"

#define SDP_GPU_ETH_RXQ_MAGIC 0x73644752u /* "sdGR" */
#define SDP_GPU_ETH_TXQ_MAGIC 0x73644754u /* "sdGT" */

/* Longest one device receive or completion wait may take when the caller sets no time limit. */
#define SDP_GPU_ETH_MAX_WAIT_NS 100000000ull /* 100 ms */
/* Longest a sender waits for a free descriptor before it gives the packet up (counted). */
#define SDP_GPU_ETH_TX_ROOM_WAIT_NS 1000000000ull /* 1 s */

/* rxq flags */
#define SDP_GPU_ETH_RXQ_F_BACKPRESSURE 0x1u /* release at the start of the next call */

/* txq flags */
#define SDP_GPU_ETH_TXQ_F_L3_CSUM 0x1u	    /* compute IPv4 header checksums (engine) */
#define SDP_GPU_ETH_TXQ_F_L4_CSUM 0x2u	    /* compute UDP/TCP checksums (engine) */
#define SDP_GPU_ETH_TXQ_F_WAIT_ON_TIME 0x4u /* wait-on-time offload enabled */

struct doca_gpu_eth_rxq {
	uint32_t magic;	     /* SDP_GPU_ETH_RXQ_MAGIC */
	uint32_t flags;	     /* SDP_GPU_ETH_RXQ_F_* */
	uint64_t ring;	     /* device address of the ring header (struct sdp_ring_hdr) */
	uint64_t pkt_addr;   /* device address of packet slot 0 */
	uint32_t pkt_num;    /* packet slots (the ring's nb_slots) */
	uint32_t max_pkt_sz; /* bytes from one slot to the next */
	uint32_t pkt_mkey;   /* what doca_gpu_dev_eth_rxq_get_pkt_mkey returns */
	uint32_t reserved0;
	uint64_t reserved[4];
};

struct doca_gpu_eth_txq {
	uint32_t magic; /* SDP_GPU_ETH_TXQ_MAGIC */
	uint32_t flags; /* SDP_GPU_ETH_TXQ_F_* */
	uint64_t ring;	/* device address of the TX ring header (struct sdp_ring_tx_hdr) */
	uint32_t nb_desc;
	uint32_t desc_mask;
	uint32_t nic_handler; /* enum doca_gpu_dev_eth_nic_handler chosen on the host */
	uint32_t reserved0;
	/* device: written by kernels only */
	uint64_t tx_rsvd;  /* descriptors reserved so far (atomic add) */
	uint64_t tx_ready; /* descriptors before it are filled and published in order */
	uint64_t cq_rsvd;  /* completions reserved by pollers (atomic add) */
	uint64_t tx_lost;  /* packets given up for want of a free descriptor */
	int32_t cq_lock;   /* serialises completion polling across threads */
	uint32_t reserved1;
	uint64_t reserved[3];
};

#endif /* SOFTDPU_SDP_GPU_ETH_H_ */
