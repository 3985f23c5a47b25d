/*
 * libdoca_eth: the engine port of a device (one per doca_dev with started queues), its receive
 * thread and the software checksums. See sdp_eth_int.h.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "doca_buf.h"
#include "sdp_eth_int.h"
#include "sdp_flow.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("eth");

#define ENGINE_IDLE_MS 1000 /* longest sleep; the stop flag is also read at every wake-up */
#define ENGINE_POLL_MS 1    /* timer for backends without an rx_fd, while tasks wait */
#define ENGINE_ROUNDS 8	    /* bursts per wake-up before sleeping again */

static pthread_mutex_t g_ports_lock = PTHREAD_MUTEX_INITIALIZER;
static sdp_list_link_t g_ports = SDP_LIST_HEAD_INIT(g_ports);

/* ---- delivery ------------------------------------------------------------------------------- */

/* The running receive queue a frame goes to for a verdict; NULL: dropped. (dport->lock) */
static struct doca_eth_rxq *pick_rxq(struct sdp_eth_dport *dport, int verdict, uint16_t queue_id)
{
	struct doca_eth_rxq *rxq;

	if (sdp_list_is_empty(&dport->rxqs))
		return NULL;
	if (verdict == SDP_FLOW_FORWARD) {
		sdp_list_for_each(rxq, &dport->rxqs, dport_link)
			if (rxq->has_queue_id && rxq->queue_id == queue_id)
				return rxq;
		return NULL;
	}
	if (verdict == SDP_FLOW_DROP)
		return NULL;
	/* no rules, or a miss DOCA leaves to the port's default: the first queue started */
	return sdp_container_of(dport->rxqs.next, struct doca_eth_rxq, dport_link);
}

/* Store one frame in the next waiting task of rxq and complete it. (dport->lock) */
static void deliver(struct sdp_eth_dport *dport, struct doca_eth_rxq *rxq,
		    const struct sdp_pkt *pkt)
{
	struct doca_eth_rxq_task_recv *task;
	void *head = NULL;
	size_t cap = 0;
	uint32_t len = pkt->len;
	doca_error_t status = DOCA_SUCCESS;

	if (sdp_list_is_empty(&rxq->waiting)) {
		rxq->counters.no_task++;
		return;
	}
	task = sdp_container_of(rxq->waiting.next, struct doca_eth_rxq_task_recv, link);
	sdp_list_del(&task->link);
	dport->waiting--;
	if (doca_buf_get_head(task->pkt, &head) != DOCA_SUCCESS ||
	    doca_buf_get_len(task->pkt, &cap) != DOCA_SUCCESS) {
		/* the buffer died under the task: nothing to store into */
		sdp_warn("eth_rxq %p: receive task %p has no usable buffer", (void *)rxq,
			 (void *)task);
		sdp_task_complete(&task->task, DOCA_ERROR_INVALID_VALUE);
		return;
	}
	if (cap > rxq->max_packet_size)
		cap = rxq->max_packet_size;
	if ((pkt->flags & SDP_PKT_F_TRUNCATED) != 0 || len > cap || pkt->wire_len > len) {
		rxq->counters.truncated++;
		status = DOCA_ERROR_TOO_BIG;
		if (len > cap)
			len = (uint32_t)cap;
	}
	memcpy(head, pkt->data, len);
	(void)doca_buf_set_data(task->pkt, head, len);
	task->l3_ok = (pkt->flags & SDP_PKT_F_L3_CSUM_BAD) == 0;
	task->l4_ok = (pkt->flags & SDP_PKT_F_L4_CSUM_BAD) == 0;
	if (!task->l3_ok || !task->l4_ok)
		rxq->counters.csum_bad++;
	if (status == DOCA_SUCCESS) {
		rxq->counters.packets++;
		rxq->counters.bytes += len;
	}
	sdp_task_complete(&task->task, status);
}

