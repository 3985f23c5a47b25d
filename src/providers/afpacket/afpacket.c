/*
 * The `afpacket` device provider: any Linux network interface as a software NIC, through
 * AF_PACKET sockets with memory-mapped rings.
 *
 *   afpacket:iface=<linux ifname>[,name=<ibdev>][,queues=N][,frames=N]
 *
 * name defaults to iface. queues (1..AFP_MAX_QUEUES, default 1) is the most RX queues a port
 * spreads traffic over: each is one socket of a PACKET_FANOUT_HASH group (a flow always lands on
 * the same queue). frames (AFP_MIN_FRAMES..AFP_MAX_FRAMES) is the ring depth of each queue in
 * frames; without it the engine's hint (port cfg ring_size) or AFP_DEF_FRAMES.
 *
 * RX: TPACKET_V3, the block-based ring: blocks of AFP_RX_BLOCK bytes the kernel hands over when
 * full or AFP_RX_TOV_MS after their first frame; rx_fd is the socket (readable while a block is
 * ours). PACKET_IGNORE_OUTGOING keeps the frames this host sends (our own TX among them) out of
 * RX. A frame whose checksum the sender left to "hardware" (TP_STATUS_CSUMNOTREADY, e.g. UDP
 * from a local socket over a veth) is delivered with SDP_PKT_F_CSUM_PARTIAL, not as an error; a
 * VLAN tag the kernel took out is put back in the frame. A frame that finds the ring full is
 * dropped by the kernel and counted (PACKET_STATISTICS tp_drops, which each read resets); the
 * stats op adds those up over the port's RX queues since port_open.
 *
 * TX: one socket per TX queue, bound with protocol 0 so it receives nothing, with a frame ring:
 * TPACKET_V3 where the kernel takes a V3 TX ring (Linux 4.11 and later), else TPACKET_V2, whose
 * TX frame layout V3 reuses (V3 TX has no blocks: fixed frames, tp_next_offset 0), so nothing
 * else changes; the version in use is logged at debug level. Frames are copied into AVAILABLE
 * slots and the kernel is kicked with a non-blocking send; a full ring makes tx_burst short and
 * tx_fd (an epoll set) waits for the socket to become writable. While the kernel refuses to send
 * (interface down or gone) the frames are taken and dropped, as a NIC without link drops them.
 * An empty rx_burst reads a pending socket error (ENETDOWN after the link dropped) so that rx_fd
 * does not stay readable. A frame with a send time
 * (ts_ns, CLOCK_REALTIME) still ahead stops the burst and tx_fd waits for that time instead.
 *
 * Identity: the interface's own PCI function (/sys/class/net/<if>/device, the nearest PCI
 * address on its sysfs path), or for a virtual interface (veth, lo, bridge) a synthetic address
 * in domain ffff, bus SDP_NIC_BUS_AFPACKET. Link state from operstate, or the interface flags
 * (IFF_UP and IFF_RUNNING) when operstate says "unknown". MAC (SIOCGIFHWADDR) and MTU
 * (SIOCGIFMTU) are read when a port opens. An interface that does not exist when the device list
 * is built is left out of it (warning). Needs CAP_NET_RAW: without it port_open fails with
 * DOCA_ERROR_NOT_PERMITTED and says so.
 *
 * A fanout group is joined socket by socket after each is bound, so during port_open a frame may
 * reach two queues; nothing is counted before port_open returns.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "sdp_log.h"
#include "sdp_nic_decl.h"
#include "sdp_nic_iface.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"

SDP_LOG_COMPONENT("afpacket");

#define AFP_MAX_QUEUES 32
#define AFP_MIN_FRAMES 64
#define AFP_MAX_FRAMES 262144
#define AFP_DEF_FRAMES 2048
#define AFP_RX_BLOCK (128u * 1024) /* holds a jumbo frame */
#define AFP_RX_FRAME 2048u	   /* nominal V3 frame: sizes the ring from `frames` */
#define AFP_RX_MIN_BLOCKS 4u
#define AFP_RX_TOV_MS 2 /* a partly filled block is handed over after this */
#define AFP_VLAN_HLEN 4
#define NSEC_PER_SEC 1000000000ull

/*
 * A fanout group has its own PACKET_IGNORE_OUTGOING (Linux 6.9; older headers lack the name).
 * Older kernels ignore the flag, so rx_burst also drops PACKET_OUTGOING frames itself.
 */
#ifndef PACKET_FANOUT_FLAG_IGNORE_OUTGOING
#define PACKET_FANOUT_FLAG_IGNORE_OUTGOING 0x4000
#endif

/* A declaration, checked. Owned by a devinfo (attr.priv); dev_open copies it. */
struct afp_conf {
	char iface[IFNAMSIZ];
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	uint32_t queues;
	uint32_t frames; /* 0: the engine's hint */
};

