/*
 * libdoca_eth: the engine port of a device (one per doca_dev with started queues), its receive
 * thread. See sdp_eth_int.h (the software checksums: softdpu/sdp_pkt.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "doca_buf.h"
#include "sdp_config.h"
#include "sdp_eth_int.h"
#include "sdp_flow.h"
#include "sdp_log.h"
#include "sdp_provider.h"

SDP_LOG_COMPONENT("eth");

#define ENGINE_IDLE_MS 1000    /* longest sleep; the stop flag is also read at every wake-up */
#define ENGINE_HELD_MS 100     /* sleep while a back-pressured ring is full (a release wakes it) */
#define ENGINE_POLL_MS 1       /* timer for backends without an rx_fd */
#define ENGINE_ROUNDS 8	       /* bursts before the engine looks at its eventfd again */
#define ENGINE_GPU_POLL_US 20L /* GPU send queue polling period while busy lately */
#define ENGINE_GPU_IDLE_ROUNDS 5000u /* idle polls (about 0.1 s) before polling every 1 ms */

static pthread_mutex_t g_ports_lock = PTHREAD_MUTEX_INITIALIZER;
static sdp_list_link_t g_ports = SDP_LIST_HEAD_INIT(g_ports);

static void cnt_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, *c + v, __ATOMIC_RELAXED);
}

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

/*
 * How many frames the engine may take now (dport->lock): -1 when no receive queue runs, 0 when
 * a back-pressured ring is full (it is marked, so its consumer wakes the engine), else the room
 * of the fullest back-pressured ring (SDP_ETH_RX_BURST when every ring is CYCLIC).
 */
static int engine_budget(struct sdp_eth_dport *dport)
{
	struct doca_eth_rxq *rxq;
	uint32_t budget = SDP_ETH_RX_BURST;

	dport->held_by_gpu = 0;
	if (sdp_list_is_empty(&dport->rxqs))
		return -1;
	sdp_list_for_each(rxq, &dport->rxqs, dport_link) {
		uint32_t room;

		if (rxq->overflow != SDP_ETH_OVERFLOW_BACKPRESSURE)
			continue;
		room = sdp_ring_rx_room(rxq->ring);
		if (room == 0) {
			/* mark, then look again: a release in between is seen here or wakes us */
			sdp_ring_rx_mark_full(rxq->ring);
			room = sdp_ring_rx_room(rxq->ring);
			/* a kernel cannot write our eventfd: poll its ring instead */
			if (room == 0 && rxq->gpu_rx != NULL)
				dport->held_by_gpu = 1;
		}
		if (room < budget)
			budget = room;
	}
	return (int)budget;
}

