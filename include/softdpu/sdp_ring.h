/*
 * softdpu internal: the ring format shared by the Ethernet queue engine (a CPU thread) and the
 * consumers and producers of its queues (the CPU data path and GPUNetIO's persistent kernels).
 * Header-only; compiles as C (gnu11), as C++17 and with nvcc, where every function is
 * __host__ __device__ (sdp_atomic.h). docs/architecture.md, "The ring format", has the picture.
 *
 * A ring is one memory block that every side maps, possibly at different addresses, so it holds
 * offsets, never pointers. Indices ("positions") are free-running 32-bit counters; the entry of
 * position p sits at p & mask. Every shared word has exactly one writer (read-modify-write does
 * not work across PCIe between a CPU and a GPU); the owner of each word is noted next to it.
 *
 * RX ring (engine produces, queue consumer consumes):
 *   header | nb_slots completion entries (CQE) | nb_slots packet slots of slot_size bytes
 *   The producer copies a frame into the slot of position p, fills CQE p (length, wire length,
 *   flags, timestamp, slot index), publishes CQE p with a release store of its control word,
 *   then the producer index with a release store. The control word carries the position and a
 *   phase bit that flips every lap, so a consumer recognises a new entry by the CQE alone.
 *   The consumer polls CQEs with acquire loads, claims what it takes (its claim index), reads
 *   the slots, then releases them (its release index), which hands them back to the producer.
 *
 *   Overflow (the producer finds no released slot for the next frame):
 *   - SDP_RING_MODE_BACKPRESSURE: the frame is dropped and counted (drops); the producer never
 *     touches an unreleased slot, so a consumer may hold slots as long as it likes.
 *   - SDP_RING_MODE_CYCLIC (DOCA's CYCLIC receive queue): the producer never waits and
 *     overwrites the oldest frame the consumer has not claimed yet, counting one overwrite per
 *     frame lost that way. Frames a consumer has claimed but not released (those of a receive
 *     call in progress) are never overwritten: if the oldest slot is one of them the new frame
 *     is dropped instead. Released slots are reused without a check, so a consumer that keeps
 *     using a frame after releasing it (DOCA: slots return at the end of each receive call) sees
 *     it overwritten one lap later, as on DOCA.
 *   Either way a ring-full event is counted each time the producer goes from "had a free slot"
 *   to "had none". Every frame offered to the producer is thus exactly one of: received,
 *   dropped, overwritten.
 *
 *   Claim versus overwrite is a store-then-load handshake (Dekker) on two single-writer words:
 *   the consumer stores its claim index and then loads the CQE control word; the producer
 *   stores a BUSY control word and then loads the claim index; both with sequentially
 *   consistent accesses, so at least one of them sees the other. A producer that sees the claim
 *   restores the control word and drops; a consumer that sees BUSY waits (bounded) for that
 *   outcome. The producer overwrites oldest first, so after a claim the lost entries are a
 *   prefix of it and everything from the first intact entry on belongs to the consumer.
 *
 * TX ring (a queue producer posts, the engine consumes):
 *   header | nb_desc descriptors | nb_desc completion entries
 *   The producer writes descriptors (address, length, flags, send time, user word) and
 *   publishes them with a release store of the producer index. The engine reads them (acquire),
 *   sends, and completes each in order: a completion entry (control word with phase, as above)
 *   for every descriptor flagged NOTIFY and for every failed one, then it advances its consumer
 *   index, freeing the descriptor. The producer polls completions by phase and releases them
 *   with its completion consumer index. The engine takes a descriptor only when a completion
 *   entry is free for it, so completions never overflow; a producer finding no free descriptor
 *   gets 0 and counts a ring-full event.
 *
 * Nothing here blocks: every function returns at once, except the bounded wait of
 * sdp_ring_rx_poll() on a BUSY entry (spin_budget iterations). Functions return a count or a
 * doca_error_t and do not log (they run on a GPU too): the caller that owns the context logs.
 *
 * Limits: 1 <= nb_slots <= SDP_RING_MAX_ENTRIES, a power of two; RX slot_size a multiple of
 * SDP_RING_ALIGN up to SDP_RING_MAX_SLOT_SIZE; a CYCLIC consumer may fall behind by fewer than
 * 2^31 frames (then positions alias). Single producer and single consumer per ring.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_RING_H_
#define SDP_RING_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "doca_error.h"

#include "softdpu/sdp_atomic.h"

#ifdef __cplusplus
#define SDP_RING_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define SDP_RING_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define SDP_RING_MAGIC_RX 0x73647252u /* "sdrR" */
#define SDP_RING_MAGIC_TX 0x73647254u /* "sdrT" */
#define SDP_RING_VERSION 1u
#define SDP_RING_ALIGN 64u /* block, header lines, slot area and slot size alignment */
#define SDP_RING_MAX_ENTRIES (1u << 24)
#define SDP_RING_MAX_SLOT_SIZE (1u << 16)

/* Overflow behaviour of an RX ring (see the top of this file). */
enum sdp_ring_mode {
	SDP_RING_MODE_CYCLIC = 0,
	SDP_RING_MODE_BACKPRESSURE = 1,
};

/*
 * Control word of a CQE (RX) or a TX completion: the position in the high 32 bits, these bits
 * in the low ones. 0 means "never written".
 */
#define SDP_RING_CTL_VALID 0x1u /* the entry describes the position in the high half */
#define SDP_RING_CTL_PHASE 0x2u /* (position >> log2(entries)) & 1: flips every lap */
#define SDP_RING_CTL_BUSY 0x4u	/* RX producer is deciding whether to overwrite this slot */