struct afp_rxq {
	int fd;
	uint8_t *ring;
	size_t ring_len;
	uint32_t block_nr;
	uint32_t block;	    /* the block read next */
	uint8_t *pkt;	    /* the next frame in that block; NULL: block not started */
	uint32_t pkts_left; /* frames of the block not yet read */
	uint64_t drops;	    /* tp_drops of PACKET_STATISTICS, summed: each read resets them */
};

struct afp_txq {
	int fd;
	int epfd; /* tx_fd: the socket (EPOLLOUT while full) and timer_fd */
	int timer_fd;
	int wait_out; /* the socket is in epfd's interest list for EPOLLOUT */
	uint8_t *ring;
	size_t ring_len;
	int version; /* TPACKET_V3 or TPACKET_V2 */
	uint32_t frame_size;
	uint32_t frame_nr;
	uint32_t data_off; /* frame data offset within a slot */
	uint32_t max_len;  /* largest frame a slot holds */
	uint32_t head;	   /* next slot to fill */
	uint32_t unsent;   /* slots marked SEND_REQUEST since the last successful kick */
	int failing;	   /* the last kick failed (link down): reported once */
	uint64_t dropped;  /* frames that cannot be sent (size) */
};

struct sdp_eth_port {
	const struct afp_conf *conf;
	int ifindex;
	uint16_t nb_rxq;
	uint16_t nb_txq;
	struct afp_rxq rxq[AFP_MAX_QUEUES];
	struct afp_txq txq[AFP_MAX_QUEUES];
	int stats_warned; /* a PACKET_STATISTICS read failed: reported once */
};

/* ---- declarations ---------------------------------------------------------------------------- */

/* Read decl into conf; logs and returns INVALID_VALUE when it is wrong. */
static doca_error_t afp_conf_parse(const struct sdp_dev_decl *decl, struct afp_conf *conf)
{
	static const char *const keys[] = {"iface", "name", "queues", "frames", NULL};
	const char *iface = sdp_dev_decl_get(decl, "iface");
	const char *name = sdp_dev_decl_get(decl, "name");
	uint64_t queues, frames;

	if (!sdp_nic_decl_keys_ok(decl, keys) || !sdp_nic_iface_name_ok(decl, "afpacket", iface))
		return DOCA_ERROR_INVALID_VALUE;
	if (name == NULL)
		name = iface;
	if (!sdp_nic_decl_name_ok(decl, "name", name) ||
	    !sdp_nic_decl_uint(decl, "queues", 1, AFP_MAX_QUEUES, 1, &queues) ||
	    !sdp_nic_decl_uint(decl, "frames", AFP_MIN_FRAMES, AFP_MAX_FRAMES, 0, &frames))
		return DOCA_ERROR_INVALID_VALUE;
	memset(conf, 0, sizeof(*conf));
	snprintf(conf->iface, sizeof(conf->iface), "%s", iface);
	snprintf(conf->name, sizeof(conf->name), "%s", name);
	conf->queues = (uint32_t)queues;
	conf->frames = (uint32_t)frames;
	return DOCA_SUCCESS;
}

static doca_error_t afp_decl_check(const struct sdp_dev_decl *decl)
{
	struct afp_conf conf;

	/* the interface may appear later: its existence is checked when the list is built */
	return afp_conf_parse(decl, &conf);
}

/* conf_read of sdp_nic_enumerate: every declaration (checked) is read. */
static doca_error_t afp_conf_read(const struct sdp_dev_decl *const *decls, size_t num_decls,
				  size_t i, void *conf)
{
	(void)num_decls;
	return afp_conf_parse(decls[i], conf);
}

static int afp_conf_attr(const struct sdp_dev_decl *decl, const void *c,
			 struct sdp_devinfo_attr *attr)
{
	const struct afp_conf *conf = c;

	return sdp_nic_iface_attr(decl, conf->iface, conf->name, attr);
}

static const struct sdp_nic_provider afp_nic = {
	.name = "afpacket",
	.bus = SDP_NIC_BUS_AFPACKET,
	.conf_size = sizeof(struct afp_conf),
	.name_off = offsetof(struct afp_conf, name),
	.conf_read = afp_conf_read,
	.conf_attr = afp_conf_attr,
};

static doca_error_t afp_enumerate(const struct sdp_dev_decl *const *decls, size_t num_decls,
				  struct sdp_devinfo_sink *sink)
{
	return sdp_nic_enumerate(&afp_nic, decls, num_decls, sink);
}

static doca_error_t afp_dev_open(const struct sdp_devinfo_attr *attr, void **dev_priv)
{
	/* the device state is the configuration */
	return sdp_nic_dev_alloc("afpacket", attr, sizeof(struct afp_conf), sizeof(struct afp_conf),
				 dev_priv);
}

static void afp_dev_close(const struct sdp_devinfo_attr *attr, void *dev_priv)
{
	(void)attr;
	free(dev_priv);
}

/* ---- RX -------------------------------------------------------------------------------------- */

