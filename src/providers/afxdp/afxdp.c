/*
 * The `afxdp` device provider: any Linux network interface as a software NIC, through AF_XDP
 * sockets (libxdp's xsk rings over libbpf), with an XDP program of ours that keeps the frames
 * no DOCA Flow rule wants with the host's own stack.
 *
 *   afxdp:iface=<linux ifname>[,name=<ibdev>][,queues=N][,frames=N][,mode=auto|native|skb]
 *        [,zerocopy=auto|on|off]
 *
 * name defaults to iface. queues (1..AFX_MAX_QUEUES): the port binds one socket to each of the
 * interface's queues 0..N-1 (RX queue q and TX queue q are socket q); without it, one per RX
 * queue the interface has (ETHTOOL_GCHANNELS), whatever the engine asks for, since a frame
 * arriving on a queue without a socket goes to the host's stack (a warning says so when
 * queues= is below the interface's count). frames
 * (AFX_MIN_FRAMES..AFX_MAX_FRAMES, a power of two) is each ring's depth; without it the engine's
 * hint or AFX_DEF_FRAMES. mode: how the XDP program is attached: native (the driver's XDP),
 * skb (generic XDP, any interface, slower), auto (native, else skb). zerocopy: on requires the
 * driver's zero-copy AF_XDP (XDP_ZEROCOPY) and fails without it, off always copies (XDP_COPY),
 * auto tries zero copy and falls back to copy mode; the mode in use is logged. Every socket
 * asks for need-wakeup (XDP_USE_NEED_WAKEUP): the rings are kicked only when the kernel says so.
 *
 * Memory: each socket has its own UMEM of 2 * frames chunks of AFX_CHUNK bytes: the first half
 * feeds the fill ring (RX), the second half is TX's free stack, so the RX path (fill and RX
 * rings) and the TX path (TX and completion rings) of one socket never share a chunk and may run
 * on different engine threads. Frames are copied between the chunks and the engine's buffers.
 *
 * Steering: the program (afxdp_steer.bpf.c, built by clang and embedded) redirects a frame to
 * the socket of its queue (XSKMAP) when the port takes every frame or when a key of the summary
 * of the port's DOCA Flow rules matches (op steer, struct sdp_eth_steer); everything else is
 * XDP_PASS, so ARP, ping and the host's sockets keep working. The port starts taking every frame
 * (no rules: the engine's default queue gets them). The program is attached with
 * XDP_FLAGS_UPDATE_IF_NOEXIST: an interface that already runs another XDP program is refused
 * (DOCA_ERROR_IN_USE), never replaced; port_close detaches only the program this port attached
 * (bpf_xdp_detach with its id expected).
 *
 * Needs CAP_NET_ADMIN and CAP_BPF (or CAP_SYS_ADMIN) and a kernel with AF_XDP: without them
 * port_open fails with DOCA_ERROR_NOT_PERMITTED or DOCA_ERROR_NOT_SUPPORTED and says which.
 * No bpffs is needed (the program is not pinned; it lives while the port holds its fds).
 *
 * Counters (op stats): XDP_STATISTICS of every socket (rx_dropped as rx_drops, rx_ring_full,
 * rx_fill_ring_empty_descs, rx_invalid_descs, tx_invalid_descs) and the program's count of the
 * frames it left to the host. Identity, link state, MAC and MTU as afpacket's (sdp_nic_iface.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/sockios.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
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

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "afxdp_steer_obj.h" /* sdp_afxdp_steer_obj[], built from afxdp_steer.bpf.c */
#include "sdp_log.h"
#include "sdp_nic_decl.h"
#include "sdp_nic_iface.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"

SDP_LOG_COMPONENT("afxdp");

#define AFX_MAX_QUEUES 32 /* the program's XSKMAP has 64 slots */
#define AFX_MIN_FRAMES 64
#define AFX_MAX_FRAMES 32768
#define AFX_DEF_FRAMES 2048
#define AFX_CHUNK 4096u /* UMEM chunk: the page-sized frames every driver takes */
#define AFX_HEADROOM 0u
#define AFX_VLAN_HLEN 4
#define AFX_MAX_KEYS 64
#define AFX_BUSY_WAIT_MS                                                                           \
	2000 /* a queue the kernel is still letting go of */ /* the program's key map (SDP_ETH_STEER_MAX_KEYS fits) */
#define NSEC_PER_SEC 1000000000ull

enum afx_mode {
	AFX_MODE_AUTO,
	AFX_MODE_NATIVE,
	AFX_MODE_SKB
};
enum afx_zc {
	AFX_ZC_AUTO,
	AFX_ZC_ON,
	AFX_ZC_OFF
};

/* A declaration, checked. Owned by a devinfo (attr.priv); dev_open copies it. */
struct afx_conf {
	char iface[IFNAMSIZ];
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	uint32_t queues; /* 0: every RX queue of the interface */
	uint32_t frames; /* 0: the engine's hint */
	uint8_t mode;	 /* enum afx_mode */
	uint8_t zc;	 /* enum afx_zc */
};