/*
 * CQE flags: the values of enum sdp_pkt_flags (src/common/sdp_provider_eth.h), copied from the
 * port; src/eth/sdp_eth_int.h asserts that they agree.
 */
#define SDP_RING_CQE_F_L3_CSUM_BAD 0x1u
#define SDP_RING_CQE_F_L4_CSUM_BAD 0x2u
#define SDP_RING_CQE_F_CSUM_PARTIAL 0x4u
#define SDP_RING_CQE_F_TRUNCATED 0x8u

/* TX descriptor flags. */
#define SDP_RING_TXD_F_NOTIFY 0x1u  /* write a completion when sent (failures always get one) */
#define SDP_RING_TXD_F_L3_CSUM 0x2u /* compute the IPv4 header checksum before sending */
#define SDP_RING_TXD_F_L4_CSUM 0x4u /* compute the UDP/TCP checksum before sending */

/*
 * Counters of one ring. RX: all written by the producer (the engine). TX: packets, bytes and
 * drops (failed sends) by the engine, ring_full by the producer; overwrites and csum_errors stay
 * 0. Read them with sdp_ring_rx_counters() / sdp_ring_tx_counters() from any thread.
 */
struct sdp_ring_counters {
	uint64_t packets;     /* frames published (RX) / sent (TX) */
	uint64_t bytes;	      /* bytes of those frames (stored length) */
	uint64_t drops;	      /* RX: frames dropped for want of a slot; TX: failed sends */
	uint64_t overwrites;  /* RX CYCLIC: unclaimed frames overwritten */
	uint64_t ring_full;   /* transitions from "room" to "full" seen by the producer */
	uint64_t csum_errors; /* RX: frames published with a bad L3 or L4 checksum flag */
};

/* RX completion entry, 32 bytes. Fields other than ctl are valid while ctl says so. */
struct sdp_ring_cqe {
	uint64_t ctl;	   /* position << 32 | SDP_RING_CTL_*; written by the producer */
	uint32_t len;	   /* bytes stored in the slot (at most slot_size) */
	uint32_t wire_len; /* length of the frame on the wire */
	uint32_t flags;	   /* SDP_RING_CQE_F_* */
	uint32_t slot;	   /* slot index: position & slot_mask */
	uint64_t ts_ns;	   /* receive timestamp (ns), 0 when the backend has none */
};

/* RX ring header: four 64-byte lines, the shared indices apart from each other. */
struct sdp_ring_hdr {
	/* Line 0: written once by sdp_ring_rx_init(). */
	uint32_t magic;
	uint32_t version;
	uint32_t mode;	     /* enum sdp_ring_mode */
	uint32_t nb_slots;   /* power of two */
	uint32_t slot_mask;  /* nb_slots - 1 */
	uint32_t log2_slots; /* nb_slots == 1 << log2_slots */
	uint32_t slot_size;  /* bytes per slot; slot p at slot_off + (p & slot_mask) * slot_size */
	uint32_t reserved0;
	uint64_t cqe_off;    /* byte offset of the CQE array from the header */
	uint64_t slot_off;   /* byte offset of the slot area from the header */
	uint64_t total_size; /* bytes of the whole block */
	uint8_t pad0[8];
	/* Line 1: producer. */
	uint32_t prod; /* positions before it are published */
	uint32_t full; /* 1 while the producer has found no free slot (ring-full edge) */
	uint32_t resv; /* positions before it are reserved (producer-private; >= prod) */
	uint8_t pad1[52];
	/* Line 2: consumer. */
	uint32_t claim; /* positions before it are taken (received, being received, or lost) */
	uint32_t cons;	/* positions before it are released to the producer; cons <= claim */
	uint8_t pad2[56];
	/* Line 3: producer. */
	struct sdp_ring_counters cnt;
	uint8_t pad3[16];
};

SDP_RING_STATIC_ASSERT(sizeof(struct sdp_ring_cqe) == 32, "CQE is 32 bytes");
SDP_RING_STATIC_ASSERT(sizeof(struct sdp_ring_hdr) == 4 * SDP_RING_ALIGN, "RX header lines");
SDP_RING_STATIC_ASSERT(offsetof(struct sdp_ring_hdr, prod) == 1 * SDP_RING_ALIGN, "RX line 1");
SDP_RING_STATIC_ASSERT(offsetof(struct sdp_ring_hdr, claim) == 2 * SDP_RING_ALIGN, "RX line 2");
SDP_RING_STATIC_ASSERT(offsetof(struct sdp_ring_hdr, cnt) == 3 * SDP_RING_ALIGN, "RX line 3");

/* TX descriptor, 32 bytes, written by the producer. */
struct sdp_ring_txd {
	uint64_t addr;	     /* frame address as the engine sees it */
	uint32_t len;	     /* frame length in bytes */
	uint32_t flags;	     /* SDP_RING_TXD_F_* */
	uint64_t send_ts_ns; /* earliest send time (ns, the port's clock), 0 = now */
	uint64_t user;	     /* opaque to the ring; returned in the completion */
};

/* TX completion entry, 32 bytes, written by the engine. */
struct sdp_ring_txc {
	uint64_t ctl;	   /* completion position << 32 | SDP_RING_CTL_VALID | phase */
	uint32_t desc_pos; /* position of the descriptor this completes */
	uint32_t status;   /* doca_error_t of the send; DOCA_SUCCESS when sent */
	uint64_t user;	   /* the descriptor's user word */
	uint64_t ts_ns;	   /* when the engine handed the frame to the port */
};

