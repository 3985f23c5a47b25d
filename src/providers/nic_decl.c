/*
 * Declaration and identity helpers shared by the software NIC provider modules
 * (sdp_nic_decl.h).
 * SPDX-License-Identifier: BSD-3-Clause
 */
#include "sdp_nic_decl.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdp_log.h"

SDP_LOG_COMPONENT("nic");

#define NIC_SLOTS SDP_NIC_MAX_DEVICES

uint32_t sdp_nic_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	return h;
}

int sdp_nic_decl_keys_ok(const struct sdp_dev_decl *decl, const char *const *known)
{
	for (size_t i = 0; i < decl->num_params; i++) {
		const char *key = decl->params[i].key;
		int found = 0;

		for (const char *const *k = known; *k != NULL; k++)
			found |= strcmp(*k, key) == 0;
		if (!found) {
			char list[256] = "";

			for (const char *const *k = known; *k != NULL; k++) {
				if (k != known)
					strncat(list, " ", sizeof(list) - strlen(list) - 1);
				strncat(list, *k, sizeof(list) - strlen(list) - 1);
			}
			sdp_warn("%s: unknown key '%s' for provider %s (keys: %s)", decl->origin,
				 key, decl->provider, list);
			return 0;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(decl->params[j].key, key) == 0) {
				sdp_warn("%s: key '%s' given twice", decl->origin, key);
				return 0;
			}
		}
	}
	return 1;
}

int sdp_nic_decl_name_ok(const struct sdp_dev_decl *decl, const char *key, const char *name)
{
	size_t len;

	if (name == NULL) {
		sdp_warn("%s: provider %s needs %s=<device name>", decl->origin, decl->provider,
			 key);
		return 0;
	}
	len = strlen(name);
	if (len == 0 || len >= DOCA_DEVINFO_IBDEV_NAME_SIZE) {
		sdp_warn("%s: %s '%s' must have 1 to %d characters", decl->origin, key, name,
			 DOCA_DEVINFO_IBDEV_NAME_SIZE - 1);
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!isalnum(c) && c != '_' && c != '.' && c != '-') {
			sdp_warn("%s: %s '%s' has a character outside A-Z a-z 0-9 _ . -",
				 decl->origin, key, name);
			return 0;
		}
	}
	return 1;
}

doca_error_t sdp_nic_parse_decimal(const char *text, uint64_t *value_p)
{
	uint64_t v = 0;
	int too_big = 0;

	if (text == NULL || *text == '\0')
		return DOCA_ERROR_INVALID_VALUE;
	/* Every character is looked at: "99999999999999999999x" is not a number, not too big. */
	for (const char *c = text; *c != '\0'; c++) {
		unsigned digit = (unsigned)(unsigned char)*c - '0';

		if (digit > 9)
			return DOCA_ERROR_INVALID_VALUE;
		if (v > (UINT64_MAX - digit) / 10)
			too_big = 1;
		else
			v = v * 10 + digit;
	}
	if (too_big)
		return DOCA_ERROR_TOO_BIG;
	*value_p = v;
	return DOCA_SUCCESS;
}

int sdp_nic_decl_uint(const struct sdp_dev_decl *decl, const char *key, uint64_t min, uint64_t max,
		      uint64_t def, uint64_t *value_p)
{
	const char *text = sdp_dev_decl_get(decl, key);
	doca_error_t status;
	uint64_t v = 0;

	if (text == NULL) {
		*value_p = def;
		return 1;
	}
	status = sdp_nic_parse_decimal(text, &v);
	if (status == DOCA_ERROR_INVALID_VALUE) {
		sdp_warn("%s: %s=%s is not a number from %" PRIu64 " to %" PRIu64
			 " (decimal digits only, no sign or base prefix)",
			 decl->origin, key, text, min, max);
		return 0;
	}
	if (status != DOCA_SUCCESS || v < min || v > max) {
		/* beyond 64 bits (DOCA_ERROR_TOO_BIG) is out of every range too */
		sdp_warn("%s: %s=%s is not a number from %" PRIu64 " to %" PRIu64, decl->origin,
			 key, text, min, max);
		return 0;
	}
	*value_p = v;
	return 1;
}

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int sdp_nic_parse_mac(const char *text, uint8_t mac[6])
{
	uint8_t out[6];

	if (text == NULL || strlen(text) != 17)
		return 0;
	for (int i = 0; i < 6; i++) {
		int hi = hex_digit((unsigned char)text[3 * i]);
		int lo = hex_digit((unsigned char)text[3 * i + 1]);

		if (hi < 0 || lo < 0 || (i < 5 && text[3 * i + 2] != ':'))
			return 0;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(mac, out, sizeof(out));
	return 1;
}

void sdp_nic_default_mac(const char *name, uint8_t tag, uint8_t mac[6])
{
	uint32_t h = sdp_nic_hash(name);

	mac[0] = 0x02; /* locally administered, unicast */
	mac[1] = tag;
	mac[2] = (uint8_t)(h >> 24);
	mac[3] = (uint8_t)(h >> 16);
	mac[4] = (uint8_t)(h >> 8);
	mac[5] = (uint8_t)h;
}

/* Order a before b: by name, equal names in declaration order. */
static int name_before(const char *const *names, size_t a, size_t b)
{
	int c = strcmp(names[a], names[b]);

	return c < 0 || (c == 0 && a < b);
}

doca_error_t sdp_nic_pci_assign(uint8_t bus, const char *const *names, size_t n,
				char (*out)[DOCA_DEVINFO_PCI_ADDR_SIZE])
{
	uint8_t taken[NIC_SLOTS] = {0};
	size_t order[NIC_SLOTS];

	if (n > NIC_SLOTS) {
		sdp_error("%zu devices on synthetic bus ffff:%02x, at most %d fit", n, bus,
			  NIC_SLOTS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (size_t i = 0; i < n; i++) {
		if (names[i] == NULL || names[i][0] == '\0') {
			sdp_error("device %zu of synthetic bus ffff:%02x has no name", i, bus);
			return DOCA_ERROR_INVALID_VALUE;
		}
		/* insertion sort: a few devices, and no shared state (qsort has no context) */
		size_t j = i;

		while (j > 0 && name_before(names, i, order[j - 1])) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = order[k];
		unsigned slot = sdp_nic_hash(names[i]) % NIC_SLOTS;

		while (taken[slot])
			slot = (slot + 1) % NIC_SLOTS;
		taken[slot] = 1;
		snprintf(out[i], DOCA_DEVINFO_PCI_ADDR_SIZE, "ffff:%02x:%02x.%x", bus, slot >> 3,
			 slot & 7);
	}
	return DOCA_SUCCESS;
}