/* Wake the consumers of the rings the last burst filled, where they sleep (event mode). */
static void notify_consumers(struct sdp_eth_dport *dport, int more)
{
	struct doca_eth_rxq *rxq;
	uint64_t one = 1;

	sdp_list_for_each(rxq, &dport->rxqs, dport_link) {
		if (!rxq->eng_touched)
			continue;
		rxq->eng_touched = 0;
		if (rxq->gpu_rx != NULL) {
			sdp_eth_gpu_rx_flush(rxq, more); /* copies land, then completions publish */
			continue;
		}
		if (atomic_load_explicit(&rxq->want_wake, memory_order_seq_cst) &&
		    atomic_exchange(&rxq->want_wake, 0)) {
			atomic_store(&rxq->ev_signaled, 1);
			if (write(rxq->ev_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
				sdp_warn("eth_rxq %p: waking its PE failed: %m", (void *)rxq);
		}
	}
}

int sdp_eth_profile_enabled(void)
{
	static int on = -1;
	uint64_t v = 0;

	if (__atomic_load_n(&on, __ATOMIC_RELAXED) < 0)
		__atomic_store_n(
			&on, sdp_config_get_uint(SDP_CFG_ETH_PROFILE, &v) == DOCA_SUCCESS && v != 0,
			__ATOMIC_RELAXED);
	return __atomic_load_n(&on, __ATOMIC_RELAXED);
}

/*
 * The backend's burst: up to budget frames into pkts from its queues in turn. While profiling,
 * its time is counted and *t1_p is when it ended (prof_burst counts the rest of the burst).
 */
static uint16_t backend_rx(struct sdp_eth_dport *dport, struct sdp_pkt *pkts, uint32_t budget,
			   uint64_t *t1_p)
{
	uint64_t t0 = sdp_eth_prof_now(dport->prof_on);
	uint16_t got = 0;

	for (uint16_t q = 0; q < dport->info.nb_rxq && got < budget; q++)
		got += dport->ops->rx_burst(dport->port, q, pkts + got, (uint16_t)(budget - got));
	*t1_p = sdp_eth_prof_now(dport->prof_on);
	if (dport->prof_on && got != 0)
		dport->prof.burst_ns += *t1_p - t0;
	return got;
}

/* Profiling: a burst of got frames whose backend part ended at t1; the rest lasts until now. */
static void prof_burst(struct sdp_eth_dport *dport, uint16_t got, uint64_t t1)
{
	if (!dport->prof_on || got == 0)
		return;
	dport->prof.bursts++;
	dport->prof.frames += got;
	dport->prof.work_ns += sdp_eth_prof_now(1) - t1;
}

/*
 * One receive queue and no flow port: every frame goes to that queue, so the backend writes
 * straight into the ring positions the frames will take (the ring's slots, or the packet slots
 * of a GPU queue on mapped host memory) and they are published where they lie: no staging copy,
 * no classification. Only when those positions are free now (released by the consumer): a
 * CYCLIC ring that would overwrite takes the staged path, whose reservation does the handshake
 * with the consumer. Returns the frames taken, or -1 when this burst cannot go directly.
 * (dport->lock: the queue cannot stop under the backend's writes.)
 */
static int engine_rx_direct(struct sdp_eth_dport *dport, uint32_t budget, uint64_t *bytes)
{
	struct sdp_pkt pkts[SDP_ETH_RX_BURST];
	struct doca_eth_rxq *rxq;
	struct sdp_ring_hdr *r;
	uint64_t t1;
	uint32_t pos0;
	uint16_t got = 0;

	if (sdp_list_is_empty(&dport->rxqs) || dport->rxqs.next->next != &dport->rxqs)
		return -1;
	rxq = sdp_container_of(dport->rxqs.next, struct doca_eth_rxq, dport_link);
	r = rxq->ring;
	if (sdp_ring_rx_room(r) < budget)
		return -1;
	/* the producer's next positions: only this thread reserves */
	pos0 = __atomic_load_n(&r->resv, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < budget; i++) {
		uint32_t cap = r->slot_size;
		void *dst = rxq->gpu_rx != NULL ? sdp_eth_gpu_rx_dest(rxq, pos0 + i, &cap) :
						  sdp_ring_rx_slot(r, pos0 + i);

		pkts[i] = (struct sdp_pkt){.data = dst, .cap = cap};
	}
	got = backend_rx(dport, pkts, budget, &t1);
	/* each reservation is pos0 + i (the room was checked): the pushes copy nothing */
	for (uint16_t i = 0; i < got; i++) {
		*bytes += pkts[i].len;
		if (rxq->gpu_rx != NULL)
			sdp_eth_gpu_rx_push(rxq, &pkts[i]);
		else
			(void)sdp_ring_rx_push(r, pkts[i].data, pkts[i].len, pkts[i].wire_len,
					       pkts[i].flags & SDP_ETH_PKT_CQE_FLAGS,
					       pkts[i].ts_ns);
	}
	if (got != 0) {
		rxq->eng_touched = 1;
		notify_consumers(dport, got == SDP_ETH_RX_BURST);
	}
	prof_burst(dport, got, t1);
	return got;
}

/* One burst of at most budget frames from the backend into the rings; returns frames taken. */
static unsigned int engine_rx(struct sdp_eth_dport *dport, uint32_t budget)
{
	struct sdp_pkt pkts[SDP_ETH_RX_BURST];
	struct doca_flow_port *flow;
	uint64_t bytes = 0, unsteered = 0, t1;
	uint16_t got = 0;

	if (budget > SDP_ETH_RX_BURST)
		budget = SDP_ETH_RX_BURST;
	/* looked up per burst: the application may start or replace its flow port any time */
	flow = sdp_flow_port_get(dport->dev);
	if (flow == NULL) {
		int direct;

		pthread_mutex_lock(&dport->lock);
		direct = engine_rx_direct(dport, budget, &bytes);
		pthread_mutex_unlock(&dport->lock);
		if (direct >= 0) {
			cnt_add(&dport->rx_packets, (uint64_t)direct);
			cnt_add(&dport->rx_bytes, bytes);
			return (unsigned int)direct;
		}
	}
	for (uint32_t i = 0; i < budget; i++)
		pkts[i] = (struct sdp_pkt){.data = dport->stage + (size_t)i * SDP_ETH_MAX_FRAME,
					   .cap = SDP_ETH_MAX_FRAME};
	got = backend_rx(dport, pkts, budget, &t1);
	if (got == 0) {
		if (flow != NULL)
			sdp_flow_port_put(flow);
		return 0;
	}
	pthread_mutex_lock(&dport->lock);
	for (uint16_t i = 0; i < got; i++) {
		uint16_t queue_id = 0;
		int verdict = sdp_flow_classify(flow, pkts[i].data, pkts[i].len, &queue_id);
		struct doca_eth_rxq *rxq = pick_rxq(dport, verdict, queue_id);

		bytes += pkts[i].len;
		if (rxq == NULL) {
			unsteered++;
			continue;
		}
		/* a drop or an overwrite is counted by the ring */
		if (rxq->gpu_rx != NULL)
			sdp_eth_gpu_rx_push(rxq, &pkts[i]);
		else
			(void)sdp_ring_rx_push(
				rxq->ring, pkts[i].data, pkts[i].len, pkts[i].wire_len,
				pkts[i].flags & SDP_ETH_PKT_CQE_FLAGS, pkts[i].ts_ns);
		rxq->eng_touched = 1;
	}
	notify_consumers(dport, got == SDP_ETH_RX_BURST);
	pthread_mutex_unlock(&dport->lock);
	if (flow != NULL)
		sdp_flow_port_put(flow);
	cnt_add(&dport->rx_packets, got);
	cnt_add(&dport->rx_bytes, bytes);
	cnt_add(&dport->rx_unsteered, unsteered);
	prof_burst(dport, got, t1);
	return got;
}

/* Sleep on the engine's eventfd (and the backend's rx fds when with_rx) for timeout_us at most. */
static void engine_wait(struct sdp_eth_dport *dport, int with_rx, long timeout_us)
{
	struct pollfd pfd[1 + 64];
	struct timespec ts;
	nfds_t n = 1;

	pfd[0] = (struct pollfd){.fd = dport->wake_fd, .events = POLLIN};
	for (uint16_t q = 0; with_rx && q < dport->info.nb_rxq && n < 1 + 64; q++) {
		int fd = dport->info.has_rx_fd ? dport->ops->rx_fd(dport->port, q) : -1;

		if (fd < 0) {
			if (timeout_us > ENGINE_POLL_MS * 1000L)
				timeout_us = ENGINE_POLL_MS * 1000L;
			continue;
		}
		pfd[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
	}
	ts.tv_sec = timeout_us / 1000000L;
	ts.tv_nsec = (timeout_us % 1000000L) * 1000L;
	if (ppoll(pfd, n, &ts, NULL) < 0 && errno != EINTR) {
		sdp_warn("engine of port %p: poll failed: %m", (void *)dport);
		usleep(1000); /* never spin on a broken poll */
		return;
	}
	if (pfd[0].revents & POLLIN) {
		uint64_t v;

		if (read(dport->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			sdp_warn("engine of port %p: reading its eventfd failed: %m",
				 (void *)dport);
	}
}

/*
 * GPU send queues have no fd to sleep on (kernels write descriptors into mapped memory): poll
 * them every ENGINE_GPU_POLL_US while they were busy lately, every millisecond once idle, and
 * no later than the first wait-on-time send time. Returns the descriptors handled; *cap_us
 * gets the longest sleep allowed (unchanged when the port has no GPU send queue).
 */
static unsigned int engine_gpu_tx(struct sdp_eth_dport *dport, long *cap_us)
{
	uint64_t next_ns = 0;
	unsigned int done;
	int any;

	pthread_mutex_lock(&dport->lock);
	any = !sdp_list_is_empty(&dport->gtxqs);
	pthread_mutex_unlock(&dport->lock);
	if (!any)
		return 0;
	done = sdp_eth_gpu_tx_poll(dport, &next_ns);
	if (done > 0)
		dport->gpu_idle = 0;
	else if (dport->gpu_idle < ENGINE_GPU_IDLE_ROUNDS)
		dport->gpu_idle++;
	*cap_us = dport->gpu_idle < ENGINE_GPU_IDLE_ROUNDS ? ENGINE_GPU_POLL_US : 1000;
	if (next_ns != 0) {
		struct timespec now;
		uint64_t now_ns;

		clock_gettime(CLOCK_REALTIME, &now);
		now_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
		if (next_ns <= now_ns)
			*cap_us = 0;
		else if ((next_ns - now_ns) / 1000 < (uint64_t)*cap_us)
			*cap_us = (long)((next_ns - now_ns) / 1000);
	}
	return done;
}

/*
 * Publish the GPU receive copies that landed; returns whether some are still in flight. busy:
 * the backend gave full bursts all round, so staged frames may wait for company (the copy's
 * fixed cost is shared by more of them, sdp_eth_gpu_rx_flush); else they go now.
 */
static int engine_gpu_rx_retire(struct sdp_eth_dport *dport, int busy)
{
	struct doca_eth_rxq *rxq;
	int inflight = 0;

	pthread_mutex_lock(&dport->lock);
	sdp_list_for_each(rxq, &dport->rxqs, dport_link) {
		if (rxq->gpu_rx == NULL || !sdp_eth_gpu_rx_inflight(rxq))
			continue;
		sdp_eth_gpu_rx_flush(rxq, busy);
		inflight |= sdp_eth_gpu_rx_inflight(rxq);
	}
	pthread_mutex_unlock(&dport->lock);
	return inflight;
}

/*
 * A backend that leaves frames to the host's stack (ops->steer) gets the summary of the port's
 * flow rules whenever they changed (the flow library wakes the engine: engine_flow_changed).
 */
static void engine_steer(struct sdp_eth_dport *dport)
{
	uint64_t gen = sdp_flow_generation();
	struct sdp_eth_steer s;

	if (dport->steer_set && gen == dport->steer_gen)
		return;
	sdp_flow_steer_summary(dport->dev, &s);
	dport->steer_gen = gen;
	if (dport->steer_set && s.all == dport->steer.all && s.nb_keys == dport->steer.nb_keys &&
	    memcmp(s.keys, dport->steer.keys, sizeof(s.keys[0]) * s.nb_keys) == 0)
		return;
	if (dport->ops->steer(dport->port, &s) != DOCA_SUCCESS)
		return; /* logged by the backend; looked at again at the next change */
	sdp_debug("engine of device %p: steering %s (%u keys)", (void *)dport->dev,
		  s.all ? "every frame" : "by rule", s.nb_keys);
	dport->steer = s;
	dport->steer_set = 1;
}

/* The flow library's change callback: wake the engines whose backend steers. */
static void engine_flow_changed(void)
{
	struct sdp_eth_dport *dport;

	pthread_mutex_lock(&g_ports_lock);
	sdp_list_for_each(dport, &g_ports, link)
		if (dport->ops->steer != NULL)
			sdp_eth_dport_kick(dport);
	pthread_mutex_unlock(&g_ports_lock);
}

static void engine_register_flow_cb(void)
{
	sdp_flow_set_change_cb(engine_flow_changed);
}

static void *engine_main(void *arg)
{
	struct sdp_eth_dport *dport = arg;
	int held = 0;

	while (!atomic_load(&dport->stop)) {
		int budget = -1, round, tx_busy, inflight, last_full = 0;
		long cap_us = ENGINE_IDLE_MS * 1000L;

		if (dport->ops->steer != NULL)
			engine_steer(dport);

		for (round = 0; round < ENGINE_ROUNDS && !atomic_load(&dport->stop); round++) {
			unsigned int got;

			pthread_mutex_lock(&dport->lock);
			budget = engine_budget(dport);
			pthread_mutex_unlock(&dport->lock);
			got = budget > 0 ? engine_rx(dport, (uint32_t)budget) : 0;
			last_full = got == SDP_ETH_RX_BURST;
			if (got == 0)
				break;
		}
		tx_busy = engine_gpu_tx(dport, &cap_us) > 0;
		/* GPU receive copies: send what waits for company, publish what landed */
		/* busy: every round's burst was taken and the last one was full */
		inflight = engine_gpu_rx_retire(dport, round == ENGINE_ROUNDS && last_full);
		if (tx_busy || round == ENGINE_ROUNDS)
			continue; /* busy: go on */
		if (inflight && cap_us > ENGINE_GPU_POLL_US)
			cap_us = ENGINE_GPU_POLL_US; /* copies in flight: look again soon */
		if (budget < 0) {
			held = 0;
			engine_wait(dport, 0, cap_us);
		} else if (budget == 0) {
			if (!held)
				cnt_add(&dport->rx_wait, 1);
			held = 1;
			if (dport->held_by_gpu && cap_us > ENGINE_GPU_POLL_US)
				cap_us = ENGINE_GPU_POLL_US;
			engine_wait(dport, 0,
				    cap_us < ENGINE_HELD_MS * 1000L ? cap_us :
								      ENGINE_HELD_MS * 1000L);
		} else {
			held = 0;
			engine_wait(dport, 1, cap_us);
		}
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
	if (ops->steer != NULL) {
		static pthread_once_t once = PTHREAD_ONCE_INIT;

		pthread_once(&once, engine_register_flow_cb);
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
	dport->prof_on = sdp_eth_profile_enabled();
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
	sdp_list_head_init(&dport->gtxqs);
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

doca_error_t sdp_eth_dev_get_port_counters(struct doca_dev *dev,
					   struct sdp_eth_port_counters *counters)
{
	struct sdp_eth_dport *dport;
	doca_error_t status = DOCA_ERROR_BAD_STATE;

	if (dev == NULL || counters == NULL) {
		sdp_error("NULL argument");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&g_ports_lock);
	sdp_list_for_each(dport, &g_ports, link) {
		struct sdp_eth_port_stats stats = {0};

		if (dport->dev != dev)
			continue;
		if (dport->ops->stats != NULL)
			dport->ops->stats(dport->port, &stats);
		*counters = (struct sdp_eth_port_counters){
			.rx_packets = __atomic_load_n(&dport->rx_packets, __ATOMIC_RELAXED),
			.rx_bytes = __atomic_load_n(&dport->rx_bytes, __ATOMIC_RELAXED),
			.rx_unsteered = __atomic_load_n(&dport->rx_unsteered, __ATOMIC_RELAXED),
			.rx_port_drops = stats.rx_drops,
			.rx_wait = __atomic_load_n(&dport->rx_wait, __ATOMIC_RELAXED),
			.tx_packets = __atomic_load_n(&dport->tx_packets, __ATOMIC_RELAXED),
			.tx_bytes = __atomic_load_n(&dport->tx_bytes, __ATOMIC_RELAXED),
			.rx_ring_full = stats.rx_ring_full,
			.rx_fill_empty = stats.rx_fill_empty,
			.rx_invalid_descs = stats.rx_invalid_descs,
			.tx_invalid_descs = stats.tx_invalid_descs,
			.rx_steered_kernel = stats.rx_steered_kernel,
		};
		status = DOCA_SUCCESS;
		break;
	}
	pthread_mutex_unlock(&g_ports_lock);
	if (status != DOCA_SUCCESS)
		sdp_error("no queue of device %p is running", (void *)dev);
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
	if (dport->prof_on && dport->prof.frames != 0)
		sdp_info("engine of device %p: %llu frames in %llu bursts; backend rx_burst %.1f "
			 "ns/frame, the rest of the burst %.1f ns/frame",
			 (void *)dport->dev, (unsigned long long)dport->prof.frames,
			 (unsigned long long)dport->prof.bursts,
			 (double)dport->prof.burst_ns / (double)dport->prof.frames,
			 (double)dport->prof.work_ns / (double)dport->prof.frames);
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
	return sdp_devinfo_get_eth_ops(devinfo) != NULL;
}