static struct tpacket_block_desc *rx_block(const struct afp_rxq *rxq, uint32_t i)
{
	return (struct tpacket_block_desc *)(rxq->ring + (size_t)i * AFP_RX_BLOCK);
}

/* Copy one ring frame into pkt, putting back a VLAN tag the kernel took out. */
static void rx_copy(const struct tpacket3_hdr *hdr, struct sdp_pkt *pkt)
{
	const uint8_t *frame = (const uint8_t *)hdr + hdr->tp_mac;
	uint32_t snap = hdr->tp_snaplen;
	uint32_t wire = hdr->tp_len;
	uint32_t len = 0;

	pkt->flags = 0;
	if ((hdr->tp_status & TP_STATUS_VLAN_VALID) && snap >= 2 * ETH_ALEN) {
		uint16_t tpid = (hdr->tp_status & TP_STATUS_VLAN_TPID_VALID) ?
					hdr->hv1.tp_vlan_tpid :
					ETH_P_8021Q;
		uint8_t tag[AFP_VLAN_HLEN] = {(uint8_t)(tpid >> 8), (uint8_t)tpid,
					      (uint8_t)(hdr->hv1.tp_vlan_tci >> 8),
					      (uint8_t)hdr->hv1.tp_vlan_tci};
		const uint8_t *parts[3] = {frame, tag, frame + 2 * ETH_ALEN};
		uint32_t sizes[3] = {2 * ETH_ALEN, AFP_VLAN_HLEN, snap - 2 * ETH_ALEN};

		for (int i = 0; i < 3 && len < pkt->cap; i++) {
			uint32_t k = sizes[i] < pkt->cap - len ? sizes[i] : pkt->cap - len;

			memcpy((uint8_t *)pkt->data + len, parts[i], k);
			len += k;
		}
		wire += AFP_VLAN_HLEN;
	} else {
		len = snap < pkt->cap ? snap : pkt->cap;
		memcpy(pkt->data, frame, len);
	}
	pkt->len = len;
	pkt->wire_len = wire;
	if (len < wire)
		pkt->flags |= SDP_PKT_F_TRUNCATED;
	if (hdr->tp_status & TP_STATUS_CSUMNOTREADY)
		pkt->flags |= SDP_PKT_F_CSUM_PARTIAL;
	pkt->ts_ns = (uint64_t)hdr->tp_sec * NSEC_PER_SEC + hdr->tp_nsec;
}

static uint16_t afp_rx_burst(struct sdp_eth_port *port, uint16_t q, struct sdp_pkt *pkts,
			     uint16_t n)
{
	struct afp_rxq *rxq;
	uint16_t got = 0;

	if (port == NULL || pkts == NULL || q >= port->nb_rxq)
		return 0;
	rxq = &port->rxq[q];
	while (got < n) {
		struct tpacket_block_desc *bd = rx_block(rxq, rxq->block);
		const struct tpacket3_hdr *hdr;

		if (rxq->pkt == NULL) {
			/* the kernel hands a block over by setting TP_STATUS_USER last */
			if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) &
			      TP_STATUS_USER))
				break;
			rxq->pkts_left = bd->hdr.bh1.num_pkts;
			rxq->pkt = (uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt;
		}
		if (rxq->pkts_left > 0) {
			const struct sockaddr_ll *sll;

			hdr = (const struct tpacket3_hdr *)rxq->pkt;
			sll = (const struct sockaddr_ll *)(rxq->pkt + TPACKET_ALIGN(sizeof(*hdr)));
			/* outgoing frames reach a fanout group on kernels without its flag */
			if (sll->sll_pkttype != PACKET_OUTGOING)
				rx_copy(hdr, &pkts[got++]);
			rxq->pkts_left--;
			rxq->pkt += hdr->tp_next_offset;
		}
		if (rxq->pkts_left == 0) {
			/* give the block back once every frame in it is copied */
			__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL,
					 __ATOMIC_RELEASE);
			rxq->pkt = NULL;
			rxq->block = (rxq->block + 1) % rxq->block_nr;
		}
	}
	if (got == 0) {
		/*
		 * Nothing to read: take any pending socket error (ENETDOWN when the link drops,
		 * ENXIO when the interface goes away), which poll() reports until it is read, so
		 * an engine sleeping on rx_fd would wake at once, forever.
		 */
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(rxq->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0)
			sdp_warn("afpacket device %s: RX queue %u on %s: %s", port->conf->name, q,
				 port->conf->iface, strerror(err));
	}
	return got;
}

static int afp_rx_fd(struct sdp_eth_port *port, uint16_t q)
{
	if (port == NULL || q >= port->nb_rxq)
		return -1;
	return port->rxq[q].fd;
}

/*
 * Add what the kernel dropped on RX queue q since the last look (its ring was full) to the
 * queue's total and return that total. PACKET_STATISTICS resets the kernel's counters, hence
 * the running total; the add is atomic so that two callers never lose a read.
 */
