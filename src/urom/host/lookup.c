/*
 * libdoca_urom: where the UROM service is. DOCA_UROM_SERVICE_FILE (DOCA's), then softdpu's
 * SOFTDPU_UROM_SERVICE_ADDR, then the local default SDP_UROM_DEFAULT_ADDR (sdp_urom_defaults.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "doca_dev.h"
#include "sdp_config.h"
#include "sdp_log.h"
#include "sdp_provider.h"
#include "sdp_urom_host.h"

SDP_LOG_COMPONENT("urom_lookup");

uint64_t sdp_urom_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int sdp_urom_connect_timeout_ms(void)
{
	uint64_t value = 5000;

	/* A bad value was reported by the registry; the default applies then. */
	if (sdp_config_get_uint(SDP_CFG_UROM_CONNECT_TIMEOUT_MS, &value) != DOCA_SUCCESS)
		value = 5000;
	if (value == 0)
		value = 1;
	if (value > 3600000)
		value = 3600000;
	return (int)value;
}

doca_error_t sdp_urom_hostport_parse(const char *str, uint16_t default_port, char *host,
				     size_t host_size, uint16_t *port_p)
{
	const char *host_start, *host_end, *port_str = NULL;
	unsigned long port = default_port;
	size_t host_len;
	char *end;

	if (str == NULL || host == NULL || port_p == NULL || *str == '\0')
		return DOCA_ERROR_INVALID_VALUE;

	if (str[0] == '[') {
		host_start = str + 1;
		host_end = strchr(host_start, ']');
		if (host_end == NULL)
			return DOCA_ERROR_INVALID_VALUE;
		if (host_end[1] == ':')
			port_str = host_end + 2;
		else if (host_end[1] != '\0')
			return DOCA_ERROR_INVALID_VALUE;
	} else {
		const char *colon = strchr(str, ':');

		host_start = str;
		if (colon != NULL && strchr(colon + 1, ':') != NULL) {
			/* a bare IPv6 address: no port */
			host_end = str + strlen(str);
		} else if (colon != NULL) {
			host_end = colon;
			port_str = colon + 1;
		} else {
			host_end = str + strlen(str);
		}
	}

	host_len = (size_t)(host_end - host_start);
	if (host_len == 0 || host_len >= host_size)
		return DOCA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < host_len; i++)
		if (isspace((unsigned char)host_start[i]))
			return DOCA_ERROR_INVALID_VALUE;

	if (port_str != NULL) {
		if (!isdigit((unsigned char)*port_str))
			return DOCA_ERROR_INVALID_VALUE;
		errno = 0;
		port = strtoul(port_str, &end, 10);
		if (errno != 0 || *end != '\0' || port == 0 || port > 65535)
			return DOCA_ERROR_INVALID_VALUE;
	}

	memcpy(host, host_start, host_len);
	host[host_len] = '\0';
	*port_p = (uint16_t)port;
	return DOCA_SUCCESS;
}

static doca_error_t service_file_errno_status(int err)
{
	return err == ENOENT		       ? DOCA_ERROR_NOT_FOUND :
	       (err == EACCES || err == EPERM) ? DOCA_ERROR_NOT_PERMITTED :
						 DOCA_ERROR_IO_FAILED;
}

/*
 * Read the whole service file into a NUL-terminated malloc'd buffer (*len_p bytes). Accepted
 * only as a regular file of at most SDP_UROM_SERVICE_FILE_MAX bytes (/dev/zero cannot grow the
 * process): its type is checked before it is opened, so a FIFO or a device is never opened
 * (opening a device can act on it), and the file opened (without blocking, following no
 * symbolic link at the last step) must be the one looked at.
 */
