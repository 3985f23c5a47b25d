/*
 * Facts about this host and this softdpu, collected as json-c objects, for doca_caps and the
 * `softdpu env` / `softdpu caps` subcommands (docs/tools.md, docs/schemas/). Nothing is guessed:
 * a piece that cannot be read is {"present": false, "reason": "<the real cause>"}.
 *
 * Each builder returns a new object the caller owns (json_object_put), or NULL only when memory
 * ran out. GPU facts come through libdoca_gpunetio's CUDA driver loader (src/gpunetio), never
 * by linking CUDA.
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_TOOL_INFO_H_
#define SDP_TOOL_INFO_H_

#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

#include "doca_dev.h"

/*
 * {"softdpu", "doca_api", "doca_runtime", "ucx": {present, version, api | reason},
 *  "cuda_driver": {present, version, raw | reason}, "cuda_runtime": {...},
 *  "cuda_toolkit": {present, version | reason}}
 */
struct json_object *sdp_info_versions(void);

/*
 * UCX as this process sees it: {present, version, api, "transports": [names],
 * "resources": [{component, md, transport, device, type}], "md_errors": [{component, md,
 * reason}]} or {present: false, reason}.
 */
struct json_object *sdp_info_ucx(void);

/* Open MPI: {present, implementation, version, path, output} or {present: false, reason}. */
struct json_object *sdp_info_mpi(void);

/*
 * GPUs: {present, reason?, count, "kernel_module": {present, version | reason},
 *  "nvidia_peermem": {present, loaded | reason},
 *  "list": [{ordinal, pci_bus_id, name, compute_capability, cc_overridden,
 *            gpunetio_supported, gpunetio_reason, memory_bytes, dmabuf_supported}]}
 */
struct json_object *sdp_info_gpus(void);

/* Hugepages: {"meminfo": {present, total, free, reserved, surplus, default_size_kb | reason},
 *  "sizes": {present, list: [{size_kb, nr, free, reserved, surplus}] | reason}} */
struct json_object *sdp_info_hugepages(void);

/*
 * One device: {name, pci_addr, backend, iface, pci_func_type, link, mac, mac_reason?}; with
 * caps nonzero also "caps" (sdp_info_dev_caps). The MAC is read by opening the device and an
 * RX-only port of it for a moment (a TX port could create a pcap provider's tx file); a device
 * without an Ethernet port has mac null and the reason.
 */
struct json_object *sdp_info_device(const struct doca_devinfo *info, int caps);

/*
 * The capabilities the doca_eth_rxq_cap_* / doca_eth_txq_cap_* getters answer for a device:
 * {"ethernet", "rxq": {"types": [{type, data_path, supported, status}], max_burst_size,
 *  max_packet_size}, "txq": {"types": [...], max_burst_size, l3_checksum_offload,
 *  l4_checksum_offload, wait_on_time}}.
 */
struct json_object *sdp_info_dev_caps(const struct doca_devinfo *info);

/*
 * The devices doca_devinfo_create_list() finds, as an array of sdp_info_device(); select
 * (ibdev name, interface name or PCI address; NULL: all) keeps the matching ones only. NULL
 * with the cause in err when the list cannot be made or, with select, no device matches.
 */
struct json_object *sdp_info_devices(const char *select, int caps, char *err, size_t errlen);

/* Little helpers for the text output of the tools. */
const char *sdp_info_str(struct json_object *obj, const char *key); /* NULL when absent */
/* "<version>" when present, else "missing (<reason>)" into buf. */
const char *sdp_info_present_str(struct json_object *obj, char *buf, size_t len);

/*
 * Print one JSON document (pretty, newline-terminated) on out and flush it; 0, or -1 when the
 * write failed.
 */
int sdp_info_print_json(FILE *out, struct json_object *doc);

#endif /* SDP_TOOL_INFO_H_ */