/* TX ring header. */
struct sdp_ring_tx_hdr {
	/* Line 0: written once by sdp_ring_tx_init(). */
	uint32_t magic;
	uint32_t version;
	uint32_t nb_desc;   /* power of two, also the number of completion entries */
	uint32_t desc_mask; /* nb_desc - 1 */
	uint32_t log2_desc;
	uint32_t reserved0;
	uint64_t desc_off;   /* byte offset of the descriptor array */
	uint64_t cmpl_off;   /* byte offset of the completion array */
	uint64_t total_size; /* bytes of the whole block */
	uint8_t pad0[16];
	/* Line 1: producer. */
	uint32_t prod;	  /* descriptors before it are published */
	uint32_t cq_cons; /* completions before it are consumed */
	uint32_t full;	  /* 1 while reservations fail (ring-full edge) */
	uint32_t reserved1;
	uint64_t ring_full; /* ring-full events */
	uint8_t pad1[40];
	/* Line 2: engine. */
	uint32_t cons;	  /* descriptors before it are done and free again */
	uint32_t cq_prod; /* completion entries before it are written */
	uint8_t pad2[56];
	/* Line 3: engine. */
	struct sdp_ring_counters cnt; /* ring_full unused here (see line 1) */
	uint8_t pad3[16];
};

SDP_RING_STATIC_ASSERT(sizeof(struct sdp_ring_txd) == 32, "TX descriptor is 32 bytes");
SDP_RING_STATIC_ASSERT(sizeof(struct sdp_ring_txc) == 32, "TX completion is 32 bytes");
SDP_RING_STATIC_ASSERT(sizeof(struct sdp_ring_tx_hdr) == 4 * SDP_RING_ALIGN, "TX header lines");
SDP_RING_STATIC_ASSERT(offsetof(struct sdp_ring_tx_hdr, prod) == 1 * SDP_RING_ALIGN, "TX line 1");
SDP_RING_STATIC_ASSERT(offsetof(struct sdp_ring_tx_hdr, cons) == 2 * SDP_RING_ALIGN, "TX line 2");
SDP_RING_STATIC_ASSERT(offsetof(struct sdp_ring_tx_hdr, cnt) == 3 * SDP_RING_ALIGN, "TX line 3");

/* ---- helpers ---------------------------------------------------------------------------- */

SDP_RING_FN uint64_t sdp_ring_align_up(uint64_t v)
{
	return (v + SDP_RING_ALIGN - 1) & ~(uint64_t)(SDP_RING_ALIGN - 1);
}

/* log2 of a power of two in [1, SDP_RING_MAX_ENTRIES]; -1 for anything else. */
SDP_RING_FN int sdp_ring_log2_entries(uint32_t n)
{
	int l = 0;

	if (n == 0 || n > SDP_RING_MAX_ENTRIES || (n & (n - 1)) != 0)
		return -1;
	while ((1u << l) != n)
		l++;
	return l;
}

/* The control word that says "position pos is published" in a ring of 2^log2 entries. */
SDP_RING_FN uint64_t sdp_ring_ctl_make(uint32_t pos, uint32_t log2)
{
	return ((uint64_t)pos << 32) | SDP_RING_CTL_VALID |
	       (((pos >> log2) & 1u) ? SDP_RING_CTL_PHASE : 0u);
}

SDP_RING_FN uint32_t sdp_ring_ctl_pos(uint64_t ctl)
{
	return (uint32_t)(ctl >> 32);
}

/* Add to a counter this side alone writes (a plain load and store, atomic for readers). */
SDP_RING_FN void sdp_ring_cnt_add(uint64_t *c, uint64_t v)
{
	SDP_ATOMIC_STORE_RLX(c, SDP_ATOMIC_LOAD_RLX(c) + v);
}

SDP_RING_FN void sdp_ring_cnt_read(const struct sdp_ring_counters *c, struct sdp_ring_counters *out)
{
	out->packets = SDP_ATOMIC_LOAD_RLX(&c->packets);
	out->bytes = SDP_ATOMIC_LOAD_RLX(&c->bytes);
	out->drops = SDP_ATOMIC_LOAD_RLX(&c->drops);
	out->overwrites = SDP_ATOMIC_LOAD_RLX(&c->overwrites);
	out->ring_full = SDP_ATOMIC_LOAD_RLX(&c->ring_full);
	out->csum_errors = SDP_ATOMIC_LOAD_RLX(&c->csum_errors);
}

/* ---- RX: layout --------------------------------------------------------------------------- */

/* Bytes an RX ring of these dimensions needs; INVALID_VALUE for dimensions out of range. */
SDP_RING_FN doca_error_t sdp_ring_rx_mem_size(uint32_t nb_slots, uint32_t slot_size,
					      uint64_t *size_p)
{
	uint64_t cqe_off = sizeof(struct sdp_ring_hdr);
	uint64_t slot_off;

	if (size_p == NULL || sdp_ring_log2_entries(nb_slots) < 0 || slot_size == 0 ||
	    slot_size > SDP_RING_MAX_SLOT_SIZE || slot_size % SDP_RING_ALIGN != 0)
		return DOCA_ERROR_INVALID_VALUE;
	slot_off = sdp_ring_align_up(cqe_off + (uint64_t)nb_slots * sizeof(struct sdp_ring_cqe));
	*size_p = slot_off + (uint64_t)nb_slots * slot_size;
	return DOCA_SUCCESS;
}