/* Take frames from the backend while tasks wait; returns the frames taken. */
static unsigned int engine_rx(struct sdp_eth_dport *dport)
{
	struct sdp_pkt pkts[SDP_ETH_RX_BURST];
	unsigned int total = 0;

	for (int round = 0; round < ENGINE_ROUNDS; round++) {
		struct doca_flow_port *flow;
		size_t want;
		uint16_t got = 0;

		pthread_mutex_lock(&dport->lock);
		want = dport->waiting;
		pthread_mutex_unlock(&dport->lock);
		if (want == 0)
			break;
		if (want > SDP_ETH_RX_BURST)
			want = SDP_ETH_RX_BURST;
		for (size_t i = 0; i < want; i++)
			pkts[i] = (struct sdp_pkt){.data = dport->stage + i * SDP_ETH_MAX_FRAME,
						   .cap = SDP_ETH_MAX_FRAME};
		for (uint16_t q = 0; q < dport->info.nb_rxq && got < want; q++)
			got += dport->ops->rx_burst(dport->port, q, pkts + got,
						    (uint16_t)(want - got));
		if (got == 0)
			break;
		total += got;
		/* looked up per burst: the application may start or replace its flow port any time */
		flow = sdp_flow_port_get(dport->dev);
		pthread_mutex_lock(&dport->lock);
		for (uint16_t i = 0; i < got; i++) {
			uint16_t queue_id = 0;
			int verdict = sdp_flow_classify(flow, pkts[i].data, pkts[i].len, &queue_id);
			struct doca_eth_rxq *rxq = pick_rxq(dport, verdict, queue_id);

			if (rxq != NULL)
				deliver(dport, rxq, &pkts[i]);
		}
		pthread_mutex_unlock(&dport->lock);
		if (flow != NULL)
			sdp_flow_port_put(flow);
		if (got < want)
			break;
	}
	return total;
}