static uint64_t rxq_drops(struct sdp_eth_port *port, uint16_t q)
{
	struct afp_rxq *rxq = &port->rxq[q];
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);

	memset(&st, 0, sizeof(st));
	if (getsockopt(rxq->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) != 0) {
		if (!__atomic_exchange_n(&port->stats_warned, 1, __ATOMIC_RELAXED))
			sdp_warn("afpacket device %s: PACKET_STATISTICS on RX queue %u: %m; its "
				 "drops are not counted",
				 port->conf->name, q);
		return __atomic_load_n(&rxq->drops, __ATOMIC_RELAXED);
	}
	return __atomic_add_fetch(&rxq->drops, st.tp_drops, __ATOMIC_RELAXED);
}

static void afp_stats(struct sdp_eth_port *port, struct sdp_eth_port_stats *stats)
{
	uint64_t drops = 0;

	if (stats == NULL)
		return;
	if (port != NULL)
		for (uint16_t q = 0; q < port->nb_rxq; q++)
			drops += rxq_drops(port, q);
	memset(stats, 0, sizeof(*stats));
	stats->rx_drops = drops;
}

static void rxq_close(struct afp_rxq *rxq)
{
	if (rxq->ring != NULL)
		munmap(rxq->ring, rxq->ring_len);
	if (rxq->fd >= 0)
		close(rxq->fd);
	rxq->ring = NULL;
	rxq->fd = -1;
}

/* An AF_PACKET socket that receives nothing until it is bound with a protocol. */
static doca_error_t packet_socket(const struct afp_conf *conf, int *fd_p)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		int err = errno;

		if (err == EPERM || err == EACCES)
			sdp_error("afpacket device %s: AF_PACKET socket: %m (needs root or "
				  "CAP_NET_RAW)",
				  conf->name);
		else
			sdp_error("afpacket device %s: AF_PACKET socket: %m", conf->name);
		return sdp_nic_errno_status(err);
	}
	*fd_p = fd;
	return DOCA_SUCCESS;
}

static doca_error_t set_opt(const struct afp_conf *conf, int fd, int opt, const char *opt_name,
			    const void *val, socklen_t len)
{
	if (setsockopt(fd, SOL_PACKET, opt, val, len) != 0) {
		int err = errno;

		sdp_error("afpacket device %s: setsockopt %s: %m", conf->name, opt_name);
		return sdp_nic_errno_status(err);
	}
	return DOCA_SUCCESS;
}

/*
 * Open RX queue q: a TPACKET_V3 socket bound to the interface and, with several queues, in the
 * fanout group (*fanout_id_p: 0 before the first socket asks the kernel for a unique id).
 */