/*
 * Lay out an RX ring in mem (SDP_RING_ALIGN-aligned, mem_size bytes at least
 * sdp_ring_rx_mem_size()). start is the first position (0 normally; tests start near the 32-bit
 * wrap). Not thread-safe: hand the ring to the other side after this returns (thread creation,
 * kernel launch). The slot area is left as it is.
 */
SDP_RING_FN doca_error_t sdp_ring_rx_init(void *mem, uint64_t mem_size, uint32_t nb_slots,
					  uint32_t slot_size, uint32_t mode, uint32_t start,
					  struct sdp_ring_hdr **ring_p)
{
	struct sdp_ring_hdr *r = (struct sdp_ring_hdr *)mem;
	struct sdp_ring_cqe *cqe;
	uint64_t need;
	uint32_t i;

	if (mem == NULL || ring_p == NULL || ((uintptr_t)mem & (SDP_RING_ALIGN - 1)) != 0 ||
	    (mode != SDP_RING_MODE_CYCLIC && mode != SDP_RING_MODE_BACKPRESSURE) ||
	    sdp_ring_rx_mem_size(nb_slots, slot_size, &need) != DOCA_SUCCESS || mem_size < need)
		return DOCA_ERROR_INVALID_VALUE;

	memset(r, 0, sizeof(*r));
	r->magic = SDP_RING_MAGIC_RX;
	r->version = SDP_RING_VERSION;
	r->mode = mode;
	r->nb_slots = nb_slots;
	r->slot_mask = nb_slots - 1;
	r->log2_slots = (uint32_t)sdp_ring_log2_entries(nb_slots);
	r->slot_size = slot_size;
	r->cqe_off = sizeof(struct sdp_ring_hdr);
	r->slot_off =
		sdp_ring_align_up(r->cqe_off + (uint64_t)nb_slots * sizeof(struct sdp_ring_cqe));
	r->total_size = need;
	r->prod = start;
	r->resv = start;
	r->claim = start;
	r->cons = start;
	cqe = (struct sdp_ring_cqe *)((uint8_t *)mem + r->cqe_off);
	for (i = 0; i < nb_slots; i++) {
		memset(&cqe[i], 0, sizeof(cqe[i]));
		cqe[i].slot = i;
	}
	*ring_p = r;
	return DOCA_SUCCESS;
}

/* CQE of a position (valid while the consumer holds the position: claimed, not released). */
SDP_RING_FN struct sdp_ring_cqe *sdp_ring_rx_cqe(const struct sdp_ring_hdr *r, uint32_t pos)
{
	return (struct sdp_ring_cqe *)((uint8_t *)r + r->cqe_off) + (pos & r->slot_mask);
}

/* Slot index of a position (DOCA's packet index) and its address. */
SDP_RING_FN uint32_t sdp_ring_rx_slot_index(const struct sdp_ring_hdr *r, uint32_t pos)
{
	return pos & r->slot_mask;
}

SDP_RING_FN void *sdp_ring_rx_slot(const struct sdp_ring_hdr *r, uint32_t pos)
{
	return (uint8_t *)r + r->slot_off + (uint64_t)(pos & r->slot_mask) * r->slot_size;
}

/* The phase bit position pos carries (0 on even laps, 1 on odd ones). */
SDP_RING_FN uint32_t sdp_ring_rx_phase(const struct sdp_ring_hdr *r, uint32_t pos)
{
	return (pos >> r->log2_slots) & 1u;
}

/* ---- RX: producer (the engine) ---------------------------------------------------------- */

SDP_RING_FN void sdp_ring_rx_full_edge_(struct sdp_ring_hdr *r)
{
	if (!SDP_ATOMIC_LOAD_RLX(&r->full)) {
		SDP_ATOMIC_STORE_RLX(&r->full, 1u);
		sdp_ring_cnt_add(&r->cnt.ring_full, 1);
	}
}

/*
 * Get the slot for the next frame. Returns its address and sets *pos_p, or returns NULL when
 * the frame must be dropped (already counted: drops, and a ring-full event on the transition).
 * Call only with a frame in hand and publish it with sdp_ring_rx_publish(): a reservation
 * cannot be taken back (in CYCLIC mode it may already have counted an overwrite). Several
 * reservations may be outstanding (a batch whose payload is still being copied, e.g. by a DMA
 * engine), fewer than nb_slots; publish them in order. Until then a consumer sees an entry it
 * may not take yet (BUSY when it overwrites, not yet valid otherwise).
 */
