/* SPDX-License-Identifier: BSD-2-Clause */
/* The GID table of a device record (mr_gid.h). */
#include <stdio.h>
#include <string.h>

#include "mr_gid.h"

static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

void mr_gid_ll6_of_mac(const uint8_t mac[6], uint8_t ll6[16])
{
	memset(ll6, 0, 16);
	ll6[0] = 0xfe;
	ll6[1] = 0x80;
	ll6[8] = mac[0] ^ 0x02; /* the universal/local bit, inverted */
	ll6[9] = mac[1];
	ll6[10] = mac[2];
	ll6[11] = 0xff;
	ll6[12] = 0xfe;
	ll6[13] = mac[3];
	ll6[14] = mac[4];
	ll6[15] = mac[5];
}

unsigned mr_gid_table(const struct mr_devconf *c, struct mr_gid out[MR_GID_MAX])
{
	unsigned n = 0;

	memset(out, 0, sizeof(struct mr_gid) * MR_GID_MAX);
	mr_gid_ll6_of_mac(c->mac, out[n].raw);
	out[n++].kind = MR_GID_LINKLOCAL;
	memcpy(out[n].raw, v4map, sizeof(v4map));
	out[n].raw[12] = (uint8_t)(c->ip >> 24);
	out[n].raw[13] = (uint8_t)(c->ip >> 16);
	out[n].raw[14] = (uint8_t)(c->ip >> 8);
	out[n].raw[15] = (uint8_t)c->ip;
	out[n++].kind = MR_GID_IPV4;
	if (c->has_ip6) {
		memcpy(out[n].raw, c->ip6, 16);
		out[n++].kind = MR_GID_GLOBAL6;
	}
	return n;
}

int mr_gid_kind_of(const uint8_t raw[16])
{
	static const uint8_t zero[15];

	if (!memcmp(raw, v4map, sizeof(v4map))) {
		uint32_t ip = (uint32_t)raw[12] << 24 |
			      (uint32_t)raw[13] << 16 |
			      (uint32_t)raw[14] << 8 | raw[15];

		/* 0.0.0.0, 224/4 multicast, 240/4 reserved, broadcast. */
		if (ip == 0 || (ip >> 28) >= 0xe)
			return -1;
		return MR_GID_IPV4;
	}
	if (raw[0] == 0xff || (!memcmp(raw, zero, 15) && raw[15] <= 1))
		return -1;
	/* Other IPv4-compatible forms (::a.b.c.d, deprecated) and the
	 * IPv4-translatable prefix are plain IPv6 addresses here. */
	if (raw[0] == 0xfe && (raw[1] & 0xc0) == 0x80)
		return MR_GID_LINKLOCAL;
	return MR_GID_GLOBAL6;
}

void mr_gid_sysfs(const uint8_t r[16], char buf[40])
{
	snprintf(buf, 40,
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		 "%02x%02x:%02x%02x",
		 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
		 r[10], r[11], r[12], r[13], r[14], r[15]);
}

/* One line of dir/ports/1/<name>/<i> into buf (newline cut); -1 if it
 * cannot be read. */
static int view_line(const char *dir, const char *name, unsigned i, char *buf,
		     size_t len)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/ports/1/%s/%u", dir, name, i) >=
	    (int)sizeof(path))
		return -1;
	return mr_devconf_read_line(path, buf, len);
}

int mr_gid_view_check(const char *dir, const struct mr_devconf *c, char *why,
		      size_t len)
{
	struct mr_gid g[MR_GID_MAX];
	unsigned n = mr_gid_table(c, g), i;
	char want[40], got[64], type[64];

	for (i = 0; i <= n; i++) {
		int have = !view_line(dir, "gids", i, got, sizeof(got));

		if (i == n) {
			/* the kernel lists unused entries as all zero */
			if (!have || !strcmp(got, "0000:0000:0000:0000:0000:"
						  "0000:0000:0000"))
				return 0;
			snprintf(why, len,
				 "GID %u is %s there, the device has %u GIDs",
				 i, got, n);
			return -1;
		}
		mr_gid_sysfs(g[i].raw, want);
		if (!have)
			snprintf(got, sizeof(got), "missing");
		if (strcmp(got, want)) {
			snprintf(why, len,
				 "GID %u is %s there, the device serves %s", i,
				 got, want);
			return -1;
		}
		if (view_line(dir, "gid_attrs/types", i, type, sizeof(type)) ||
		    strcmp(type, "RoCE v2")) {
			snprintf(why, len, "GID %u has no type RoCE v2 there",
				 i);
			return -1;
		}
	}
	return 0;
}
