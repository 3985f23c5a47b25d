/*
 * The `loop` device provider: an in-memory Ethernet wire joining two devices of one process.
 *
 *     loop:name=<ibdev>,peer=<ibdev>[,mac=aa:bb:cc:dd:ee:ff][,queues=N][,depth=N][,mtu=N]
 *
 * Two declarations naming each other make a wire; what one end sends on its TX queue q arrives,
 * in order, on the other end's RX queue q (with fewer RX queues open, RX queue r drains wire
 * queues r, r + nb_rxq, ...). queues (1..64, default 1), depth (frames per wire queue, 1..4096,
 * default 256) and mtu (68..9000, default 1500; frames up to mtu + 18 bytes) belong to the wire:
 * when both ends give one, they must agree.
 *
 * Devices: iface name = ibdev name, PCI address ffff:01:dd.f (sdp_nic_pci_assign), MAC from
 * mac= or 02:4c:<hash of the name>, link up. A declaration whose peer is not declared, or whose
 * peer is joined to another device, or that disagrees with its peer, is left out of the device
 * list with a warning (once per process).
 *
 * The wire (one ring per direction and queue) lives in this module, keyed by the pair of names:
 * created at the first port_open of either end, freed at the last port_close. A port's link is
 * up while the other end's port is open too; frames sent while it is down are dropped (as a
 * NIC with no carrier does) and so are the frames still waiting for a port that closes. A full
 * wire queue makes tx_burst return short; tx_fd then becomes readable when the receiver makes
 * room. rx_fd/tx_fd are eventfds, written when frames (or room) arrive and drained
 * before each look at the queue. tx ts_ns (send time) is not honoured: frames go at once.
 * A port opened without RX queues has its link up but cannot receive: what reaches it is lost
 * and counted by its stats op (the only frames a port loses on its own; a full wire queue
 * holds the sender instead).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "sdp_log.h"
#include "sdp_nic_decl.h"
#include "sdp_provider.h"
#include "sdp_provider_eth.h"

SDP_LOG_COMPONENT("loop");

#define LOOP_MAX_QUEUES 64
#define LOOP_MAX_DEPTH 4096
#define LOOP_DEF_QUEUES 1
#define LOOP_DEF_DEPTH 256
#define LOOP_DEF_MTU 1500
#define LOOP_MIN_MTU 68
#define LOOP_MAX_MTU 9000
#define LOOP_L2_OVERHEAD 18 /* Ethernet header and one VLAN tag; no FCS */
#define LOOP_MAC_TAG 0x4c   /* 'L' */