static void *engine_main(void *arg)
{
	struct sdp_eth_dport *dport = arg;

	while (!atomic_load(&dport->stop)) {
		struct pollfd pfd[1 + 64];
		nfds_t n = 1;
		int timeout = ENGINE_IDLE_MS;
		size_t waiting;

		pfd[0] = (struct pollfd){.fd = dport->wake_fd, .events = POLLIN};
		pthread_mutex_lock(&dport->lock);
		waiting = dport->waiting;
		pthread_mutex_unlock(&dport->lock);
		if (waiting > 0) {
			for (uint16_t q = 0; q < dport->info.nb_rxq && n < 1 + 64; q++) {
				int fd = dport->info.has_rx_fd ? dport->ops->rx_fd(dport->port, q) :
								 -1;

				if (fd < 0) {
					timeout = ENGINE_POLL_MS;
					continue;
				}
				pfd[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
			}
		}
		if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
			sdp_error("engine of port %p: poll failed: %m", (void *)dport);
			break;
		}
		if (pfd[0].revents & POLLIN) {
			uint64_t v;

			if (read(dport->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				sdp_warn("engine of port %p: reading its eventfd failed: %m",
					 (void *)dport);
		}
		if (waiting > 0)
			engine_rx(dport);
	}
	return NULL;
}

void sdp_eth_dport_kick(struct sdp_eth_dport *dport)
{
	uint64_t one = 1;

	if (write(dport->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		sdp_warn("waking the engine failed: %m");
}

/* ---- the port ------------------------------------------------------------------------------- */

doca_error_t sdp_eth_dport_get(struct doca_dev *dev, struct sdp_eth_dport **dport_p)
{
	const struct sdp_eth_port_ops *ops = sdp_dev_get_eth_ops(dev);
	struct sdp_eth_port_cfg cfg = {.nb_rxq = 1, .nb_txq = 1, .ring_size = 1024};
	struct sdp_eth_dport *dport;
	doca_error_t status;
	int rc;

	if (ops == NULL) {
		sdp_error("device %p has no Ethernet port", (void *)dev);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	pthread_mutex_lock(&g_ports_lock);
	sdp_list_for_each(dport, &g_ports, link) {
		if (dport->dev == dev) {
			dport->refs++;
			pthread_mutex_unlock(&g_ports_lock);
			*dport_p = dport;
			return DOCA_SUCCESS;
		}
	}
	dport = calloc(1, sizeof(*dport));
	if (dport == NULL) {
		sdp_error("no memory for the engine port of device %p", (void *)dev);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_unlock;
	}
	dport->stage = malloc((size_t)SDP_ETH_RX_BURST * SDP_ETH_MAX_FRAME);
	if (dport->stage == NULL) {
		sdp_error("no memory for the receive buffers of device %p", (void *)dev);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_free;
	}
	dport->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (dport->wake_fd < 0) {
		sdp_error("eventfd for the engine of device %p failed: %m", (void *)dev);
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_stage;
	}
	status = ops->port_open(sdp_dev_get_priv(dev), &cfg, &dport->port, &dport->info);
	if (status != DOCA_SUCCESS) {
		sdp_error("opening the Ethernet port of device %p failed: %s", (void *)dev,
			  doca_error_get_descr(status));
		goto err_fd;
	}
	dport->dev = dev;
	dport->ops = ops;
	dport->refs = 1;
	sdp_list_head_init(&dport->rxqs);
	pthread_mutex_init(&dport->lock, NULL);
	pthread_mutex_init(&dport->tx_lock, NULL);
	atomic_init(&dport->stop, 0);
	rc = pthread_create(&dport->thread, NULL, engine_main, dport);
	if (rc != 0) {
		sdp_error("starting the engine thread of device %p failed: %s", (void *)dev,
			  strerror(rc));
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto err_close;
	}
	sdp_dev_hold(dev);
	sdp_list_add_tail(&g_ports, &dport->link);
	pthread_mutex_unlock(&g_ports_lock);
	*dport_p = dport;
	return DOCA_SUCCESS;

err_close:
	pthread_mutex_destroy(&dport->tx_lock);
	pthread_mutex_destroy(&dport->lock);
	ops->port_close(dport->port);
err_fd:
	close(dport->wake_fd);
err_stage:
	free(dport->stage);
err_free:
	free(dport);
err_unlock:
	pthread_mutex_unlock(&g_ports_lock);
	return status;
}

void sdp_eth_dport_put(struct sdp_eth_dport *dport)
{
	pthread_mutex_lock(&g_ports_lock);
	if (--dport->refs > 0) {
		pthread_mutex_unlock(&g_ports_lock);
		return;
	}
	sdp_list_del(&dport->link);
	pthread_mutex_unlock(&g_ports_lock);

	atomic_store(&dport->stop, 1);
	sdp_eth_dport_kick(dport);
	pthread_join(dport->thread, NULL);
	dport->ops->port_close(dport->port);
	sdp_dev_release(dport->dev);
	close(dport->wake_fd);
	pthread_mutex_destroy(&dport->tx_lock);
	pthread_mutex_destroy(&dport->lock);
	free(dport->stage);
	free(dport);
}

int sdp_eth_devinfo_has_port(const struct doca_devinfo *devinfo)
{
	const char *provider = sdp_devinfo_get_provider_name(devinfo);

	/* host is the one provider without Ethernet ports (src/common/sdp_provider.h) */
	return provider != NULL && strcmp(provider, "host") != 0;
}

/* ---- checksums ------------------------------------------------------------------------------ */

static uint32_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void sdp_eth_csum_fill(uint8_t *frame, uint32_t len, int l3, int l4)
{
	uint32_t off = 14, l4_off, l4_len, pseudo;
	uint16_t ethertype;
	uint8_t proto;

	if (len < 14)
		return;
	ethertype = (uint16_t)(frame[12] << 8 | frame[13]);
	if (ethertype == 0x8100 && len >= 18) {
		ethertype = (uint16_t)(frame[16] << 8 | frame[17]);
		off = 18;
	}
	if (ethertype == 0x0800) {
		uint8_t *ip = frame + off;
		uint32_t ihl, total;

		if (len < off + 20 || (ip[0] >> 4) != 4)
			return;
		ihl = (uint32_t)(ip[0] & 0xf) * 4;
		total = (uint32_t)(ip[2] << 8 | ip[3]);
		if (ihl < 20 || len < off + ihl)
			return;
		if (l3) {
			put16(ip + 10, 0);
			put16(ip + 10, fold(sum16(ip, ihl, 0)));
		}
		/* fragments past the first carry no transport header */
		if ((ip[6] & 0x1f) != 0 || ip[7] != 0 || total < ihl || len < off + total)
			return;
		proto = ip[9];
		l4_off = off + ihl;
		l4_len = total - ihl;
		pseudo = sum16(ip + 12, 8, 0) + proto + l4_len;
	} else if (ethertype == 0x86dd) {
		uint8_t *ip = frame + off;

		if (len < off + 40)
			return;
		proto = ip[6]; /* extension headers are left alone */
		l4_off = off + 40;
		l4_len = (uint32_t)(ip[4] << 8 | ip[5]);
		if (len < l4_off + l4_len)
			return;
		pseudo = sum16(ip + 8, 32, 0) + proto + l4_len;
	} else {
		return;
	}
	if (!l4)
		return;
	if (proto == 17 && l4_len >= 8) {
		uint16_t c;

		put16(frame + l4_off + 6, 0);
		c = fold(sum16(frame + l4_off, l4_len, pseudo));
		put16(frame + l4_off + 6, c == 0 ? 0xffff : c);
	} else if (proto == 6 && l4_len >= 20) {
		put16(frame + l4_off + 16, 0);
		put16(frame + l4_off + 16, fold(sum16(frame + l4_off, l4_len, pseudo)));
	}
}