SDP_RING_FN void *sdp_ring_rx_reserve(struct sdp_ring_hdr *r, uint32_t *pos_p)
{
	uint32_t pos = SDP_ATOMIC_LOAD_RLX(&r->resv);
	uint32_t oldest = pos - r->nb_slots; /* the position whose slot pos reuses */
	uint32_t cons = SDP_ATOMIC_LOAD_ACQ(&r->cons);
	struct sdp_ring_cqe *cqe;
	uint64_t prev;
	uint32_t claim;

	/* Released slot: the consumer's reads of it happened before its release store. */
	if ((uint32_t)(pos - cons) < r->nb_slots)
		goto take;
	if (r->mode == SDP_RING_MODE_BACKPRESSURE)
		goto drop;

	/* CYCLIC: oldest is unreleased. Claimed by a receive call in progress? Then it stays. */
	claim = SDP_ATOMIC_LOAD_ACQ(&r->claim);
	if ((uint32_t)(oldest - cons) < (uint32_t)(claim - cons))
		goto claimed;

	/* Not claimed when we looked: announce the overwrite, then look again (handshake). */
	cqe = sdp_ring_rx_cqe(r, pos);
	prev = SDP_ATOMIC_LOAD_RLX(&cqe->ctl);
	SDP_ATOMIC_STORE_SC(&cqe->ctl, ((uint64_t)pos << 32) | SDP_RING_CTL_BUSY);
	claim = SDP_ATOMIC_LOAD_SC(&r->claim);
	if ((uint32_t)(oldest - cons) < (uint32_t)(claim - cons)) {
		/* The consumer claimed it meanwhile: give the entry back untouched. */
		SDP_ATOMIC_STORE_REL(&cqe->ctl, prev);
		goto claimed;
	}
	sdp_ring_cnt_add(&r->cnt.overwrites, 1);
	sdp_ring_rx_full_edge_(r);
	SDP_ATOMIC_STORE_RLX(&r->resv, pos + 1);
	*pos_p = pos;
	return sdp_ring_rx_slot(r, pos);

claimed:
	/* The receive call holding it may have ended since cons was read. */
	cons = SDP_ATOMIC_LOAD_ACQ(&r->cons);
	if ((uint32_t)(pos - cons) < r->nb_slots)
		goto take;
drop:
	sdp_ring_cnt_add(&r->cnt.drops, 1);
	sdp_ring_rx_full_edge_(r);
	return NULL;

take:
	if (SDP_ATOMIC_LOAD_RLX(&r->full))
		SDP_ATOMIC_STORE_RLX(&r->full, 0u);
	SDP_ATOMIC_STORE_RLX(&r->resv, pos + 1);
	*pos_p = pos;
	return sdp_ring_rx_slot(r, pos);
}

/*
 * Producer: slots it can fill now without dropping or overwriting (0 to nb_slots). A producer
 * that holds its source back while this is 0 (back-pressure) marks the ring full with
 * sdp_ring_rx_mark_full() and looks again before sleeping; the consumer, after a release,
 * checks sdp_ring_rx_is_full() to wake it (a store-then-load handshake on both sides).
 */
SDP_RING_FN uint32_t sdp_ring_rx_room(const struct sdp_ring_hdr *r)
{
	uint32_t used = SDP_ATOMIC_LOAD_RLX(&r->resv) - SDP_ATOMIC_LOAD_SC(&r->cons);

	return used >= r->nb_slots ? 0 : r->nb_slots - used;
}

/* Producer: the ring has no room (counts a ring-full event on the transition). */
SDP_RING_FN void sdp_ring_rx_mark_full(struct sdp_ring_hdr *r)
{
	if (!SDP_ATOMIC_LOAD_RLX(&r->full)) {
		SDP_ATOMIC_STORE_SC(&r->full, 1u);
		sdp_ring_cnt_add(&r->cnt.ring_full, 1);
	}
}

/* Consumer, after sdp_ring_rx_release(): whether the producer is waiting for room. */
SDP_RING_FN int sdp_ring_rx_is_full(const struct sdp_ring_hdr *r)
{
	return SDP_ATOMIC_LOAD_SC(&r->full) != 0;
}

/*
 * Publish the frame of a reserved position: CQE fields, then the control word (release: the
 * payload and fields before it), then the producer index (release: the CQE before it).
 */
SDP_RING_FN void sdp_ring_rx_publish(struct sdp_ring_hdr *r, uint32_t pos, uint32_t len,
				     uint32_t wire_len, uint32_t flags, uint64_t ts_ns)
{
	struct sdp_ring_cqe *cqe = sdp_ring_rx_cqe(r, pos);

	cqe->len = len;
	cqe->wire_len = wire_len;
	cqe->flags = flags;
	cqe->slot = pos & r->slot_mask;
	cqe->ts_ns = ts_ns;
	SDP_ATOMIC_STORE_REL(&cqe->ctl, sdp_ring_ctl_make(pos, r->log2_slots));
	sdp_ring_cnt_add(&r->cnt.packets, 1);
	sdp_ring_cnt_add(&r->cnt.bytes, len);
	if (flags & (SDP_RING_CQE_F_L3_CSUM_BAD | SDP_RING_CQE_F_L4_CSUM_BAD))
		sdp_ring_cnt_add(&r->cnt.csum_errors, 1);
	SDP_ATOMIC_STORE_REL(&r->prod, pos + 1);
}

/*
 * Copy one frame in (reserve + copy + publish). len is truncated to the slot size (the CQE then
 * carries SDP_RING_CQE_F_TRUNCATED and wire_len keeps the real length). Returns 1 when stored,
 * 0 when dropped (counted).
 */
SDP_RING_FN int sdp_ring_rx_push(struct sdp_ring_hdr *r, const void *data, uint32_t len,
				 uint32_t wire_len, uint32_t flags, uint64_t ts_ns)
{
	uint32_t pos;
	void *slot = sdp_ring_rx_reserve(r, &pos);

	if (slot == NULL)
		return 0;
	if (len > r->slot_size) {
		len = r->slot_size;
		flags |= SDP_RING_CQE_F_TRUNCATED;
	}
	if (slot != data) /* else the producer wrote it in place (its next position's slot) */
		memcpy(slot, data, len);
	sdp_ring_rx_publish(r, pos, len, wire_len, flags, ts_ns);
	return 1;
}

/* ---- RX: consumer ------------------------------------------------------------------------ */

