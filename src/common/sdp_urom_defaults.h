/*
 * softdpu internal: where the UROM offload service listens unless told otherwise. The one home
 * of the default port, shared by the host library (lookup.c), softdpu-uromd (--listen), the
 * softdpu CLI and the configuration registry's help text; the string forms are derived from
 * the number by the preprocessor, so the number is written only here.
 *
 * 62515 is in IANA's dynamic range (49152-65535: never assigned to a service) and above Linux's
 * default ephemeral range (net.ipv4.ip_local_port_range 32768-60999), so neither a registered
 * service nor an outgoing connection's local port takes it by default. It is none of the ports
 * DOCA's samples and applications use: 18515, softdpu's default before, is the side channel
 * port DOCA's urom_rdmo application hard-codes (and perftest's default).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#ifndef SDP_UROM_DEFAULTS_H_
#define SDP_UROM_DEFAULTS_H_

#define SDP_UROM_DEFAULT_HOST "127.0.0.1"
#define SDP_UROM_DEFAULT_PORT 62515

#define SDP_UROM_STRINGIFY_(x) #x
#define SDP_UROM_STRINGIFY(x) SDP_UROM_STRINGIFY_(x)
/* "62515" and "127.0.0.1:62515" */
#define SDP_UROM_DEFAULT_PORT_STR SDP_UROM_STRINGIFY(SDP_UROM_DEFAULT_PORT)
#define SDP_UROM_DEFAULT_ADDR SDP_UROM_DEFAULT_HOST ":" SDP_UROM_DEFAULT_PORT_STR

#endif /* SDP_UROM_DEFAULTS_H_ */