/* One declared device as enumerate resolved it against its peer. */
struct loop_cfg {
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	char peer[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	uint8_t mac[6];
	uint32_t queues;
	uint32_t depth;
	uint32_t mtu;
};

/* An open device (dev_priv). */
struct loop_dev {
	struct loop_cfg cfg;
	struct sdp_eth_port *port; /* the open port or NULL; guarded by g_loop.lock */
};

/* A wake-up channel: an eventfd. */
struct loop_sig {
	int fd;
};

struct loop_slot {
	uint32_t len;
	uint64_t ts_ns; /* CLOCK_REALTIME when sent */
};

/* One direction of one wire queue. */
struct loop_ring {
	pthread_mutex_t lock;
	uint32_t head;	/* oldest frame */
	uint32_t count; /* frames waiting */
	struct loop_slot *slots;
	uint8_t *data;		 /* depth frames of frame_max bytes */
	struct loop_sig *rx_sig; /* receiving port's RX queue; NULL: link down */
	struct loop_sig *tx_sig; /* sending port's TX queue; NULL: no sender */
	int want_room;		 /* the sender met a full ring */
	int rx_open;		 /* the receiving port is open (with or without an RX queue) */
	uint64_t dropped;	 /* sent with the link down, or flushed at close */
	uint64_t rx_lost;	 /* reached an open receiving port that has no RX queue */
};

struct loop_wire {
	struct loop_wire *next;
	char names[2][DOCA_DEVINFO_IBDEV_NAME_SIZE]; /* end 0 sorts before end 1 */
	uint32_t queues;
	uint32_t depth;
	uint32_t frame_max;
	struct sdp_eth_port *ends[2]; /* guarded by g_loop.lock */
	struct loop_ring *rings[2];   /* rings[d][q]: from end d to end 1 - d */
};

struct sdp_eth_port {
	struct loop_wire *wire;
	int end;
	struct loop_dev *dev;
	uint16_t nb_rxq;
	uint16_t nb_txq;
	struct loop_sig *rxs;
	struct loop_sig *txs;
	uint64_t bad_frames; /* refused by tx_burst: NULL, empty or over frame_max */
	int bad_logged;
};

static struct {
	pthread_mutex_t lock;
	struct loop_wire *wires;
	const void **warned; /* declarations already reported by enumerate */
	size_t num_warned;
} g_loop = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ---- declarations ---------------------------------------------------------------------------- */

static const char *const loop_keys[] = {"name", "peer", "mac", "queues", "depth", "mtu", NULL};

static doca_error_t loop_decl_check(const struct sdp_dev_decl *decl)
{
	const char *name = sdp_dev_decl_get(decl, "name");
	const char *peer = sdp_dev_decl_get(decl, "peer");
	const char *mac_text = sdp_dev_decl_get(decl, "mac");
	uint64_t v;
	uint8_t mac[6];

	if (!sdp_nic_decl_keys_ok(decl, loop_keys) || !sdp_nic_decl_name_ok(decl, "name", name))
		return DOCA_ERROR_INVALID_VALUE;
	if (peer == NULL) {
		sdp_warn("%s: loop device %s needs peer=<device name>, the device at the other end "
			 "of its wire",
			 decl->origin, name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sdp_nic_decl_name_ok(decl, "peer", peer))
		return DOCA_ERROR_INVALID_VALUE;
	if (strcmp(name, peer) == 0) {
		sdp_warn("%s: loop device %s cannot be its own peer", decl->origin, name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (mac_text != NULL && (!sdp_nic_parse_mac(mac_text, mac) || (mac[0] & 1) != 0)) {
		sdp_warn("%s: mac=%s is not a unicast MAC address aa:bb:cc:dd:ee:ff", decl->origin,
			 mac_text);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sdp_nic_decl_uint(decl, "queues", 1, LOOP_MAX_QUEUES, LOOP_DEF_QUEUES, &v) ||
	    !sdp_nic_decl_uint(decl, "depth", 1, LOOP_MAX_DEPTH, LOOP_DEF_DEPTH, &v) ||
	    !sdp_nic_decl_uint(decl, "mtu", LOOP_MIN_MTU, LOOP_MAX_MTU, LOOP_DEF_MTU, &v))
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_SUCCESS;
}

/* Report a refused declaration once per process (enumerate runs at every device list). */
static void __attribute__((format(printf, 2, 3))) warn_once(const void *decl, const char *fmt, ...)
{
	char msg[512];
	const void **warned;
	va_list ap;

	pthread_mutex_lock(&g_loop.lock);
	for (size_t i = 0; i < g_loop.num_warned; i++) {
		if (g_loop.warned[i] == decl) {
			pthread_mutex_unlock(&g_loop.lock);
			return;
		}
	}
	warned = realloc(g_loop.warned, (g_loop.num_warned + 1) * sizeof(*warned));
	if (warned != NULL) {
		g_loop.warned = warned;
		g_loop.warned[g_loop.num_warned++] = decl;
	}
	pthread_mutex_unlock(&g_loop.lock);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sdp_warn("%s", msg);
}

/* A wire parameter from the declarations of both ends: 0 and a warning when they disagree. */
static int wire_param(const struct sdp_dev_decl *d, const struct sdp_dev_decl *p, const char *key,
		      uint64_t def, uint32_t *value_p)
{
	const char *mine = sdp_dev_decl_get(d, key);
	const char *theirs = sdp_dev_decl_get(p, key);
	uint64_t a = def, b = def;

	/* both were range-checked by loop_decl_check: these parse */
	if (mine != NULL)
		(void)sdp_nic_parse_decimal(mine, &a);
	if (theirs != NULL)
		(void)sdp_nic_parse_decimal(theirs, &b);
	if (mine != NULL && theirs != NULL && a != b) {
		warn_once(d,
			  "%s: loop device %s says %s=%s but its peer %s (%s) says %s=%s; device "
			  "not listed",
			  d->origin, sdp_dev_decl_get(d, "name"), key, mine,
			  sdp_dev_decl_get(p, "name"), p->origin, key, theirs);
		return 0;
	}
	*value_p = (uint32_t)(mine != NULL ? a : b);
	return 1;
}

/* Resolve decls[i] against its peer into cfg; 0 (reported once) when it cannot be listed. */
static int loop_resolve(const struct sdp_dev_decl *const *decls, size_t num_decls, size_t i,
			struct loop_cfg *cfg)
{
	const struct sdp_dev_decl *d = decls[i], *p = NULL;
	const char *name = sdp_dev_decl_get(d, "name");
	const char *peer = sdp_dev_decl_get(d, "peer");
	const char *mac_text = sdp_dev_decl_get(d, "mac");

	for (size_t j = 0; j < num_decls && p == NULL; j++)
		if (strcmp(sdp_dev_decl_get(decls[j], "name"), peer) == 0)
			p = decls[j];
	if (p == NULL) {
		warn_once(d, "%s: loop device %s: its peer %s is not declared; device not listed",
			  d->origin, name, peer);
		return 0;
	}
	if (strcmp(sdp_dev_decl_get(p, "peer"), name) != 0) {
		warn_once(d,
			  "%s: loop device %s: its peer %s is joined to %s (%s); device not listed",
			  d->origin, name, peer, sdp_dev_decl_get(p, "peer"), p->origin);
		return 0;
	}
	memset(cfg, 0, sizeof(*cfg));
	if (!wire_param(d, p, "queues", LOOP_DEF_QUEUES, &cfg->queues) ||
	    !wire_param(d, p, "depth", LOOP_DEF_DEPTH, &cfg->depth) ||
	    !wire_param(d, p, "mtu", LOOP_DEF_MTU, &cfg->mtu))
		return 0;
	snprintf(cfg->name, sizeof(cfg->name), "%s", name);
	snprintf(cfg->peer, sizeof(cfg->peer), "%s", peer);
	if (mac_text == NULL || !sdp_nic_parse_mac(mac_text, cfg->mac))
		sdp_nic_default_mac(name, LOOP_MAC_TAG, cfg->mac);
	return 1;
}

/* conf_read of sdp_nic_enumerate: a device is listed once it pairs with its peer. */
static doca_error_t loop_conf_read(const struct sdp_dev_decl *const *decls, size_t num_decls,
				   size_t i, void *conf)
{
	return loop_resolve(decls, num_decls, i, conf) ? DOCA_SUCCESS : DOCA_ERROR_SKIPPED;
}

static const struct sdp_nic_provider loop_nic = {
	.name = "loop",
	.bus = SDP_NIC_BUS_LOOP,
	.conf_size = sizeof(struct loop_cfg),
	.name_off = offsetof(struct loop_cfg, name),
	.conf_read = loop_conf_read,
};

static doca_error_t loop_enumerate(const struct sdp_dev_decl *const *decls, size_t num_decls,
				   struct sdp_devinfo_sink *sink)
{
	return sdp_nic_enumerate(&loop_nic, decls, num_decls, sink);
}

/* sdp_nic_dev_alloc copies the configuration into the start of the device */
_Static_assert(offsetof(struct loop_dev, cfg) == 0, "loop_dev must start with its loop_cfg");

static doca_error_t loop_dev_open(const struct sdp_devinfo_attr *attr, void **dev_priv)
{
	return sdp_nic_dev_alloc("loop", attr, sizeof(struct loop_dev), sizeof(struct loop_cfg),
				 dev_priv);
}

static void loop_port_close(struct sdp_eth_port *port);

static void loop_dev_close(const struct sdp_devinfo_attr *attr, void *dev_priv)
{
	struct loop_dev *dev = dev_priv;

	sdp_nic_dev_close_port("loop", attr, dev->port, loop_port_close);
	free(dev);
}

/* ---- wake-ups -------------------------------------------------------------------------------- */

static void sig_raise(struct loop_sig *sig)
{
	uint64_t one = 1;

	if (write(sig->fd, &one, sizeof(one)) != sizeof(one))
		sdp_error("failed to write eventfd %d: %m", sig->fd);
}

/*
 * Wake-ups cost a system call each, so they follow the rings' edges: the sender raises the
 * receiver's rx_sig only when a ring goes from empty to non-empty, and the receiver drains it only
 * once every ring it reads is empty, then looks at them again and raises it itself when a frame
 * came in between (its raise may have landed before the drain). So the fd is readable whenever a
 * frame waits. The same for room: the sender drains its tx_sig when it finds the ring full (under
 * the ring's lock, before it sets want_room), the receiver raises it when it makes room for a
 * sender that asked. (An earlier version saved system calls with a "raised" flag; its drain could
 * clear the flag after a concurrent raise and lose every later wake-up.)
 */
static void sig_drain(struct loop_sig *sig)
{
	uint64_t value;

	if (read(sig->fd, &value, sizeof(value)) < 0 && errno != EAGAIN)
		sdp_error("failed to read eventfd %d: %m", sig->fd);
}

static doca_error_t sigs_create(struct loop_sig **sigs_p, uint16_t n, const char *what)
{
	struct loop_sig *sigs = calloc(n ? n : 1, sizeof(*sigs));
	doca_error_t status;
	uint16_t i;

	if (sigs == NULL) {
		sdp_error("failed to allocate %u %s wake-ups", n, what);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (i = 0; i < n; i++) {
		sigs[i].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (sigs[i].fd < 0) {
			sdp_error("eventfd for %s queue %u failed: %m", what, i);
			status = errno == ENOMEM ? DOCA_ERROR_NO_MEMORY :
						   DOCA_ERROR_OPERATING_SYSTEM;
			goto err_close;
		}
	}
	*sigs_p = sigs;
	return DOCA_SUCCESS;

err_close:
	while (i-- > 0)
		close(sigs[i].fd);
	free(sigs);
	return status;
}

static void sigs_destroy(struct loop_sig *sigs, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		close(sigs[i].fd);
	free(sigs);
}

/* ---- the wire -------------------------------------------------------------------------------- */

static void wire_free(struct loop_wire *wire)
{
	for (int d = 0; d < 2; d++) {
		if (wire->rings[d] == NULL)
			continue;
		for (uint32_t q = 0; q < wire->queues; q++) {
			free(wire->rings[d][q].slots);
			free(wire->rings[d][q].data);
			pthread_mutex_destroy(&wire->rings[d][q].lock);
		}
		free(wire->rings[d]);
	}
	free(wire);
}

static doca_error_t wire_create(const struct loop_cfg *cfg, struct loop_wire **wire_p)
{
	struct loop_wire *wire = calloc(1, sizeof(*wire));
	int first = strcmp(cfg->name, cfg->peer) < 0 ? 0 : 1;

	if (wire == NULL)
		goto err_nomem;
	snprintf(wire->names[first], sizeof(wire->names[0]), "%s", cfg->name);
	snprintf(wire->names[1 - first], sizeof(wire->names[0]), "%s", cfg->peer);
	wire->queues = cfg->queues;
	wire->depth = cfg->depth;
	wire->frame_max = cfg->mtu + LOOP_L2_OVERHEAD;
	for (int d = 0; d < 2; d++) {
		wire->rings[d] = calloc(wire->queues, sizeof(*wire->rings[d]));
		if (wire->rings[d] == NULL)
			goto err_free;
		for (uint32_t q = 0; q < wire->queues; q++) {
			struct loop_ring *ring = &wire->rings[d][q];

			pthread_mutex_init(&ring->lock, NULL);
			ring->slots = calloc(wire->depth, sizeof(*ring->slots));
			ring->data = malloc((size_t)wire->depth * wire->frame_max);
			if (ring->slots == NULL || ring->data == NULL)
				goto err_free;
		}
	}
	*wire_p = wire;
	return DOCA_SUCCESS;

err_free:
	wire_free(wire);
err_nomem:
	sdp_error("failed to allocate the wire %s <-> %s (%u queues of %u frames)", cfg->name,
		  cfg->peer, cfg->queues, cfg->depth);
	return DOCA_ERROR_NO_MEMORY;
}

static struct loop_wire *wire_find(const struct loop_cfg *cfg)
{
	for (struct loop_wire *w = g_loop.wires; w != NULL; w = w->next)
		if ((strcmp(w->names[0], cfg->name) == 0 && strcmp(w->names[1], cfg->peer) == 0) ||
		    (strcmp(w->names[1], cfg->name) == 0 && strcmp(w->names[0], cfg->peer) == 0))
			return w;
	return NULL;
}

/* ---- port ops -------------------------------------------------------------------------------- */

static doca_error_t loop_port_open(void *dev_priv, const struct sdp_eth_port_cfg *cfg,
				   struct sdp_eth_port **port_p, struct sdp_eth_port_info *info_p)
{
	struct loop_dev *dev = dev_priv;
	struct loop_wire *wire;
	struct sdp_eth_port *port;
	doca_error_t status;
	int created = 0;

	if (dev == NULL || cfg == NULL || port_p == NULL || info_p == NULL) {
		sdp_error("invalid argument: dev %p, cfg %p, port_p %p, info_p %p", dev_priv,
			  (const void *)cfg, (void *)port_p, (void *)info_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (cfg->nb_rxq == 0 && cfg->nb_txq == 0) {
		sdp_error("loop device %s: a port needs at least one RX or TX queue",
			  dev->cfg.name);
		return DOCA_ERROR_INVALID_VALUE;
	}

	pthread_mutex_lock(&g_loop.lock);
	if (dev->port != NULL) {
		sdp_error("loop device %s already has an open port", dev->cfg.name);
		status = DOCA_ERROR_IN_USE;
		goto err_unlock;
	}
	wire = wire_find(&dev->cfg);
	if (wire == NULL) {
		status = wire_create(&dev->cfg, &wire);
		if (status != DOCA_SUCCESS)
			goto err_unlock;
		created = 1;
	}
	port = calloc(1, sizeof(*port));
	if (port == NULL) {
		sdp_error("failed to allocate a port of loop device %s", dev->cfg.name);
		status = DOCA_ERROR_NO_MEMORY;
		goto err_free_wire;
	}
	port->wire = wire;
	port->end = strcmp(wire->names[0], dev->cfg.name) == 0 ? 0 : 1;
	port->dev = dev;
	port->nb_rxq = (uint16_t)(cfg->nb_rxq < wire->queues ? cfg->nb_rxq : wire->queues);
	port->nb_txq = (uint16_t)(cfg->nb_txq < wire->queues ? cfg->nb_txq : wire->queues);
	status = sigs_create(&port->rxs, port->nb_rxq, "RX");
	if (status != DOCA_SUCCESS)
		goto err_free_port;
	status = sigs_create(&port->txs, port->nb_txq, "TX");
	if (status != DOCA_SUCCESS)
		goto err_destroy_rxs;

	/* attach: we receive from direction 1 - end and send into direction end */
	for (uint32_t q = 0; q < wire->queues; q++) {
		struct loop_ring *in = &wire->rings[1 - port->end][q];
		struct loop_ring *out = &wire->rings[port->end][q];

		pthread_mutex_lock(&in->lock);
		in->rx_sig = port->nb_rxq ? &port->rxs[q % port->nb_rxq] : NULL;
		in->rx_open = 1;
		in->rx_lost = 0;
		pthread_mutex_unlock(&in->lock);
		pthread_mutex_lock(&out->lock);
		out->tx_sig = q < port->nb_txq ? &port->txs[q] : NULL;
		pthread_mutex_unlock(&out->lock);
	}
	if (created) {
		wire->next = g_loop.wires;
		g_loop.wires = wire;
	}
	wire->ends[port->end] = port;
	dev->port = port;
	pthread_mutex_unlock(&g_loop.lock);

	memset(info_p, 0, sizeof(*info_p));
	info_p->nb_rxq = port->nb_rxq;
	info_p->nb_txq = port->nb_txq;
	info_p->mtu = dev->cfg.mtu;
	memcpy(info_p->mac, dev->cfg.mac, sizeof(info_p->mac));
	info_p->has_rx_fd = 1;
	*port_p = port;
	sdp_debug("loop device %s: port open, %u RX / %u TX queues", dev->cfg.name, port->nb_rxq,
		  port->nb_txq);
	return DOCA_SUCCESS;

err_destroy_rxs:
	sigs_destroy(port->rxs, port->nb_rxq);
err_free_port:
	free(port);
err_free_wire:
	if (created)
		wire_free(wire);
err_unlock:
	pthread_mutex_unlock(&g_loop.lock);
	return status;
}

static void loop_port_close(struct sdp_eth_port *port)
{
	struct loop_wire *wire;

	if (port == NULL)
		return;
	wire = port->wire;
	pthread_mutex_lock(&g_loop.lock);
	for (uint32_t q = 0; q < wire->queues; q++) {
		struct loop_ring *in = &wire->rings[1 - port->end][q];
		struct loop_ring *out = &wire->rings[port->end][q];

		/* the link goes down: what waits for us is lost, the sender gets room back */
		pthread_mutex_lock(&in->lock);
		in->rx_sig = NULL;
		in->rx_open = 0;
		in->dropped += in->count;
		in->head = 0;
		in->count = 0;
		if (in->want_room && in->tx_sig != NULL)
			sig_raise(in->tx_sig);
		in->want_room = 0;
		pthread_mutex_unlock(&in->lock);
		pthread_mutex_lock(&out->lock);
		out->tx_sig = NULL;
		out->want_room = 0;
		pthread_mutex_unlock(&out->lock);
	}
	wire->ends[port->end] = NULL;
	port->dev->port = NULL;
	if (wire->ends[0] == NULL && wire->ends[1] == NULL) {
		struct loop_wire **pw = &g_loop.wires;

		while (*pw != wire)
			pw = &(*pw)->next;
		*pw = wire->next;
		wire_free(wire);
	}
	pthread_mutex_unlock(&g_loop.lock);
	if (port->bad_frames != 0)
		sdp_info("loop device %s: %llu bad frames refused by tx_burst", port->dev->cfg.name,
			 (unsigned long long)port->bad_frames);
	sdp_debug("loop device %s: port closed", port->dev->cfg.name);
	sigs_destroy(port->rxs, port->nb_rxq);
	sigs_destroy(port->txs, port->nb_txq);
	free(port);
}

static uint64_t now_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint16_t loop_tx_burst(struct sdp_eth_port *port, uint16_t q, const struct sdp_pkt *pkts,
			      uint16_t n)
{
	struct loop_ring *ring;
	uint64_t ts;
	uint16_t i;
	uint32_t added = 0;
	int was_empty;

	if (port == NULL || pkts == NULL || q >= port->nb_txq) {
		sdp_error("loop tx_burst: port %p, pkts %p, queue %u of %u", (void *)port,
			  (const void *)pkts, q, port ? port->nb_txq : 0);
		return 0;
	}
	if (n == 0)
		return 0;
	ring = &port->wire->rings[port->end][q];
	ts = now_realtime_ns();
	pthread_mutex_lock(&ring->lock);
	if (ring->rx_sig == NULL) {
		/*
		 * No carrier: the frames are gone, as on a real link. With the receiving port open
		 * but without RX queues the link is up: that port lost them (its stats count them).
		 */
		if (ring->rx_open)
			ring->rx_lost += n;
		else
			ring->dropped += n;
		pthread_mutex_unlock(&ring->lock);
		return n;
	}
	was_empty = ring->count == 0;
	for (i = 0; i < n; i++) {
		const struct sdp_pkt *pkt = &pkts[i];
		uint32_t idx;

		if (pkt->data == NULL || pkt->len == 0 || pkt->len > port->wire->frame_max) {
			port->bad_frames++;
			if (!port->bad_logged) {
				port->bad_logged = 1;
				sdp_error("loop device %s: dropped a frame of %u bytes (1 to %u "
					  "allowed, data %p); further ones are only counted",
					  port->dev->cfg.name, pkt->len, port->wire->frame_max,
					  pkt->data);
			}
			continue;
		}
		if (ring->count == port->wire->depth)
			break;
		idx = (ring->head + ring->count) % port->wire->depth;
		memcpy(ring->data + (size_t)idx * port->wire->frame_max, pkt->data, pkt->len);
		ring->slots[idx].len = pkt->len;
		ring->slots[idx].ts_ns = ts;
		ring->count++;
		added++;
	}
	if (i < n) {
		/* a raise of tx_sig from now on is for room made after this look */
		sig_drain(&port->txs[q]);
		ring->want_room = 1;
	}
	if (added != 0 && was_empty)
		sig_raise(ring->rx_sig);
	pthread_mutex_unlock(&ring->lock);
	return i;
}

static uint16_t loop_rx_burst(struct sdp_eth_port *port, uint16_t q, struct sdp_pkt *pkts,
			      uint16_t n)
{
	struct loop_wire *wire;
	uint16_t got = 0;
	int leftover = 0;

	if (port == NULL || pkts == NULL || q >= port->nb_rxq) {
		sdp_error("loop rx_burst: port %p, pkts %p, queue %u of %u", (void *)port,
			  (void *)pkts, q, port ? port->nb_rxq : 0);
		return 0;
	}
	wire = port->wire;
	for (uint32_t j = q; j < wire->queues; j += port->nb_rxq) {
		struct loop_ring *ring = &wire->rings[1 - port->end][j];

		pthread_mutex_lock(&ring->lock);
		while (got < n && ring->count != 0) {
			const struct loop_slot *slot = &ring->slots[ring->head];
			struct sdp_pkt *pkt = &pkts[got++];
			uint32_t len = slot->len;

			pkt->flags = 0;
			if (pkt->data == NULL || len > pkt->cap) {
				len = pkt->data == NULL ? 0 : pkt->cap;
				pkt->flags = SDP_PKT_F_TRUNCATED;
			}
			if (len != 0)
				memcpy(pkt->data, ring->data + (size_t)ring->head * wire->frame_max,
				       len);
			pkt->len = len;
			pkt->wire_len = slot->len;
			pkt->ts_ns = slot->ts_ns;
			ring->head = (ring->head + 1) % wire->depth;
			ring->count--;
		}
		if (ring->count != 0)
			leftover = 1;
		if (ring->want_room && ring->count < wire->depth) {
			ring->want_room = 0;
			if (ring->tx_sig != NULL)
				sig_raise(ring->tx_sig);
		}
		pthread_mutex_unlock(&ring->lock);
	}
	if (!leftover) {
		/* every ring read is empty: drain, then look again (see sig_drain) */
		sig_drain(&port->rxs[q]);
		for (uint32_t j = q; j < wire->queues && !leftover; j += port->nb_rxq) {
			struct loop_ring *ring = &wire->rings[1 - port->end][j];

			pthread_mutex_lock(&ring->lock);
			leftover = ring->count != 0;
			pthread_mutex_unlock(&ring->lock);
		}
		if (leftover)
			sig_raise(&port->rxs[q]);
	}
	return got;
}

static int loop_rx_fd(struct sdp_eth_port *port, uint16_t q)
{
	return port != NULL && q < port->nb_rxq ? port->rxs[q].fd : -1;
}

static int loop_tx_fd(struct sdp_eth_port *port, uint16_t q)
{
	return port != NULL && q < port->nb_txq ? port->txs[q].fd : -1;
}

static int loop_link_up(struct sdp_eth_port *port)
{
	int up;

	if (port == NULL)
		return 0;
	pthread_mutex_lock(&g_loop.lock);
	up = port->wire->ends[1 - port->end] != NULL;
	pthread_mutex_unlock(&g_loop.lock);
	return up;
}

/* Frames that reached this port while it had no RX queue (the only ones a loop port loses). */
static void loop_stats(struct sdp_eth_port *port, struct sdp_eth_port_stats *stats)
{
	uint64_t lost = 0;

	if (stats == NULL)
		return;
	for (uint32_t q = 0; port != NULL && q < port->wire->queues; q++) {
		struct loop_ring *in = &port->wire->rings[1 - port->end][q];

		pthread_mutex_lock(&in->lock);
		lost += in->rx_lost;
		pthread_mutex_unlock(&in->lock);
	}
	memset(stats, 0, sizeof(*stats));
	stats->rx_drops = lost;
}

static const struct sdp_eth_port_ops loop_eth_ops = {
	.port_open = loop_port_open,
	.port_close = loop_port_close,
	.rx_burst = loop_rx_burst,
	.tx_burst = loop_tx_burst,
	.rx_fd = loop_rx_fd,
	.tx_fd = loop_tx_fd,
	.link_up = loop_link_up,
	.stats = loop_stats,
};

static const struct sdp_provider_ops loop_ops = {
	.abi_version = SDP_PROVIDER_ABI_VERSION,
	.name = "loop",
	.decl_check = loop_decl_check,
	.enumerate = loop_enumerate,
	.dev_open = loop_dev_open,
	.dev_close = loop_dev_close,
	.devinfo_free = free,
	.eth = &loop_eth_ops,
};

SDP_PROVIDER_DEFINE(loop_ops);