/*
 * Take up to max published frames (max 0 or above nb_slots: up to nb_slots). Returns how many
 * and sets *first_pos_p (untouched when 0): the frames are positions first, first + 1, ...,
 * consecutive, their CQEs and slots valid until released. Frames overwritten before the claim
 * could take them are skipped (the producer counted them). Never waits, except up to
 * spin_budget relax iterations for an entry the producer is deciding about; when that runs out
 * it returns what it has (possibly 0) and the entry is looked at again next call.
 */
SDP_RING_FN uint32_t sdp_ring_rx_poll(struct sdp_ring_hdr *r, uint32_t max, uint32_t spin_budget,
				      uint32_t *first_pos_p)
{
	uint32_t old_claim = SDP_ATOMIC_LOAD_RLX(&r->claim);
	uint32_t c = old_claim;
	uint32_t n, k;
	uint64_t ctl;

	if (max == 0 || max > r->nb_slots)
		max = r->nb_slots;

	if (r->mode == SDP_RING_MODE_BACKPRESSURE) {
		/*
		 * Nothing is ever overwritten: every position before the producer index is published
		 * and intact (its CQE was stored before the index, with release), and the producer
		 * never reads the claim. One acquire load and a plain store; over PCIe that is one
		 * read instead of three and no system-scope fence.
		 */
		int32_t avail = (int32_t)(SDP_ATOMIC_LOAD_ACQ(&r->prod) - c);

		if (avail <= 0)
			return 0;
		n = (uint32_t)avail < max ? (uint32_t)avail : max;
		SDP_ATOMIC_STORE_RLX(&r->claim, c + n);
		*first_pos_p = c;
		return n;
	}

	ctl = SDP_ATOMIC_LOAD_ACQ(&sdp_ring_rx_cqe(r, c)->ctl);
	if (ctl != sdp_ring_ctl_make(c, r->log2_slots)) {
		/*
		 * The producer index trails the CQEs (it is stored after them), so it may be behind
		 * the claim: signed distance.
		 */
		int32_t ahead = (int32_t)(SDP_ATOMIC_LOAD_ACQ(&r->prod) - c);

		if (ahead <= 0)
			return 0;
		/* Lapped: everything before prod - nb_slots was overwritten (and counted). */
		if ((uint32_t)ahead > r->nb_slots)
			c += (uint32_t)ahead - r->nb_slots;
	}

	/*
	 * Candidates: the positions the producer index says are published (it is stored after
	 * their CQEs), at least the first one seen above. One read, not one per entry: over PCIe a
	 * consumer that read every CQE before claiming would lose a CYCLIC race against a fast
	 * producer every time. Entries overwritten meanwhile are sorted out after the claim.
	 */
	{
		int32_t avail = (int32_t)(SDP_ATOMIC_LOAD_ACQ(&r->prod) - c);

		if (avail <= 0) {
			/* only the entry seen above (prod trails it): take that one */
			ctl = SDP_ATOMIC_LOAD_ACQ(&sdp_ring_rx_cqe(r, c)->ctl);
			avail = ctl == sdp_ring_ctl_make(c, r->log2_slots) ? 1 : 0;
		}
		n = (uint32_t)avail < max ? (uint32_t)avail : max;
	}
	if (n == 0) {
		if (c != old_claim)
			SDP_ATOMIC_STORE_SC(&r->claim, c);
		return 0;
	}

	/* Claim them, then see which ones the producer took first (handshake, see the top). */
	SDP_ATOMIC_STORE_SC(&r->claim, c + n);
	for (k = 0; k < n; k++) {
		uint64_t want = sdp_ring_ctl_make(c + k, r->log2_slots);
		struct sdp_ring_cqe *cqe = sdp_ring_rx_cqe(r, c + k);
		uint32_t spins = 0;

		ctl = SDP_ATOMIC_LOAD_SC(&cqe->ctl);
		while ((ctl & SDP_RING_CTL_BUSY) && spins++ < spin_budget) {
			SDP_CPU_RELAX();
			ctl = SDP_ATOMIC_LOAD_ACQ(&cqe->ctl);
		}
		if (ctl == want)
			break; /* intact, and so is every later one: the producer stops here */
		if (ctl & SDP_RING_CTL_BUSY) {
			/* Undecided: leave it and the rest unclaimed for the next call. */
			SDP_ATOMIC_STORE_SC(&r->claim, c + k);
			return 0;
		}
		/* Overwritten: lost, counted by the producer. */
	}
	if (k == n)
		return 0;
	*first_pos_p = c + k;
	return n - k;
}

/*
 * Release every position before end_pos to the producer (end_pos = first + n of a poll, or
 * sdp_ring_rx_claimed()). Release after the last read of those slots: the store is a release.
 * INVALID_VALUE when end_pos is before the current release index or beyond the claim.
 */
SDP_RING_FN doca_error_t sdp_ring_rx_release(struct sdp_ring_hdr *r, uint32_t end_pos)
{
	uint32_t cons = SDP_ATOMIC_LOAD_RLX(&r->cons);
	uint32_t claim = SDP_ATOMIC_LOAD_RLX(&r->claim);

	if ((uint32_t)(end_pos - cons) > (uint32_t)(claim - cons))
		return DOCA_ERROR_INVALID_VALUE;
	/* sequentially consistent: the back-pressure handshake (sdp_ring_rx_room) */
	SDP_ATOMIC_STORE_SC(&r->cons, end_pos);
	return DOCA_SUCCESS;
}

