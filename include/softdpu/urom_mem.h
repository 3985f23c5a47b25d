/*
 * softdpu extension (not part of DOCA): host memory that UROM workers may read and write.
 *
 * In DOCA a host registers a buffer with UCX and packs an exported memory handle (the "memh",
 * ucp_memh_pack with UCP_MEMH_PACK_FLAG_EXPORT, usable only across BlueField's GVMI) and a
 * remote key (the "mkey", ucp_rkey_pack); it hands both to doca_urom_domain_add_buffer() or
 * to a plugin command, and the DPU then moves data without the host CPU. softdpu runs workers
 * on ordinary Linux, so it does the same with plain UCX remote keys: sdp_urom_mem_export()
 * registers the buffer with a process-wide UCP context and returns
 *
 *   - memh: softdpu's own descriptor {va, len, owner UCP worker address, packed rkey}, all a
 *     worker needs to connect to this process and put/get the buffer (its layout is
 *     internal; worker halves use plugins/common/sdp_plugin_mem.h to import it);
 *   - mkey: the raw UCX packed rkey of the same registration (ucp_rkey_pack()).
 *
 * Transfers run over whatever UCX picks from UCX_TLS / UCX_NET_DEVICES (shared memory or CMA
 * on one machine: no host CPU involved; TCP between machines). UCX runs RMA over TCP through
 * the target's UCP worker, so the export engine keeps one thread that progresses its worker:
 * it sleeps in epoll on the worker's wakeup fd and uses no CPU while idle. docs/plugins.md,
 * "Host memory in softdpu: memh, mkey and MEM_MAP", has the details.
 *
 * Lifetime: the engine (UCP context, UCP worker, progress thread) starts at the first export
 * and stops at the last unexport. The buffer must stay allocated until it is unexported, and
 * a worker may reach it until then: unexport only when no worker uses the memh any more.
 * Every call is thread-safe.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SOFTDPU_UROM_MEM_H_
#define SOFTDPU_UROM_MEM_H_

#include <stddef.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_urom_domain;

/* One exported buffer. */
struct sdp_urom_mem;

/*
 * Register [buf, buf + len) for remote access and pack its memh and mkey. Starts the export
 * engine at the first export. DOCA_ERROR_INVALID_VALUE for a NULL buf or mem or a zero len (or
 * buf + len overflowing), DOCA_ERROR_NO_MEMORY, DOCA_ERROR_DRIVER when UCX fails (context,
 * worker, registration or key packing; the cause is logged once), DOCA_ERROR_OPERATING_SYSTEM
 * when the progress thread or its descriptors cannot be created.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_mem_export(void *buf, size_t len, struct sdp_urom_mem **mem);

/*
 * The memh of an exported buffer: *memh points to *len bytes owned by mem (valid until
 * sdp_urom_mem_unexport()). DOCA_ERROR_INVALID_VALUE for NULL arguments.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_mem_get_memh(const struct sdp_urom_mem *mem, const void **memh, size_t *len);

/*
 * The mkey (UCX packed remote key) of an exported buffer: *mkey points to *len bytes owned by
 * mem (valid until sdp_urom_mem_unexport()). DOCA_ERROR_INVALID_VALUE for NULL arguments.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_mem_get_mkey(const struct sdp_urom_mem *mem, const void **mkey, size_t *len);

/*
 * Deregister the buffer and free mem; stops the export engine after the last one (bounded:
 * the progress thread is told to stop and joined). This does NOT revoke access: UCX keys carry
 * no revocation, so while the engine runs (another buffer is still exported) a worker that kept
 * the memh can still reach the range (and over CMA a process of the same user always can).
 * Stop the workers' use first (stop the domain, release the plugin's mapping), then unexport.
 * DOCA_ERROR_INVALID_VALUE for NULL.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_mem_unexport(struct sdp_urom_mem *mem);

/*
 * Export [buf, buf + len) and add it to domain in one call: sdp_urom_mem_export() followed by
 * doca_urom_domain_add_buffer(domain, buf, len, memh, memh_len, mkey, mkey_len) (which copies
 * both). On failure of either nothing stays exported and that call's status is returned
 * (doca_urom_domain_add_buffer's: BAD_STATE before doca_urom_domain_set_buffers_count, FULL
 * when the count is reached, ...). Keep *mem exported while the domain's workers may use the
 * buffer, i.e. until the domain is stopped and destroyed.
 */
DOCA_EXPERIMENTAL
doca_error_t sdp_urom_domain_export_buffer(struct doca_urom_domain *domain, void *buf, size_t len,
					   struct sdp_urom_mem **mem);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDPU_UROM_MEM_H_ */