/* The key layout of the program's sdp_keys map (network order). */
struct afx_key {
	uint16_t ethertype;
	uint8_t ip_proto;
	uint8_t pad;
	uint16_t dst_port;
	uint16_t pad2;
};

struct afx_q {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	uint8_t *area; /* 2 * frames chunks */
	size_t area_len;
	int fd;
	/* RX chunks the fill ring had no room for yet (fill_give) */
	uint64_t *rx_stash;
	uint32_t rx_nstash;
	/* TX: free chunks (a stack of UMEM addresses); completions return them */
	uint64_t *tx_free;
	uint32_t tx_nfree;
	int epfd; /* tx_fd: the socket (EPOLLOUT) and timer_fd */
	int timer_fd;
	uint64_t tx_dropped; /* frames taken while the link was down */
};

struct sdp_eth_port {
	const struct afx_conf *conf;
	int ifindex;
	uint32_t frames;
	uint32_t prog_id; /* the program this port attached (0: none) */
	uint32_t xdp_flags;
	struct bpf_object *obj;
	int prog_fd, xsks_fd, cfg_fd, keys_fd, cnt_fd;
	uint16_t nq;
	int zerocopy;
	struct afx_q q[AFX_MAX_QUEUES];
	int stats_warned;
};

/* ---- declarations ---------------------------------------------------------------------------- */

static int word_choice(const struct sdp_dev_decl *decl, const char *key, const char *const *words,
		       uint8_t *out)
{
	const char *v = sdp_dev_decl_get(decl, key);

	*out = 0;
	if (v == NULL)
		return 1;
	for (uint8_t i = 0; words[i] != NULL; i++) {
		if (strcmp(v, words[i]) == 0) {
			*out = i;
			return 1;
		}
	}
	/* (every choice list here has three words) */
	sdp_warn("%s: %s=%s: expected %s, %s or %s", decl->origin, key, v, words[0], words[1],
		 words[2]);
	return 0;
}

