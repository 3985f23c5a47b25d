/*
 * softdpu internal: libdoca_eth's queue engine, shared by the receive and send queues.
 *
 * Every doca_dev that runs Ethernet queues has one engine port (struct sdp_eth_dport): the
 * backend port opened through the device provider's sdp_eth_port_ops, with one RX and one TX
 * queue, and one engine thread. The port opens when the first queue of the device starts and
 * closes when the last one stops. The engine thread sleeps on the backend's rx_fd (or a 1 ms
 * timer where the backend has none) only while some receive queue of the port has tasks
 * waiting; otherwise it sleeps on its own eventfd, so an idle port never spins. It classifies
 * each received frame with DOCA Flow (when a flow port is started on the device) and stores it
 * in the next waiting task of the receive queue that the verdict names.
 *
 * Locks: dport->lock guards the list of running receive queues, their waiting tasks and their
 * counters; dport->tx_lock serialises tx_burst on the port's TX queue.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_ETH_INT_H_
#define SDP_ETH_INT_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "doca_eth_rxq.h"
#include "doca_eth_rxq_cpu_data_path.h"
#include "doca_eth_txq.h"
#include "doca_eth_txq_cpu_data_path.h"
#include "sdp_ctx.h"
#include "sdp_eth_port.h"
#include "sdp_list.h"
#include "softdpu/eth.h"

#define SDP_ETH_RX_BURST 32	   /* frames the engine takes from the backend at once */
#define SDP_ETH_DEF_MAX_BURST 1024 /* doca_eth_*_cap_get_max_burst_size */

struct sdp_eth_dport {
	sdp_list_link_t link; /* in the list of open ports */
	struct doca_dev *dev;
	unsigned int refs; /* started queues using the port (global port lock) */
	const struct sdp_eth_port_ops *ops;
	struct sdp_eth_port *port;
	struct sdp_eth_port_info info;
	pthread_mutex_t lock;	 /* rxqs, their tasks and counters */
	pthread_mutex_t tx_lock; /* tx_burst on TX queue 0 */
	sdp_list_link_t rxqs;	 /* running receive queues, in start order */
	size_t waiting;		 /* receive tasks waiting over all rxqs (lock) */
	pthread_t thread;
	int wake_fd; /* eventfd: a task arrived, or stop */
	atomic_int stop;
	uint8_t *stage; /* SDP_ETH_RX_BURST frames of SDP_ETH_MAX_FRAME bytes */
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
	doca_eth_rxq_task_recv_completion_cb_t recv_ok_cb;
	doca_eth_rxq_task_recv_completion_cb_t recv_err_cb;
	uint32_t task_recv_num;	     /* 0: set_conf not called */
	struct sdp_eth_dport *dport; /* while started */
	sdp_list_link_t dport_link;  /* in dport->rxqs while running (dport->lock) */
	sdp_list_link_t waiting;     /* submitted receive tasks (dport->lock) */
	int has_queue_id;	     /* (dport->lock) */
	uint16_t queue_id;
	struct sdp_eth_rxq_counters counters; /* (dport->lock) */
};

struct doca_eth_rxq_task_recv {
	struct doca_task task; /* first */
	struct doca_eth_rxq *rxq;
	struct doca_buf *pkt;
	uint8_t l3_ok;
	uint8_t l4_ok;
	sdp_list_link_t link; /* in rxq->waiting */
};

/* Take (open on first use) / release the engine port of dev. Errors are logged. */
doca_error_t sdp_eth_dport_get(struct doca_dev *dev, struct sdp_eth_dport **dport_p);
void sdp_eth_dport_put(struct sdp_eth_dport *dport);

/* A receive task was queued: let the engine thread look (any thread). */
void sdp_eth_dport_kick(struct sdp_eth_dport *dport);

/* Software checksums of one frame in place (IPv4 header; UDP/TCP over IPv4/IPv6). */
void sdp_eth_csum_fill(uint8_t *frame, uint32_t len, int l3, int l4);

/* Whether the device's provider has Ethernet ports (capability queries). */
int sdp_eth_devinfo_has_port(const struct doca_devinfo *devinfo);

#endif /* SDP_ETH_INT_H_ */