/* The consumer's claim index: releasing up to it returns everything taken so far. */
SDP_RING_FN uint32_t sdp_ring_rx_claimed(const struct sdp_ring_hdr *r)
{
	return SDP_ATOMIC_LOAD_RLX(&r->claim);
}

/* Published frames not claimed yet (at most nb_slots; overwritten ones not counted). */
SDP_RING_FN uint32_t sdp_ring_rx_pending(const struct sdp_ring_hdr *r)
{
	uint32_t d = SDP_ATOMIC_LOAD_ACQ(&r->prod) - SDP_ATOMIC_LOAD_ACQ(&r->claim);

	if ((int32_t)d < 0)
		return 0;
	return d > r->nb_slots ? r->nb_slots : d;
}

SDP_RING_FN void sdp_ring_rx_counters(const struct sdp_ring_hdr *r, struct sdp_ring_counters *out)
{
	sdp_ring_cnt_read(&r->cnt, out);
}

/* ---- TX: layout --------------------------------------------------------------------------- */

SDP_RING_FN doca_error_t sdp_ring_tx_mem_size(uint32_t nb_desc, uint64_t *size_p)
{
	uint64_t desc_off = sizeof(struct sdp_ring_tx_hdr);
	uint64_t cmpl_off;

	if (size_p == NULL || sdp_ring_log2_entries(nb_desc) < 0)
		return DOCA_ERROR_INVALID_VALUE;
	cmpl_off = sdp_ring_align_up(desc_off + (uint64_t)nb_desc * sizeof(struct sdp_ring_txd));
	*size_p = sdp_ring_align_up(cmpl_off + (uint64_t)nb_desc * sizeof(struct sdp_ring_txc));
	return DOCA_SUCCESS;
}

/* Lay out a TX ring (same rules as sdp_ring_rx_init()). */
SDP_RING_FN doca_error_t sdp_ring_tx_init(void *mem, uint64_t mem_size, uint32_t nb_desc,
					  uint32_t start, struct sdp_ring_tx_hdr **ring_p)
{
	struct sdp_ring_tx_hdr *r = (struct sdp_ring_tx_hdr *)mem;
	uint64_t need;

	if (mem == NULL || ring_p == NULL || ((uintptr_t)mem & (SDP_RING_ALIGN - 1)) != 0 ||
	    sdp_ring_tx_mem_size(nb_desc, &need) != DOCA_SUCCESS || mem_size < need)
		return DOCA_ERROR_INVALID_VALUE;

	memset(mem, 0, need);
	r->magic = SDP_RING_MAGIC_TX;
	r->version = SDP_RING_VERSION;
	r->nb_desc = nb_desc;
	r->desc_mask = nb_desc - 1;
	r->log2_desc = (uint32_t)sdp_ring_log2_entries(nb_desc);
	r->desc_off = sizeof(struct sdp_ring_tx_hdr);
	r->cmpl_off =
		sdp_ring_align_up(r->desc_off + (uint64_t)nb_desc * sizeof(struct sdp_ring_txd));
	r->total_size = need;
	r->prod = start;
	r->cons = start;
	r->cq_prod = start;
	r->cq_cons = start;
	*ring_p = r;
	return DOCA_SUCCESS;
}

SDP_RING_FN struct sdp_ring_txd *sdp_ring_tx_desc(const struct sdp_ring_tx_hdr *r, uint32_t pos)
{
	return (struct sdp_ring_txd *)((uint8_t *)r + r->desc_off) + (pos & r->desc_mask);
}

SDP_RING_FN struct sdp_ring_txc *sdp_ring_tx_cmpl(const struct sdp_ring_tx_hdr *r, uint32_t pos)
{
	return (struct sdp_ring_txc *)((uint8_t *)r + r->cmpl_off) + (pos & r->desc_mask);
}

/* ---- TX: producer (CPU task path, GPU kernel) ----------------------------------------------- */

/*
 * Reserve n consecutive descriptors (all or nothing). Returns n and sets *first_pos_p, or 0
 * when fewer are free (a ring-full event is counted on the transition) or n is 0 or above
 * nb_desc. Fill them with sdp_ring_tx_desc() and publish with sdp_ring_tx_submit().
 */
SDP_RING_FN uint32_t sdp_ring_tx_reserve(struct sdp_ring_tx_hdr *r, uint32_t n,
					 uint32_t *first_pos_p)
{
	uint32_t prod = SDP_ATOMIC_LOAD_RLX(&r->prod);
	uint32_t used = prod - SDP_ATOMIC_LOAD_ACQ(&r->cons);

	if (n == 0 || n > r->nb_desc)
		return 0;
	if (r->nb_desc - used < n) {
		if (!SDP_ATOMIC_LOAD_RLX(&r->full)) {
			SDP_ATOMIC_STORE_RLX(&r->full, 1u);
			sdp_ring_cnt_add(&r->ring_full, 1);
		}
		return 0;
	}
	if (SDP_ATOMIC_LOAD_RLX(&r->full))
		SDP_ATOMIC_STORE_RLX(&r->full, 0u);
	*first_pos_p = prod;
	return n;
}

/*
 * Publish every reserved descriptor before end_pos (release: descriptor contents first).
 * INVALID_VALUE when end_pos goes backwards or past the free space.
 */
SDP_RING_FN doca_error_t sdp_ring_tx_submit(struct sdp_ring_tx_hdr *r, uint32_t end_pos)
{
	uint32_t prod = SDP_ATOMIC_LOAD_RLX(&r->prod);
	uint32_t cons = SDP_ATOMIC_LOAD_ACQ(&r->cons);

	if ((uint32_t)(end_pos - prod) > r->nb_desc - (uint32_t)(prod - cons))
		return DOCA_ERROR_INVALID_VALUE;
	SDP_ATOMIC_STORE_REL(&r->prod, end_pos);
	return DOCA_SUCCESS;
}