/* Read decl into conf; logs and returns INVALID_VALUE when it is wrong. */
static doca_error_t afx_conf_parse(const struct sdp_dev_decl *decl, struct afx_conf *conf)
{
	static const char *const keys[] = {"iface", "name",	"queues", "frames",
					   "mode",  "zerocopy", NULL};
	static const char *const modes[] = {"auto", "native", "skb", NULL};
	static const char *const zcs[] = {"auto", "on", "off", NULL};
	const char *iface = sdp_dev_decl_get(decl, "iface");
	const char *name = sdp_dev_decl_get(decl, "name");
	uint64_t queues, frames;
	uint8_t mode, zc;

	if (!sdp_nic_decl_keys_ok(decl, keys) || !sdp_nic_iface_name_ok(decl, "afxdp", iface))
		return DOCA_ERROR_INVALID_VALUE;
	if (name == NULL)
		name = iface;
	if (!sdp_nic_decl_name_ok(decl, "name", name) ||
	    !sdp_nic_decl_uint(decl, "queues", 1, AFX_MAX_QUEUES, 0, &queues) ||
	    !sdp_nic_decl_uint(decl, "frames", AFX_MIN_FRAMES, AFX_MAX_FRAMES, 0, &frames) ||
	    !word_choice(decl, "mode", modes, &mode) || !word_choice(decl, "zerocopy", zcs, &zc))
		return DOCA_ERROR_INVALID_VALUE;
	if (frames != 0 && (frames & (frames - 1)) != 0) {
		sdp_warn("%s: frames=%llu: AF_XDP rings need a power of two", decl->origin,
			 (unsigned long long)frames);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memset(conf, 0, sizeof(*conf));
	snprintf(conf->iface, sizeof(conf->iface), "%s", iface);
	snprintf(conf->name, sizeof(conf->name), "%s", name);
	conf->queues = (uint32_t)queues;
	conf->frames = (uint32_t)frames;
	conf->mode = mode;
	conf->zc = zc;
	return DOCA_SUCCESS;
}

static doca_error_t afx_decl_check(const struct sdp_dev_decl *decl)
{
	struct afx_conf conf;

	/* the interface may appear later: its existence is checked when the list is built */
	return afx_conf_parse(decl, &conf);
}

static doca_error_t afx_conf_read(const struct sdp_dev_decl *const *decls, size_t num_decls,
				  size_t i, void *conf)
{
	(void)num_decls;
	return afx_conf_parse(decls[i], conf);
}

static int afx_conf_attr(const struct sdp_dev_decl *decl, const void *c,
			 struct sdp_devinfo_attr *attr)
{
	const struct afx_conf *conf = c;

	return sdp_nic_iface_attr(decl, conf->iface, conf->name, attr);
}

static const struct sdp_nic_provider afx_nic = {
	.name = "afxdp",
	.bus = SDP_NIC_BUS_AFXDP,
	.conf_size = sizeof(struct afx_conf),
	.name_off = offsetof(struct afx_conf, name),
	.conf_read = afx_conf_read,
	.conf_attr = afx_conf_attr,
};

static doca_error_t afx_enumerate(const struct sdp_dev_decl *const *decls, size_t num_decls,
				  struct sdp_devinfo_sink *sink)
{
	return sdp_nic_enumerate(&afx_nic, decls, num_decls, sink);
}

static doca_error_t afx_dev_open(const struct sdp_devinfo_attr *attr, void **dev_priv)
{
	return sdp_nic_dev_alloc("afxdp", attr, sizeof(struct afx_conf), sizeof(struct afx_conf),
				 dev_priv);
}

static void afx_dev_close(const struct sdp_devinfo_attr *attr, void *dev_priv)
{
	(void)attr;
	free(dev_priv);
}

/* ---- RX -------------------------------------------------------------------------------------- */

/*
 * Give the kernel back n RX chunks (their base addresses) through the fill ring. The kernel
 * publishes what it took from the fill ring lazily, so the ring may look fuller than it is:
 * what does not fit now waits in the queue's stash (it has room for every RX chunk) and goes
 * first next time. No chunk is ever lost.
 */
static void fill_give(struct afx_q *q, const uint64_t *addrs, uint32_t n)
{
	uint32_t idx, room;

	memcpy(q->rx_stash + q->rx_nstash, addrs, sizeof(*addrs) * n);
	q->rx_nstash += n;
	if (q->rx_nstash == 0)
		return;
	room = xsk_prod_nb_free(&q->fq, q->rx_nstash);
	if (room > q->rx_nstash)
		room = q->rx_nstash;
	if (room == 0 || xsk_ring_prod__reserve(&q->fq, room, &idx) != room)
		return;
	for (uint32_t i = 0; i < room; i++)
		*xsk_ring_prod__fill_addr(&q->fq, idx + i) = q->rx_stash[i];
	xsk_ring_prod__submit(&q->fq, room);
	q->rx_nstash -= room;
	memmove(q->rx_stash, q->rx_stash + room, sizeof(*q->rx_stash) * q->rx_nstash);
}

static void rx_kick(struct afx_q *q)
{
	if (xsk_ring_prod__needs_wakeup(&q->fq))
		(void)recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

static uint16_t afx_rx_burst(struct sdp_eth_port *port, uint16_t qi, struct sdp_pkt *pkts,
			     uint16_t n)
{
	uint64_t addrs[256];
	struct afx_q *q;
	uint32_t idx, got;

	if (port == NULL || pkts == NULL || qi >= port->nq || n == 0)
		return 0;
	q = &port->q[qi];
	if (n > 256)
		n = 256;
	got = xsk_ring_cons__peek(&q->rx, n, &idx);
	if (got == 0) {
		rx_kick(q);
		return 0;
	}
	for (uint32_t i = 0; i < got; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&q->rx, idx + i);
		uint64_t off = xsk_umem__add_offset_to_addr(d->addr);
		uint32_t len = d->len, cut = len;
		struct sdp_pkt *p = &pkts[i];

		/* a descriptor outside the RX half or past its chunk is the kernel's bug: drop */
		if (off + len > (uint64_t)port->frames * AFX_CHUNK) {
			cut = 0;
			len = 0;
		}
		if (cut > p->cap)
			cut = p->cap;
		memcpy(p->data, q->area + off, cut);
		p->len = cut;
		p->wire_len = len;
		p->flags = cut < len ? SDP_PKT_F_TRUNCATED : 0;
		p->ts_ns = 0;
		addrs[i] = xsk_umem__extract_addr(d->addr);
	}
	xsk_ring_cons__release(&q->rx, got);
	fill_give(q, addrs, got);
	rx_kick(q);
	return (uint16_t)got;
}

static int afx_rx_fd(struct sdp_eth_port *port, uint16_t qi)
{
	if (port == NULL || qi >= port->nq)
		return -1;
	return port->q[qi].fd;
}

/* ---- TX -------------------------------------------------------------------------------------- */

/* Chunks the kernel has sent go back to the free stack. */
static void tx_reclaim(struct afx_q *q)
{
	uint32_t idx, n = xsk_ring_cons__peek(&q->cq, UINT32_MAX, &idx);

	for (uint32_t i = 0; i < n; i++)
		q->tx_free[q->tx_nfree++] =
			xsk_umem__extract_addr(*xsk_ring_cons__comp_addr(&q->cq, idx + i));
	if (n > 0)
		xsk_ring_cons__release(&q->cq, n);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* tx_fd waits for the send time t (CLOCK_REALTIME ns) of the frame that stopped a burst. */
static void tx_arm_timer(struct afx_q *q, uint64_t t)
{
	struct itimerspec its = {.it_value = {.tv_sec = (time_t)(t / NSEC_PER_SEC),
					      .tv_nsec = (long)(t % NSEC_PER_SEC)}};

	if (timerfd_settime(q->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
		sdp_warn("afxdp: arming a TX timer failed: %m");
}

static uint16_t afx_tx_burst(struct sdp_eth_port *port, uint16_t qi, const struct sdp_pkt *pkts,
			     uint16_t n)
{
	uint32_t idx, room, done = 0;
	struct afx_q *q;
	uint64_t now = 0;

	if (port == NULL || pkts == NULL || qi >= port->nq || n == 0)
		return 0;
	q = &port->q[qi];
	tx_reclaim(q);
	room = n < q->tx_nfree ? n : q->tx_nfree;
	/* frames with a send time still ahead stop the burst (wait-on-time) */
	for (uint32_t i = 0; i < room; i++) {
		if (pkts[i].ts_ns == 0)
			continue;
		if (now == 0)
			now = now_ns();
		if (pkts[i].ts_ns > now) {
			tx_arm_timer(q, pkts[i].ts_ns);
			room = i;
			break;
		}
	}
	/* what the TX ring takes now (reserve is all or nothing; the kernel frees entries lazily) */
	if (room > 0) {
		uint32_t ring_free = xsk_prod_nb_free(&q->tx, room);

		room = ring_free < room ? ring_free : room;
	}
	if (room > 0)
		room = xsk_ring_prod__reserve(&q->tx, room, &idx);
	for (uint32_t i = 0; i < room; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&q->tx, idx + i);
		uint64_t addr = q->tx_free[--q->tx_nfree];
		uint32_t len = pkts[i].len;

		if (len > AFX_CHUNK - AFX_HEADROOM)
			len = AFX_CHUNK - AFX_HEADROOM; /* larger than the MTU allows: cut */
		memcpy(q->area + addr, pkts[i].data, len);
		d->addr = addr;
		d->len = len;
		d->options = 0;
	}
	if (room > 0) {
		xsk_ring_prod__submit(&q->tx, room);
		done = room;
	}
	/* copy mode sends from this call; zero copy when the driver asks (need-wakeup) */
	if (done > 0 || xsk_ring_prod__needs_wakeup(&q->tx)) {
		if (sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
		    errno != EBUSY && errno != ENOBUFS && errno != EINTR) {
			/* ENETDOWN, ENXIO: the link is gone; the frames are lost as on a NIC */
			q->tx_dropped += done;
		}
	}
	return (uint16_t)done;
}

static int afx_tx_fd(struct sdp_eth_port *port, uint16_t qi)
{
	if (port == NULL || qi >= port->nq)
		return -1;
	return port->q[qi].epfd;
}

/* ---- steering -------------------------------------------------------------------------------- */

static doca_error_t afx_steer(struct sdp_eth_port *port, const struct sdp_eth_steer *s)
{
	struct afx_key k, next;
	uint32_t zero = 0, all;
	uint8_t one = 1;

	if (port == NULL || s == NULL || s->nb_keys > SDP_ETH_STEER_MAX_KEYS) {
		sdp_error("afxdp steer: bad arguments (port %p, steer %p)", (void *)port,
			  (const void *)s);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* take every frame while the keys change, then narrow: no frame a rule wants is lost */
	all = 1;
	if (bpf_map_update_elem(port->cfg_fd, &zero, &all, BPF_ANY) != 0)
		goto err;
	/* empty the key map (deleting while walking: always from the first key) */
	while (bpf_map_get_next_key(port->keys_fd, NULL, &next) == 0)
		if (bpf_map_delete_elem(port->keys_fd, &next) != 0)
			goto err;
	for (uint32_t i = 0; i < s->nb_keys; i++) {
		memset(&k, 0, sizeof(k));
		k.ethertype = htons(s->keys[i].ethertype);
		k.ip_proto = s->keys[i].ip_proto;
		k.dst_port = htons(s->keys[i].dst_port);
		if (bpf_map_update_elem(port->keys_fd, &k, &one, BPF_ANY) != 0)
			goto err;
	}
	all = s->all ? 1 : 0;
	if (bpf_map_update_elem(port->cfg_fd, &zero, &all, BPF_ANY) != 0)
		goto err;
	sdp_debug("afxdp device %s: steering %s, %u key(s)", port->conf->name,
		  all ? "every frame to the port" : "by the flow rules", s->nb_keys);
	return DOCA_SUCCESS;
err:
	sdp_error("afxdp device %s: updating the XDP program's maps failed: %m (the port takes "
		  "every frame until the next change)",
		  port->conf->name);
	return DOCA_ERROR_OPERATING_SYSTEM;
}

/* ---- stats ----------------------------------------------------------------------------------- */

static void afx_stats(struct sdp_eth_port *port, struct sdp_eth_port_stats *stats)
{
	uint32_t zero = 0;
	int ncpu;

	memset(stats, 0, sizeof(*stats));
	if (port == NULL)
		return;
	for (uint16_t i = 0; i < port->nq; i++) {
		struct xdp_statistics st;
		socklen_t len = sizeof(st);

		memset(&st, 0, sizeof(st));
		if (getsockopt(port->q[i].fd, SOL_XDP, XDP_STATISTICS, &st, &len) != 0) {
			if (!port->stats_warned)
				sdp_warn("afxdp device %s: XDP_STATISTICS: %m", port->conf->name);
			port->stats_warned = 1;
			continue;
		}
		stats->rx_drops += st.rx_dropped + st.rx_ring_full;
		stats->rx_ring_full += st.rx_ring_full;
		stats->rx_invalid_descs += st.rx_invalid_descs;
		stats->tx_invalid_descs += st.tx_invalid_descs;
		if (len >= offsetof(struct xdp_statistics, rx_fill_ring_empty_descs) +
				   sizeof(st.rx_fill_ring_empty_descs))
			stats->rx_fill_empty += st.rx_fill_ring_empty_descs;
	}
	ncpu = libbpf_num_possible_cpus();
	if (ncpu > 0 && ncpu <= 4096) {
		uint64_t *per = calloc((size_t)ncpu, sizeof(*per));

		if (per != NULL && bpf_map_lookup_elem(port->cnt_fd, &zero, per) == 0)
			for (int c = 0; c < ncpu; c++)
				stats->rx_steered_kernel += per[c];
		free(per);
	}
}

/* ---- ports ----------------------------------------------------------------------------------- */

static int afx_link_up(struct sdp_eth_port *port)
{
	if (port == NULL)
		return 0;
	return sdp_nic_iface_link_up(port->conf->iface);
}

static void q_close(struct afx_q *q)
{
	if (q->xsk != NULL)
		xsk_socket__delete(q->xsk);
	if (q->umem != NULL)
		(void)xsk_umem__delete(q->umem);
	if (q->area != NULL)
		munmap(q->area, q->area_len);
	if (q->epfd >= 0)
		close(q->epfd);
	if (q->timer_fd >= 0)
		close(q->timer_fd);
	free(q->tx_free);
	free(q->rx_stash);
	memset(q, 0, sizeof(*q));
	q->fd = q->epfd = q->timer_fd = -1;
}

static void prog_detach(struct sdp_eth_port *port)
{
	struct bpf_xdp_attach_opts opts = {.sz = sizeof(opts), .old_prog_fd = port->prog_fd};

	if (port->prog_id == 0)
		return;
	/* only our own program: another one attached since stays */
	if (bpf_xdp_detach(port->ifindex, port->xdp_flags | XDP_FLAGS_REPLACE, &opts) != 0 &&
	    errno != ENODEV)
		sdp_warn("afxdp device %s: detaching the XDP program from %s: %m", port->conf->name,
			 port->conf->iface);
	port->prog_id = 0;
}

static void afx_port_close(struct sdp_eth_port *port)
{
	if (port == NULL)
		return;
	/* the program first: no frame is redirected to a socket about to go */
	prog_detach(port);
	for (uint16_t i = 0; i < AFX_MAX_QUEUES; i++) {
		if (port->q[i].tx_dropped > 0)
			sdp_debug("afxdp device %s: TX queue %u dropped %llu frame(s)",
				  port->conf->name, i, (unsigned long long)port->q[i].tx_dropped);
		q_close(&port->q[i]);
	}
	if (port->obj != NULL)
		bpf_object__close(port->obj);
	sdp_debug("afxdp device %s: port closed", port->conf->name);
	free(port);
}

/* The interface's RX queues (ETHTOOL_GCHANNELS: rx + combined), or 0 when it will not say. */
static uint32_t iface_rx_queues(const char *iface)
{
	struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
	struct ifreq ifr;
	uint32_t n = 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	ifr.ifr_data = (void *)&ch;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
		n = ch.rx_count + ch.combined_count;
	close(fd);
	return n;
}

/* Load the embedded program (not attached yet) and find its maps. */
static doca_error_t prog_load(struct sdp_eth_port *port)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "sdp_afxdp");
	struct bpf_program *prog;
	int err;

	port->obj = bpf_object__open_mem(sdp_afxdp_steer_obj, sizeof(sdp_afxdp_steer_obj), &oo);
	if (port->obj == NULL) {
		err = errno;
		sdp_error("afxdp device %s: opening the embedded XDP program: %s", port->conf->name,
			  strerror(err));
		return DOCA_ERROR_DRIVER;
	}
	err = bpf_object__load(port->obj);
	if (err != 0) {
		err = -err;
		sdp_error("afxdp device %s: loading the XDP program into the kernel: %s%s",
			  port->conf->name, strerror(err),
			  err == EPERM ? " (needs CAP_BPF or CAP_SYS_ADMIN, and CAP_NET_ADMIN; "
					 "and a memlock limit high enough for its maps)" :
					 "");
		return sdp_nic_errno_status(err);
	}
	prog = bpf_object__find_program_by_name(port->obj, "sdp_afxdp_steer");
	port->prog_fd = prog != NULL ? bpf_program__fd(prog) : -1;
	port->xsks_fd = bpf_object__find_map_fd_by_name(port->obj, "sdp_xsks");
	port->cfg_fd = bpf_object__find_map_fd_by_name(port->obj, "sdp_cfg");
	port->keys_fd = bpf_object__find_map_fd_by_name(port->obj, "sdp_keys");
	port->cnt_fd = bpf_object__find_map_fd_by_name(port->obj, "sdp_cnt");
	if (port->prog_fd < 0 || port->xsks_fd < 0 || port->cfg_fd < 0 || port->keys_fd < 0 ||
	    port->cnt_fd < 0) {
		sdp_error("afxdp device %s: the embedded XDP program lacks its program or maps",
			  port->conf->name);
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

/* Attach the program to the interface (native, else generic per the declaration). */
static doca_error_t prog_attach(struct sdp_eth_port *port)
{
	static const uint32_t modes[] = {XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE};
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	uint32_t zero = 0, all = 1;
	int err = 0;

	/* until the engine's first steer: every frame (no rules yet) */
	if (bpf_map_update_elem(port->cfg_fd, &zero, &all, BPF_ANY) != 0) {
		err = errno;
		sdp_error("afxdp device %s: initialising the XDP program's maps: %m",
			  port->conf->name);
		return sdp_nic_errno_status(err);
	}
	for (int i = 0; i < 2; i++) {
		uint32_t flags = modes[i] | XDP_FLAGS_UPDATE_IF_NOEXIST;

		if ((port->conf->mode == AFX_MODE_NATIVE && i == 1) ||
		    (port->conf->mode == AFX_MODE_SKB && i == 0))
			continue;
		if (bpf_xdp_attach(port->ifindex, port->prog_fd, flags, NULL) == 0) {
			port->xdp_flags = modes[i];
			break;
		}
		err = errno;
		if (err == EBUSY || err == EEXIST) {
			sdp_error("afxdp device %s: interface %s already runs an XDP program; "
				  "refusing to replace it",
				  port->conf->name, port->conf->iface);
			return DOCA_ERROR_IN_USE;
		}
		sdp_debug("afxdp device %s: %s XDP on %s: %s", port->conf->name,
			  i == 0 ? "native" : "generic", port->conf->iface, strerror(err));
	}
	if (port->xdp_flags == 0) {
		sdp_error("afxdp device %s: attaching the XDP program to %s failed: %s%s",
			  port->conf->name, port->conf->iface, strerror(err),
			  err == EPERM ? " (needs CAP_NET_ADMIN)" : "");
		return sdp_nic_errno_status(err);
	}
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(port->prog_fd, &info, &len) == 0)
		port->prog_id = info.id;
	else
		port->prog_id = UINT32_MAX; /* attached, id unknown: detach by fd still works */
	return DOCA_SUCCESS;
}

/*
 * xsk_socket__create, waiting (AFX_BUSY_WAIT_MS at most) while the queue is still bound: the
 * kernel lets go of a closed socket's queue from a work item, so a port closed and opened again
 * at once finds it busy for a moment.
 */
static int xsk_socket_create_wait(struct sdp_eth_port *port, uint16_t qi, struct afx_q *q,
				  const struct xsk_socket_config *sc)
{
	struct timespec pause = {.tv_nsec = 2 * 1000 * 1000};
	int err;

	for (int waited_ms = 0;; waited_ms += 2) {
		err = xsk_socket__create(&q->xsk, port->conf->iface, qi, q->umem, &q->rx, &q->tx,
					 sc);
		if (err != -EBUSY || waited_ms >= AFX_BUSY_WAIT_MS)
			break;
		q->xsk = NULL;
		nanosleep(&pause, NULL);
	}
	if (err == -EBUSY)
		sdp_error("afxdp device %s: queue %u of %s stays bound to another AF_XDP socket",
			  port->conf->name, qi, port->conf->iface);
	return err;
}

static doca_error_t q_open(struct sdp_eth_port *port, uint16_t qi)
{
	struct afx_q *q = &port->q[qi];
	uint32_t frames = port->frames;
	struct xsk_umem_config uc = {
		.fill_size = frames,
		.comp_size = frames,
		.frame_size = AFX_CHUNK,
		.frame_headroom = AFX_HEADROOM,
		.flags = 0,
	};
	struct xsk_socket_config sc = {
		.rx_size = frames,
		.tx_size = frames,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = port->xdp_flags,
	};
	struct epoll_event ev = {.events = EPOLLIN};
	uint64_t rx_addrs[256];
	int err, zc_try;

	q->area_len = (size_t)2 * frames * AFX_CHUNK;
	q->area =
		mmap(NULL, q->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q->area == MAP_FAILED) {
		q->area = NULL;
		sdp_error("afxdp device %s: %zu bytes of UMEM for queue %u: %m", port->conf->name,
			  q->area_len, qi);
		return DOCA_ERROR_NO_MEMORY;
	}
	err = xsk_umem__create(&q->umem, q->area, q->area_len, &q->fq, &q->cq, &uc);
	if (err != 0) {
		q->umem = NULL;
		sdp_error("afxdp device %s: UMEM of queue %u: %s%s", port->conf->name, qi,
			  strerror(-err),
			  -err == EPERM || -err == ENOMEM ?
				  " (needs CAP_NET_ADMIN, or a higher RLIMIT_MEMLOCK)" :
			  -err == EAFNOSUPPORT ? " (the kernel has no AF_XDP)" :
						 "");
		return sdp_nic_errno_status(-err);
	}
	/* zero copy where asked or possible; copy mode otherwise (or when zerocopy=off) */
	for (zc_try = port->conf->zc == AFX_ZC_OFF ? 0 : 1; zc_try >= 0; zc_try--) {
		sc.bind_flags = XDP_USE_NEED_WAKEUP | (zc_try ? XDP_ZEROCOPY : XDP_COPY);
		err = xsk_socket_create_wait(port, qi, q, &sc);
		if (err == 0)
			break;
		q->xsk = NULL;
		if (!zc_try || port->conf->zc == AFX_ZC_ON)
			break;
		sdp_debug("afxdp device %s: queue %u: no zero copy (%s), copy mode",
			  port->conf->name, qi, strerror(-err));
	}
	if (err != 0) {
		sdp_error("afxdp device %s: AF_XDP socket on %s queue %u%s: %s", port->conf->name,
			  port->conf->iface, qi,
			  sc.bind_flags & XDP_ZEROCOPY ? " (zero copy, zerocopy=on)" : "",
			  strerror(-err));
		return sdp_nic_errno_status(-err);
	}
	if (qi == 0)
		port->zerocopy = (sc.bind_flags & XDP_ZEROCOPY) != 0;
	q->fd = xsk_socket__fd(q->xsk);
	err = xsk_socket__update_xskmap(q->xsk, port->xsks_fd);
	if (err != 0) {
		sdp_error("afxdp device %s: XSKMAP entry of queue %u: %s", port->conf->name, qi,
			  strerror(-err));
		return sdp_nic_errno_status(-err);
	}
	/* RX chunks 0 .. frames-1 to the fill ring; TX chunks frames .. 2*frames-1 free */
	q->rx_stash = malloc(sizeof(*q->rx_stash) * frames);
	if (q->rx_stash == NULL) {
		sdp_error("afxdp device %s: out of memory for queue %u", port->conf->name, qi);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (uint32_t c = 0; c < frames; c += 256) {
		uint32_t n = frames - c < 256 ? frames - c : 256;

		for (uint32_t i = 0; i < n; i++)
			rx_addrs[i] = (uint64_t)(c + i) * AFX_CHUNK;
		fill_give(q, rx_addrs, n);
	}
	q->tx_free = malloc(sizeof(*q->tx_free) * frames);
	if (q->tx_free == NULL) {
		sdp_error("afxdp device %s: out of memory for queue %u", port->conf->name, qi);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (uint32_t i = 0; i < frames; i++)
		q->tx_free[q->tx_nfree++] = (uint64_t)(2 * frames - 1 - i) * AFX_CHUNK;
	q->timer_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	q->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (q->timer_fd < 0 || q->epfd < 0) {
		err = errno;
		sdp_error("afxdp device %s: queue %u: timerfd/epoll: %m", port->conf->name, qi);
		return sdp_nic_errno_status(err);
	}
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->timer_fd, &ev) != 0) {
		err = errno;
		sdp_error("afxdp device %s: queue %u: epoll_ctl: %m", port->conf->name, qi);
		return sdp_nic_errno_status(err);
	}
	ev.events = EPOLLOUT;
	if (epoll_ctl(q->epfd, EPOLL_CTL_ADD, q->fd, &ev) != 0) {
		err = errno;
		sdp_error("afxdp device %s: queue %u: epoll_ctl: %m", port->conf->name, qi);
		return sdp_nic_errno_status(err);
	}
	return DOCA_SUCCESS;
}

static doca_error_t afx_port_open(void *dev_priv, const struct sdp_eth_port_cfg *cfg,
				  struct sdp_eth_port **port_p, struct sdp_eth_port_info *info_p)
{
	const struct afx_conf *conf = dev_priv;
	struct sdp_eth_port_info info;
	struct sdp_eth_port *port;
	doca_error_t status;
	uint32_t frames, nq_if;
	uint16_t want;

	if (conf == NULL || cfg == NULL || port_p == NULL || info_p == NULL) {
		sdp_error("afxdp port_open: NULL argument (dev %p, cfg %p, port_p %p, info_p %p)",
			  dev_priv, (const void *)cfg, (void *)port_p, (void *)info_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((cfg->nb_rxq == 0 && cfg->nb_txq == 0) || cfg->nb_rxq > AFX_MAX_QUEUES ||
	    cfg->nb_txq > AFX_MAX_QUEUES) {
		sdp_error("afxdp device %s: %u RX and %u TX queues asked, expected 1 to %d of at "
			  "least one kind",
			  conf->name, cfg->nb_rxq, cfg->nb_txq, AFX_MAX_QUEUES);
		return DOCA_ERROR_INVALID_VALUE;
	}
	port = calloc(1, sizeof(*port));
	if (port == NULL) {
		sdp_error("out of memory opening a port of afxdp device %s", conf->name);
		return DOCA_ERROR_NO_MEMORY;
	}
	port->conf = conf;
	port->prog_fd = port->xsks_fd = port->cfg_fd = port->keys_fd = port->cnt_fd = -1;
	for (int i = 0; i < AFX_MAX_QUEUES; i++)
		port->q[i].fd = port->q[i].epfd = port->q[i].timer_fd = -1;
	port->ifindex = (int)if_nametoindex(conf->iface);
	if (port->ifindex == 0) {
		int err = errno;

		sdp_error("afxdp device %s: interface %s: %m", conf->name, conf->iface);
		free(port);
		return err == ENODEV ? DOCA_ERROR_NOT_FOUND : sdp_nic_errno_status(err);
	}
	memset(&info, 0, sizeof(info));
	status = sdp_nic_iface_read("afxdp", conf->name, conf->iface, &info);
	if (status != DOCA_SUCCESS) {
		free(port);
		return status;
	}
	if (info.mtu + ETH_HLEN + AFX_VLAN_HLEN > AFX_CHUNK - AFX_HEADROOM) {
		sdp_error("afxdp device %s: MTU %u of %s does not fit a %u-byte AF_XDP frame (at "
			  "most %u)",
			  conf->name, info.mtu, conf->iface, AFX_CHUNK,
			  AFX_CHUNK - AFX_HEADROOM - ETH_HLEN - AFX_VLAN_HLEN);
		free(port);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	frames = conf->frames;
	if (frames == 0) {
		uint32_t hint = cfg->ring_size ? cfg->ring_size : AFX_DEF_FRAMES;

		frames = AFX_MIN_FRAMES;
		while (frames < hint && frames < AFX_MAX_FRAMES)
			frames <<= 1;
	}
	port->frames = frames;

	status = prog_load(port);
	if (status == DOCA_SUCCESS)
		status = prog_attach(port);
	if (status != DOCA_SUCCESS)
		goto err_close;
	/*
	 * A socket on every RX queue the interface has (a frame on a queue without one would go to
	 * the host): queues= where declared, else the interface's count; whatever the engine asks.
	 */
	nq_if = iface_rx_queues(conf->iface);
	want = (uint16_t)(conf->queues ? conf->queues : nq_if ? nq_if : 1);
	if (want > AFX_MAX_QUEUES) {
		sdp_warn("afxdp device %s: %s has %u RX queues; the port takes the first %d (the "
			 "frames of the others go to the host's stack)",
			 conf->name, conf->iface, want, AFX_MAX_QUEUES);
		want = AFX_MAX_QUEUES;
	} else if (conf->queues != 0 && nq_if > conf->queues) {
		sdp_warn("afxdp device %s: %s has %u RX queues and queues=%u: the frames of "
			 "queues %u and up go to the host's stack",
			 conf->name, conf->iface, nq_if, conf->queues, conf->queues);
	}
	for (uint16_t i = 0; i < want; i++) {
		status = q_open(port, i);
		port->nq = i + 1; /* port_close undoes what q_open left */
		if (status != DOCA_SUCCESS)
			goto err_close;
	}
	info.nb_rxq = port->nq;
	info.nb_txq = cfg->nb_txq < port->nq ? cfg->nb_txq : port->nq;
	info.has_rx_fd = 1;
	sdp_info("afxdp device %s: port open on %s (ifindex %d), %s XDP, %s, %u queue(s) of %u "
		 "frames",
		 conf->name, conf->iface, port->ifindex,
		 port->xdp_flags == XDP_FLAGS_DRV_MODE ? "native" : "generic",
		 port->zerocopy ? "zero copy" : "copy mode", port->nq, frames);
	*info_p = info;
	*port_p = port;
	return DOCA_SUCCESS;

err_close:
	afx_port_close(port);
	return status;
}

static const struct sdp_eth_port_ops afx_eth_ops = {
	.port_open = afx_port_open,
	.port_close = afx_port_close,
	.rx_burst = afx_rx_burst,
	.tx_burst = afx_tx_burst,
	.rx_fd = afx_rx_fd,
	.tx_fd = afx_tx_fd,
	.link_up = afx_link_up,
	.stats = afx_stats,
	.steer = afx_steer,
};

/* libbpf's own messages go through softdpu's log (warnings and errors; debug at trace). */
static int afx_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = '\0';
	if (level == LIBBPF_WARN)
		sdp_debug("libbpf: %s", buf); /* the caller reports the failure itself */
	else
		sdp_trace("libbpf: %s", buf);
	return 0;
}

static doca_error_t afx_init(void)
{
	libbpf_set_print(afx_libbpf_print);
	return DOCA_SUCCESS;
}

static const struct sdp_provider_ops afx_ops = {
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "afxdp",
	.init = afx_init,
	.decl_check = afx_decl_check,
	.enumerate = afx_enumerate,
	.dev_open = afx_dev_open,
	.dev_close = afx_dev_close,
	.devinfo_free = free,
	.eth = &afx_eth_ops,
};

SDP_PROVIDER_DEFINE(afx_ops);