static doca_error_t service_file_read(const char *path, char **text_p, size_t *len_p)
{
	struct stat st_path, st;
	char real[PATH_MAX];
	size_t len = 0;
	char *text;
	int fd, err;

	/* A symbolic link to the file is fine: the file it leads to is looked at and opened. */
	if (realpath(path, real) == NULL || lstat(real, &st_path) != 0) {
		err = errno;
		sdp_error("failed to look at the UROM service file %s (DOCA_UROM_SERVICE_FILE): %s",
			  path, strerror(err));
		return service_file_errno_status(err);
	}
	if (!S_ISREG(st_path.st_mode)) {
		sdp_error("the UROM service file %s (DOCA_UROM_SERVICE_FILE) is not a regular file "
			  "(a directory, FIFO, socket or device); refused without opening it",
			  path);
		return DOCA_ERROR_IO_FAILED;
	}
	fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		sdp_error("failed to open the UROM service file %s (DOCA_UROM_SERVICE_FILE): %s",
			  path, strerror(err));
		return service_file_errno_status(err);
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != st_path.st_dev ||
	    st.st_ino != st_path.st_ino) {
		sdp_error("the UROM service file %s (DOCA_UROM_SERVICE_FILE) was replaced while "
			  "being opened; refused",
			  path);
		close(fd);
		return DOCA_ERROR_IO_FAILED;
	}
	text = malloc(SDP_UROM_SERVICE_FILE_MAX + 1);
	if (text == NULL) {
		sdp_error("out of memory reading the UROM service file %s", path);
		close(fd);
		return DOCA_ERROR_NO_MEMORY;
	}
	/* One byte more than allowed tells an oversized file (st_size may be 0 for /proc files). */
	while (len <= SDP_UROM_SERVICE_FILE_MAX) {
		ssize_t n = read(fd, text + len, SDP_UROM_SERVICE_FILE_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sdp_error("failed to read the UROM service file %s: %m", path);
			free(text);
			close(fd);
			return DOCA_ERROR_IO_FAILED;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len > SDP_UROM_SERVICE_FILE_MAX) {
		sdp_error("the UROM service file %s (DOCA_UROM_SERVICE_FILE) is larger than %u "
			  "bytes; refused",
			  path, SDP_UROM_SERVICE_FILE_MAX);
		free(text);
		return DOCA_ERROR_IO_FAILED;
	}
	text[len] = '\0';
	*text_p = text;
	*len_p = len;
	return DOCA_SUCCESS;
}

/* Equal host names, or `line_name` is the short form (before the first dot) of `hostname`. */
static int host_matches(const char *line_name, const char *hostname)
{
	size_t len;

	if (strcasecmp(line_name, hostname) == 0)
		return 1;
	len = strlen(line_name);
	return strncasecmp(line_name, hostname, len) == 0 && hostname[len] == '.';
}