/* Post one descriptor (reserve + fill + submit). 1 when posted, 0 when the ring is full. */
SDP_RING_FN int sdp_ring_tx_post(struct sdp_ring_tx_hdr *r, uint64_t addr, uint32_t len,
				 uint32_t flags, uint64_t send_ts_ns, uint64_t user)
{
	struct sdp_ring_txd *d;
	uint32_t pos;

	if (sdp_ring_tx_reserve(r, 1, &pos) != 1)
		return 0;
	d = sdp_ring_tx_desc(r, pos);
	d->addr = addr;
	d->len = len;
	d->flags = flags;
	d->send_ts_ns = send_ts_ns;
	d->user = user;
	sdp_ring_tx_submit(r, pos + 1);
	return 1;
}

/*
 * Poll up to max completions into out[] by phase (acquire), then release their entries to the
 * engine. Returns how many.
 */
SDP_RING_FN uint32_t sdp_ring_tx_poll_cmpl(struct sdp_ring_tx_hdr *r, struct sdp_ring_txc *out,
					   uint32_t max)
{
	uint32_t pos = SDP_ATOMIC_LOAD_RLX(&r->cq_cons);
	uint32_t n;

	for (n = 0; n < max; n++) {
		const struct sdp_ring_txc *c = sdp_ring_tx_cmpl(r, pos + n);

		if (SDP_ATOMIC_LOAD_ACQ(&c->ctl) != sdp_ring_ctl_make(pos + n, r->log2_desc))
			break;
		out[n] = *c;
	}
	if (n > 0)
		SDP_ATOMIC_STORE_REL(&r->cq_cons, pos + n);
	return n;
}

/* ---- TX: consumer (the engine) ---------------------------------------------------------- */

/*
 * Descriptors published and not completed, up to max, limited to the free completion entries
 * so that completing them can never overflow. Returns how many and sets *first_pos_p.
 */
SDP_RING_FN uint32_t sdp_ring_tx_peek(const struct sdp_ring_tx_hdr *r, uint32_t max,
				      uint32_t *first_pos_p)
{
	uint32_t cons = SDP_ATOMIC_LOAD_RLX(&r->cons);
	uint32_t avail = SDP_ATOMIC_LOAD_ACQ(&r->prod) - cons;
	uint32_t cq_room =
		r->nb_desc - (SDP_ATOMIC_LOAD_RLX(&r->cq_prod) - SDP_ATOMIC_LOAD_ACQ(&r->cq_cons));

	if (avail > cq_room)
		avail = cq_room;
	if (avail > max)
		avail = max;
	if (avail > 0)
		*first_pos_p = cons;
	return avail;
}

/*
 * Complete the oldest descriptor, pos (in order: pos must be the consumer index): a completion
 * entry when it asked for NOTIFY or status is not DOCA_SUCCESS, the counters, then the
 * descriptor is free again (release). INVALID_VALUE when pos is not the oldest published one;
 * FULL (nothing changed) when it needs a completion entry and none is free, which cannot happen
 * to descriptors obtained through sdp_ring_tx_peek().
 */
SDP_RING_FN doca_error_t sdp_ring_tx_complete(struct sdp_ring_tx_hdr *r, uint32_t pos,
					      doca_error_t status, uint64_t ts_ns)
{
	uint32_t cons = SDP_ATOMIC_LOAD_RLX(&r->cons);
	const struct sdp_ring_txd *d = sdp_ring_tx_desc(r, pos);

	if (pos != cons || SDP_ATOMIC_LOAD_ACQ(&r->prod) == cons)
		return DOCA_ERROR_INVALID_VALUE;
	if ((d->flags & SDP_RING_TXD_F_NOTIFY) || status != DOCA_SUCCESS) {
		uint32_t cq = SDP_ATOMIC_LOAD_RLX(&r->cq_prod);
		struct sdp_ring_txc *c = sdp_ring_tx_cmpl(r, cq);

		if ((uint32_t)(cq - SDP_ATOMIC_LOAD_ACQ(&r->cq_cons)) >= r->nb_desc)
			return DOCA_ERROR_FULL;
		c->desc_pos = pos;
		c->status = (uint32_t)status;
		c->user = d->user;
		c->ts_ns = ts_ns;
		SDP_ATOMIC_STORE_REL(&c->ctl, sdp_ring_ctl_make(cq, r->log2_desc));
		SDP_ATOMIC_STORE_REL(&r->cq_prod, cq + 1);
	}
	if (status == DOCA_SUCCESS) {
		sdp_ring_cnt_add(&r->cnt.packets, 1);
		sdp_ring_cnt_add(&r->cnt.bytes, d->len);
	} else {
		sdp_ring_cnt_add(&r->cnt.drops, 1);
	}
	SDP_ATOMIC_STORE_REL(&r->cons, pos + 1);
	return DOCA_SUCCESS;
}

SDP_RING_FN void sdp_ring_tx_counters(const struct sdp_ring_tx_hdr *r,
				      struct sdp_ring_counters *out)
{
	sdp_ring_cnt_read(&r->cnt, out);
	out->ring_full = SDP_ATOMIC_LOAD_RLX(&r->ring_full);
}

#endif /* SDP_RING_H_ */