static doca_error_t rxq_open(struct sdp_eth_port *port, uint16_t q, uint32_t frames,
			     int *fanout_id_p)
{
	const struct afp_conf *conf = port->conf;
	struct afp_rxq *rxq = &port->rxq[q];
	struct tpacket_req3 req;
	struct sockaddr_ll sll;
	int version = TPACKET_V3, one = 1;
	doca_error_t status;

	status = packet_socket(conf, &rxq->fd);
	if (status != DOCA_SUCCESS)
		return status;
	status = set_opt(conf, rxq->fd, PACKET_VERSION, "PACKET_VERSION TPACKET_V3", &version,
			 sizeof(version));
	if (status != DOCA_SUCCESS)
		goto err_close;

	memset(&req, 0, sizeof(req));
	req.tp_block_size = AFP_RX_BLOCK;
	req.tp_block_nr =
		(uint32_t)(((uint64_t)frames * AFP_RX_FRAME + AFP_RX_BLOCK - 1) / AFP_RX_BLOCK);
	if (req.tp_block_nr < AFP_RX_MIN_BLOCKS)
		req.tp_block_nr = AFP_RX_MIN_BLOCKS;
	req.tp_frame_size = AFP_RX_FRAME;
	req.tp_frame_nr = req.tp_block_nr * (AFP_RX_BLOCK / AFP_RX_FRAME);
	req.tp_retire_blk_tov = AFP_RX_TOV_MS;
	status = set_opt(conf, rxq->fd, PACKET_RX_RING, "PACKET_RX_RING", &req, sizeof(req));
	if (status != DOCA_SUCCESS)
		goto err_close;
	rxq->block_nr = req.tp_block_nr;
	rxq->ring_len = (size_t)req.tp_block_nr * req.tp_block_size;
	rxq->ring = mmap(NULL, rxq->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, rxq->fd, 0);
	if (rxq->ring == MAP_FAILED) {
		int err = errno;

		sdp_error("afpacket device %s: failed to map an RX ring of %zu bytes: %m",
			  conf->name, rxq->ring_len);
		rxq->ring = NULL;
		status = sdp_nic_errno_status(err);
		goto err_close;
	}
	status = set_opt(conf, rxq->fd, PACKET_IGNORE_OUTGOING, "PACKET_IGNORE_OUTGOING", &one,
			 sizeof(one));
	if (status != DOCA_SUCCESS)
		goto err_close;

	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = port->ifindex;
	if (bind(rxq->fd, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		int err = errno;

		sdp_error("afpacket device %s: failed to bind RX queue %u to %s: %m", conf->name, q,
			  conf->iface);
		status = sdp_nic_errno_status(err);
		goto err_close;
	}

	if (port->nb_rxq > 1) {
		int arg;

		int flags = PACKET_FANOUT_FLAG_IGNORE_OUTGOING;

		if (*fanout_id_p == 0)
			arg = (PACKET_FANOUT_HASH | flags | PACKET_FANOUT_FLAG_UNIQUEID) << 16;
		else
			arg = (PACKET_FANOUT_HASH | flags) << 16 | (*fanout_id_p & 0xffff);
		status = set_opt(conf, rxq->fd, PACKET_FANOUT, "PACKET_FANOUT", &arg, sizeof(arg));
		if (status != DOCA_SUCCESS)
			goto err_close;
		if (*fanout_id_p == 0) {
			socklen_t len = sizeof(arg);

			/* the kernel wrote the id it chose back into the option */
			if (getsockopt(rxq->fd, SOL_PACKET, PACKET_FANOUT, &arg, &len) != 0) {
				int err = errno;

				sdp_error("afpacket device %s: getsockopt PACKET_FANOUT: %m",
					  conf->name);
				status = sdp_nic_errno_status(err);
				goto err_close;
			}
			*fanout_id_p = (arg & 0xffff) | 0x10000; /* nonzero even for id 0 */
		}
	}
	return DOCA_SUCCESS;

err_close:
	rxq_close(rxq);
	return status;
}

/* ---- TX -------------------------------------------------------------------------------------- */

static uint32_t *tx_status(const struct afp_txq *txq, uint8_t *slot)
{
	if (txq->version == TPACKET_V3)
		return &((struct tpacket3_hdr *)slot)->tp_status;
	return &((struct tpacket2_hdr *)slot)->tp_status;
}

static void tx_set_len(const struct afp_txq *txq, uint8_t *slot, uint32_t len)
{
	if (txq->version == TPACKET_V3) {
		struct tpacket3_hdr *h = (struct tpacket3_hdr *)slot;

		h->tp_len = len;
		h->tp_snaplen = len;
		h->tp_next_offset = 0;
	} else {
		struct tpacket2_hdr *h = (struct tpacket2_hdr *)slot;

		h->tp_len = len;
		h->tp_snaplen = len;
	}
}

/* Make tx_fd wait for the socket to be writable (full ring) or not (waiting on time). */
static void tx_wait_out(const struct afp_conf *conf, struct afp_txq *txq, int on)
{
	struct epoll_event ev = {.events = on ? EPOLLOUT : 0, .data.fd = txq->fd};

	if (txq->wait_out == on)
		return;
	if (epoll_ctl(txq->epfd, EPOLL_CTL_MOD, txq->fd, &ev) != 0)
		sdp_warn("afpacket device %s: epoll_ctl on a TX socket: %m", conf->name);
	else
		txq->wait_out = on;
}

/*
 * Drop the frames the kernel has not taken yet: the requested slots at the end of what was filled
 * (the kernel takes slots in order and stops at the first it cannot send). They go back to
 * AVAILABLE and the fill position moves back, so the ring stays in step with the kernel's.
 */
static void tx_drop_unsent(struct afp_txq *txq)
{
	uint32_t k = 0;

	while (k < txq->unsent) {
		uint32_t idx = (txq->head + txq->frame_nr - 1 - k) % txq->frame_nr;
		uint8_t *slot = txq->ring + (size_t)idx * txq->frame_size;

		if (__atomic_load_n(tx_status(txq, slot), __ATOMIC_ACQUIRE) !=
		    TP_STATUS_SEND_REQUEST)
			break;
		__atomic_store_n(tx_status(txq, slot), TP_STATUS_AVAILABLE, __ATOMIC_RELEASE);
		k++;
	}
	txq->head = (txq->head + txq->frame_nr - k) % txq->frame_nr;
	txq->dropped += k;
	txq->unsent = 0;
}

/* Ask the kernel to send the slots marked SEND_REQUEST. */
static void tx_kick(const struct afp_conf *conf, struct afp_txq *txq)
{
	if (txq->unsent == 0)
		return;
	if (sendto(txq->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0) {
		int err = errno;

		/* congestion: the frames stay requested and the next burst kicks again */
		if (err == EAGAIN || err == ENOBUFS || err == EINTR)
			return;
		/* link down, interface gone: dropped, as a NIC without link drops */
		if (!txq->failing)
			sdp_warn("afpacket device %s: send on %s: %m; frames are dropped until it "
				 "works again",
				 conf->name, conf->iface);
		txq->failing = 1;
		tx_drop_unsent(txq);
		return;
	}
	if (txq->failing)
		sdp_info("afpacket device %s: sending on %s again", conf->name, conf->iface);
	txq->failing = 0;
	txq->unsent = 0;
}

static uint16_t afp_tx_burst(struct sdp_eth_port *port, uint16_t q, const struct sdp_pkt *pkts,
			     uint16_t n)
{
	const struct afp_conf *conf;
	struct afp_txq *txq;
	uint64_t now = 0, expirations;
	uint16_t done = 0;
	int full = 0;

	if (port == NULL || pkts == NULL || q >= port->nb_txq)
		return 0;
	conf = port->conf;
	txq = &port->txq[q];
	if (read(txq->timer_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		sdp_warn("afpacket device %s: failed to read a TX timerfd: %m", conf->name);

	for (; done < n; done++) {
		const struct sdp_pkt *pkt = &pkts[done];
		uint8_t *slot = txq->ring + (size_t)txq->head * txq->frame_size;
		uint32_t *status = tx_status(txq, slot);
		uint32_t st = __atomic_load_n(status, __ATOMIC_ACQUIRE);

		if (pkt->ts_ns != 0) {
			struct timespec ts;

			if (now == 0) {
				clock_gettime(CLOCK_REALTIME, &ts);
				now = (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
			}
			if (pkt->ts_ns > now) {
				struct itimerspec its;

				memset(&its, 0, sizeof(its));
				its.it_value.tv_sec = (time_t)(pkt->ts_ns / NSEC_PER_SEC);
				its.it_value.tv_nsec = (long)(pkt->ts_ns % NSEC_PER_SEC);
				if (timerfd_settime(txq->timer_fd, TFD_TIMER_ABSTIME, &its, NULL))
					sdp_warn("afpacket device %s: failed to arm a TX timer: %m",
						 conf->name);
				break;
			}
		}
		if (pkt->data == NULL || pkt->len < ETH_HLEN || pkt->len > txq->max_len) {
			if (txq->dropped++ == 0)
				sdp_warn(
					"afpacket device %s: dropping a frame of %u bytes (%d to %u "
					"fit)",
					conf->name, pkt->len, ETH_HLEN, txq->max_len);
			continue;
		}
		if (st == TP_STATUS_WRONG_FORMAT) {
			/* the kernel refused the frame once sent from this slot: reuse it */
			st = TP_STATUS_AVAILABLE;
		}
		if (st != TP_STATUS_AVAILABLE) {
			full = 1;
			break;
		}
		memcpy(slot + txq->data_off, pkt->data, pkt->len);
		tx_set_len(txq, slot, pkt->len);
		__atomic_store_n(status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
		txq->head = (txq->head + 1) % txq->frame_nr;
		txq->unsent++;
	}
	tx_kick(conf, txq);
	tx_wait_out(conf, txq, full);
	return done;
}

static int afp_tx_fd(struct sdp_eth_port *port, uint16_t q)
{
	if (port == NULL || q >= port->nb_txq)
		return -1;
	return port->txq[q].epfd;
}

static void txq_close(struct afp_txq *txq)
{
	if (txq->ring != NULL)
		munmap(txq->ring, txq->ring_len);
	if (txq->epfd >= 0)
		close(txq->epfd);
	if (txq->timer_fd >= 0)
		close(txq->timer_fd);
	if (txq->fd >= 0)
		close(txq->fd);
	txq->ring = NULL;
	txq->fd = txq->epfd = txq->timer_fd = -1;
}

/* Set up the TX ring of a socket with version `version`; *errno_p keeps a refusal's errno. */
static int txq_try_ring(struct afp_txq *txq, int version, uint32_t frames, uint32_t mtu)
{
	uint32_t hdr = version == TPACKET_V3 ? TPACKET3_HDRLEN : TPACKET2_HDRLEN;
	uint32_t data_off = hdr - (uint32_t)sizeof(struct sockaddr_ll);
	uint32_t frame_size = 2048, block_size;
	struct tpacket_req3 req;

	/* a slot holds the header and a frame of MTU + Ethernet header + one VLAN tag */
	while (frame_size < data_off + mtu + ETH_HLEN + AFP_VLAN_HLEN)
		frame_size *= 2;
	block_size = frame_size > 65536 ? frame_size : 65536;
	if (setsockopt(txq->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) != 0)
		return -1;
	memset(&req, 0, sizeof(req));
	req.tp_block_size = block_size;
	req.tp_frame_size = frame_size;
	req.tp_block_nr = (frames + block_size / frame_size - 1) / (block_size / frame_size);
	req.tp_frame_nr = req.tp_block_nr * (block_size / frame_size);
	/* a V2 ring takes the first fields only; V3 needs the rest zero for TX */
	if (setsockopt(txq->fd, SOL_PACKET, PACKET_TX_RING, &req,
		       version == TPACKET_V3 ? sizeof(req) : sizeof(struct tpacket_req)) != 0)
		return -1;
	txq->version = version;
	txq->frame_size = frame_size;
	txq->frame_nr = req.tp_frame_nr;
	txq->data_off = data_off;
	txq->max_len = frame_size - data_off;
	if (txq->max_len > mtu + ETH_HLEN + AFP_VLAN_HLEN)
		txq->max_len = mtu + ETH_HLEN + AFP_VLAN_HLEN;
	txq->ring_len = (size_t)req.tp_block_nr * block_size;
	return 0;
}

static doca_error_t txq_open(struct sdp_eth_port *port, uint16_t q, uint32_t frames, uint32_t mtu)
{
	const struct afp_conf *conf = port->conf;
	struct afp_txq *txq = &port->txq[q];
	struct epoll_event ev;
	struct sockaddr_ll sll;
	doca_error_t status;
	int one = 1;

	status = packet_socket(conf, &txq->fd);
	if (status != DOCA_SUCCESS)
		return status;
	/*
	 * A frame the kernel cannot send is dropped and its slot freed, not left in error. Only
	 * settable before the ring exists.
	 */
	status = set_opt(conf, txq->fd, PACKET_LOSS, "PACKET_LOSS", &one, sizeof(one));
	if (status != DOCA_SUCCESS)
		goto err_close;
	if (txq_try_ring(txq, TPACKET_V3, frames, mtu) != 0) {
		int err = errno;

		if (err != EINVAL) {
			sdp_error("afpacket device %s: TPACKET_V3 TX ring: %m", conf->name);
			status = sdp_nic_errno_status(err);
			goto err_close;
		}
		/* kernels before 4.11 have no V3 TX ring: V2's frame ring is the same thing */
		sdp_debug("afpacket device %s: no TPACKET_V3 TX ring (%m), using TPACKET_V2",
			  conf->name);
		if (txq_try_ring(txq, TPACKET_V2, frames, mtu) != 0) {
			err = errno;
			sdp_error("afpacket device %s: TPACKET_V2 TX ring: %m", conf->name);
			status = sdp_nic_errno_status(err);
			goto err_close;
		}
	}
	sdp_debug("afpacket device %s: TX queue %u uses a TPACKET_V%d ring of %u frames",
		  conf->name, q, txq->version == TPACKET_V3 ? 3 : 2, txq->frame_nr);
	txq->ring = mmap(NULL, txq->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, txq->fd, 0);
	if (txq->ring == MAP_FAILED) {
		int err = errno;

		sdp_error("afpacket device %s: failed to map a TX ring of %zu bytes: %m",
			  conf->name, txq->ring_len);
		txq->ring = NULL;
		status = sdp_nic_errno_status(err);
		goto err_close;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = 0; /* send only */
	sll.sll_ifindex = port->ifindex;
	if (bind(txq->fd, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		int err = errno;

		sdp_error("afpacket device %s: failed to bind TX queue %u to %s: %m", conf->name, q,
			  conf->iface);
		status = sdp_nic_errno_status(err);
		goto err_close;
	}

	txq->timer_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	txq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (txq->timer_fd < 0 || txq->epfd < 0) {
		int err = errno;

		sdp_error("afpacket device %s: failed to create the TX wait fds: %m", conf->name);
		status = sdp_nic_errno_status(err);
		goto err_close;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = txq->timer_fd;
	if (epoll_ctl(txq->epfd, EPOLL_CTL_ADD, txq->timer_fd, &ev) != 0)
		goto err_epoll;
	ev.events = 0; /* EPOLLOUT only while the ring is full */
	ev.data.fd = txq->fd;
	if (epoll_ctl(txq->epfd, EPOLL_CTL_ADD, txq->fd, &ev) != 0)
		goto err_epoll;
	return DOCA_SUCCESS;

err_epoll:
	sdp_error("afpacket device %s: epoll_ctl: %m", conf->name);
	status = DOCA_ERROR_OPERATING_SYSTEM;
err_close:
	txq_close(txq);
	return status;
}

/* ---- ports ----------------------------------------------------------------------------------- */

static int afp_link_up(struct sdp_eth_port *port)
{
	if (port == NULL)
		return 0;
	return sdp_nic_iface_link_up(port->conf->iface);
}

static void afp_port_close(struct sdp_eth_port *port)
{
	if (port == NULL)
		return;
	for (uint16_t q = 0; q < port->nb_txq; q++) {
		if (port->txq[q].dropped > 0)
			sdp_debug("afpacket device %s: TX queue %u dropped %llu frame(s)",
				  port->conf->name, q, (unsigned long long)port->txq[q].dropped);
		txq_close(&port->txq[q]);
	}
	for (uint16_t q = 0; q < port->nb_rxq; q++) {
		uint64_t drops = rxq_drops(port, q);

		if (drops > 0)
			sdp_debug("afpacket device %s: RX queue %u: the kernel dropped %llu "
				  "frame(s) on a full ring",
				  port->conf->name, q, (unsigned long long)drops);
		rxq_close(&port->rxq[q]);
	}
	sdp_debug("afpacket device %s: port closed", port->conf->name);
	free(port);
}

static doca_error_t afp_port_open(void *dev_priv, const struct sdp_eth_port_cfg *cfg,
				  struct sdp_eth_port **port_p, struct sdp_eth_port_info *info_p)
{
	const struct afp_conf *conf = dev_priv;
	struct sdp_eth_port_info info;
	struct sdp_eth_port *port;
	doca_error_t status;
	uint32_t frames;
	int fanout_id = 0;

	if (conf == NULL || cfg == NULL || port_p == NULL || info_p == NULL) {
		sdp_error(
			"afpacket port_open: NULL argument (dev %p, cfg %p, port_p %p, info_p %p)",
			dev_priv, (const void *)cfg, (void *)port_p, (void *)info_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((cfg->nb_rxq == 0 && cfg->nb_txq == 0) || cfg->nb_txq > AFP_MAX_QUEUES) {
		sdp_error("afpacket device %s: %u RX and %u TX queues asked, expected 1 to %d of "
			  "at least one kind and at most %d TX",
			  conf->name, cfg->nb_rxq, cfg->nb_txq, AFP_MAX_QUEUES, AFP_MAX_QUEUES);
		return DOCA_ERROR_INVALID_VALUE;
	}
	port = calloc(1, sizeof(*port));
	if (port == NULL) {
		sdp_error("out of memory opening a port of afpacket device %s", conf->name);
		return DOCA_ERROR_NO_MEMORY;
	}
	port->conf = conf;
	for (int q = 0; q < AFP_MAX_QUEUES; q++) {
		port->rxq[q].fd = -1;
		port->txq[q].fd = port->txq[q].epfd = port->txq[q].timer_fd = -1;
	}
	port->ifindex = (int)if_nametoindex(conf->iface);
	if (port->ifindex == 0) {
		int err = errno;

		sdp_error("afpacket device %s: interface %s: %m", conf->name, conf->iface);
		status = err == ENODEV ? DOCA_ERROR_NOT_FOUND : sdp_nic_errno_status(err);
		goto err_free_port;
	}
	memset(&info, 0, sizeof(info));
	status = sdp_nic_iface_read("afpacket", conf->name, conf->iface, &info);
	if (status != DOCA_SUCCESS)
		goto err_free_port;

	frames = conf->frames;
	if (frames == 0)
		frames = cfg->ring_size ? cfg->ring_size : AFP_DEF_FRAMES;
	if (frames < AFP_MIN_FRAMES)
		frames = AFP_MIN_FRAMES;
	if (frames > AFP_MAX_FRAMES)
		frames = AFP_MAX_FRAMES;

	port->nb_rxq = cfg->nb_rxq < conf->queues ? cfg->nb_rxq : (uint16_t)conf->queues;
	/* nb_rxq/nb_txq count the queues opened so far, so port_close undoes exactly those */
	for (uint16_t q = 0; q < port->nb_rxq; q++) {
		status = rxq_open(port, q, frames, &fanout_id);
		if (status != DOCA_SUCCESS) {
			port->nb_rxq = q;
			goto err_close_queues;
		}
	}
	for (uint16_t q = 0; q < cfg->nb_txq; q++) {
		status = txq_open(port, q, frames, info.mtu);
		if (status != DOCA_SUCCESS)
			goto err_close_queues;
		port->nb_txq = q + 1;
	}

	info.nb_rxq = port->nb_rxq;
	info.nb_txq = port->nb_txq;
	info.has_rx_fd = 1;
	sdp_debug("afpacket device %s: port open on %s (ifindex %d), %u RX and %u TX queue(s)",
		  conf->name, conf->iface, port->ifindex, info.nb_rxq, info.nb_txq);
	*info_p = info;
	*port_p = port;
	return DOCA_SUCCESS;

err_close_queues:
	afp_port_close(port);
	return status;
err_free_port:
	free(port);
	return status;
}

static const struct sdp_eth_port_ops afp_eth_ops = {
	.port_open = afp_port_open,
	.port_close = afp_port_close,
	.rx_burst = afp_rx_burst,
	.tx_burst = afp_tx_burst,
	.rx_fd = afp_rx_fd,
	.tx_fd = afp_tx_fd,
	.link_up = afp_link_up,
	.stats = afp_stats,
};

static const struct sdp_provider_ops afp_ops = {
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "afpacket",
	.decl_check = afp_decl_check,
	.enumerate = afp_enumerate,
	.dev_open = afp_dev_open,
	.dev_close = afp_dev_close,
	.devinfo_free = free,
	.eth = &afp_eth_ops,
};

SDP_PROVIDER_DEFINE(afp_ops);