doca_error_t sdp_urom_service_file_lookup(const char *path, const char *hostname,
					  const char *pci_addr, struct sdp_urom_addr *addr_p)
{
	char want_pci[DOCA_DEVINFO_PCI_ADDR_SIZE], line_pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	struct sdp_urom_addr addr;
	doca_error_t status;
	char *text = NULL, *line, *next, *end;
	size_t len = 0;
	unsigned int lineno = 0;
	int found = 0;

	if (path == NULL || hostname == NULL || pci_addr == NULL || addr_p == NULL) {
		sdp_error("invalid argument: path %p, hostname %p, pci_addr %p, addr_p %p",
			  (const void *)path, (const void *)hostname, (const void *)pci_addr,
			  (void *)addr_p);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (sdp_pci_addr_normalize(pci_addr, want_pci) != DOCA_SUCCESS) {
		sdp_error("device PCI address \"%s\" is not a PCI address", pci_addr);
		return DOCA_ERROR_INVALID_VALUE;
	}

	status = service_file_read(path, &text, &len);
	if (status != DOCA_SUCCESS)
		return status;

	end = text + len;
	for (line = text; !found && line < end; line = next) {
		char *fields[6], *save = NULL, *tok;
		int n = 0;

		next = memchr(line, '\n', (size_t)(end - line));
		if (next != NULL)
			*next++ = '\0';
		else
			next = end;
		lineno++;
		for (tok = strtok_r(line, " \t\r\n", &save); tok != NULL && n < 6;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			fields[n++] = tok;
		if (n == 0 || fields[0][0] == '#')
			continue;
		if (n != 5) {
			sdp_warn("%s:%u: expected 5 fields \"<app_hostname> dpu <dev_hostname> "
				 "<dev_pci_addr> <net,devs>\", found %s%d; line skipped",
				 path, lineno, n > 5 ? "more than " : "", n > 5 ? 5 : n);
			continue;
		}
		if (strcmp(fields[1], "dpu") != 0) {
			sdp_warn("%s:%u: service type \"%s\" is not \"dpu\"; line skipped", path,
				 lineno, fields[1]);
			continue;
		}
		if (sdp_pci_addr_normalize(fields[3], line_pci) != DOCA_SUCCESS) {
			sdp_warn("%s:%u: \"%s\" is not a PCI address; line skipped", path, lineno,
				 fields[3]);
			continue;
		}
		if (!host_matches(fields[0], hostname) || strcasecmp(line_pci, want_pci) != 0)
			continue;

		memset(&addr, 0, sizeof(addr));
		if (sdp_urom_hostport_parse(fields[2], SDP_UROM_DEFAULT_PORT, addr.host,
					    sizeof(addr.host), &addr.port) != DOCA_SUCCESS) {
			sdp_warn("%s:%u: \"%s\" is not a host name, host:port or [address]:port; "
				 "line skipped",
				 path, lineno, fields[2]);
			continue;
		}
		if (strlen(fields[4]) >= sizeof(addr.net_devices)) {
			sdp_warn("%s:%u: network device list longer than %zu characters; line "
				 "skipped",
				 path, lineno, sizeof(addr.net_devices) - 1);
			continue;
		}
		strcpy(addr.net_devices, fields[4]);
		snprintf(addr.origin, sizeof(addr.origin), "%s:%u", path, lineno);
		found = 1;
	}
	free(text);

	if (!found) {
		sdp_error("no line of the UROM service file %s matches host %s and device %s", path,
			  hostname, want_pci);
		status = DOCA_ERROR_NOT_FOUND;
		return status;
	}
	*addr_p = addr;
	return DOCA_SUCCESS;
}

doca_error_t sdp_urom_addr_resolve(const char *pci_addr, struct sdp_urom_addr *addr_p)
{
	const char *file = sdp_config_get_string(SDP_CFG_UROM_SERVICE_FILE);
	const char *env = sdp_config_get_string(SDP_CFG_UROM_SERVICE_ADDR);
	struct sdp_urom_addr addr;
	char hostname[256];
	doca_error_t status;

	if (addr_p == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	memset(&addr, 0, sizeof(addr));

	if (file != NULL && *file != '\0') {
		if (pci_addr == NULL || *pci_addr == '\0') {
			sdp_error("DOCA_UROM_SERVICE_FILE is set (%s) but no device was given "
				  "(doca_urom_service_set_dev): the file is keyed by the device's "
				  "PCI address",
				  file);
			return DOCA_ERROR_BAD_STATE;
		}
		if (gethostname(hostname, sizeof(hostname)) != 0) {
			sdp_error("gethostname failed: %m");
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		hostname[sizeof(hostname) - 1] = '\0';
		status = sdp_urom_service_file_lookup(file, hostname, pci_addr, &addr);
		if (status != DOCA_SUCCESS)
			return status;
	} else if (env != NULL && *env != '\0') {
		if (sdp_urom_hostport_parse(env, SDP_UROM_DEFAULT_PORT, addr.host,
					    sizeof(addr.host), &addr.port) != DOCA_SUCCESS) {
			sdp_error("SOFTDPU_UROM_SERVICE_ADDR \"%s\" is not host, host:port or "
				  "[address]:port",
				  env);
			return DOCA_ERROR_INVALID_VALUE;
		}
		snprintf(addr.origin, sizeof(addr.origin), "SOFTDPU_UROM_SERVICE_ADDR");
	} else {
		strcpy(addr.host, SDP_UROM_DEFAULT_HOST);
		addr.port = SDP_UROM_DEFAULT_PORT;
		snprintf(addr.origin, sizeof(addr.origin), "the default address");
	}
	*addr_p = addr;
	return DOCA_SUCCESS;
}
