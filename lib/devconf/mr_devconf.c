/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_devconf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int mr_devconf_parse_ip(const char *s, uint32_t *ip, uint8_t *prefix)
{
	unsigned a[4], len;
	char tail;

	if (sscanf(s, "%3u.%3u.%3u.%3u/%2u%c", &a[0], &a[1], &a[2], &a[3],
		   &len, &tail) != 5)
		return -1;
	for (int i = 0; i < 4; i++)
		if (a[i] > 255)
			return -1;
	if (len > 32)
		return -1;
	/* sscanf accepts leading '+' and spaces; insist on digits only. */
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && *p != '.' && *p != '/')
			return -1;
	*ip = a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3];
	*prefix = (uint8_t)len;
	return 0;
}

int mr_devconf_parse_gw6(const char *s, uint8_t a[16])
{
	static const uint8_t zero[15];
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0,    0,
					   0, 0, 0, 0, 0xff, 0xff };
	struct in6_addr in;

	if (!strchr(s, ':') || inet_pton(AF_INET6, s, &in) != 1)
		return -1;
	memcpy(a, in.s6_addr, 16);
	if (a[0] == 0xff || (!memcmp(a, zero, 15) && a[15] <= 1) ||
	    !memcmp(a, v4map, sizeof(v4map)))
		return -1;
	return 0;
}

int mr_devconf_parse_ip6(const char *s, uint8_t a[16], uint8_t *prefix)
{
	const char *slash = strrchr(s, '/');
	char addr[INET6_ADDRSTRLEN];
	unsigned long len;
	char *end;

	if (!slash || (size_t)(slash - s) >= sizeof(addr) ||
	    !isdigit((unsigned char)slash[1]))
		return -1;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = 0;
	len = strtoul(slash + 1, &end, 10);
	if (*end || len < 1 || len > 128 || mr_devconf_parse_gw6(addr, a))
		return -1;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return -1; /* link-local: the device's own comes from its MAC */
	*prefix = (uint8_t)len;
	return 0;
}

void mr_devconf_ip6_str(const uint8_t a[16], char buf[46])
{
	if (!inet_ntop(AF_INET6, a, buf, 46))
		snprintf(buf, 46, "?");
}

int mr_devconf_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned m[6];
	char tail;

	if (strlen(s) != 17)
		return -1;
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3],
		   &m[4], &m[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 17; i++)
		if ((i % 3 == 2) ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
			return -1;
	if (m[0] & 1)
		return -1; /* multicast */
	if (!(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]))
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	return 0;
}

int mr_devconf_valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= MR_DEVCONF_NAME_MAX)
		return 0;
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' &&
		    s[i] != '-' && s[i] != '.')
			return 0;
	return 1;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int copy_str(char *dst, size_t cap, const char *v)
{
	if (strlen(v) >= cap)
		return -1;
	strcpy(dst, v);
	return 0;
}

int mr_devconf_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int mr_devconf_read(const char *path, struct mr_devconf *c, char *err,
		    size_t errlen)
{
	char line[512];
	unsigned lineno = 0;
	int have_ip = 0, have_mac = 0;
	FILE *f = fopen(path, "re");

	memset(c, 0, sizeof(*c));
	c->mtu = 4096;
	c->udp_port = 4797;
	if (!f) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *eq, *key = line, *val;
		size_t n = strlen(line);

		lineno++;
		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		if (!n || line[0] == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq)
			goto bad;
		*eq = 0;
		val = eq + 1;
		if (!strcmp(key, "name")) {
			if (!mr_devconf_valid_name(val) ||
			    copy_str(c->name, sizeof(c->name), val))
				goto bad;
		} else if (!strcmp(key, "port")) {
			if (c->nports == MR_DEVCONF_MAX_PORTS || !*val ||
			    copy_str(c->ports[c->nports], MR_DEVCONF_ARGS_MAX,
				     val))
				goto bad;
			c->nports++;
		} else if (!strcmp(key, "ip")) {
			if (mr_devconf_parse_ip(val, &c->ip, &c->prefix))
				goto bad;
			have_ip = 1;
		} else if (!strcmp(key, "mac")) {
			if (mr_devconf_parse_mac(val, c->mac))
				goto bad;
			have_mac = 1;
		} else if (!strcmp(key, "mtu")) {
			unsigned long v = strtoul(val, NULL, 10);

			if (v != 256 && v != 512 && v != 1024 && v != 2048 &&
			    v != 4096)
				goto bad;
			c->mtu = (uint32_t)v;
		} else if (!strcmp(key, "udp_port")) {
			unsigned long v = strtoul(val, NULL, 10);

			if (!v || v > 65535 || v == 4791)
				goto bad;
			c->udp_port = (uint16_t)v;
		} else if (!strncmp(key, "opt.", 4)) {
			char nv[sizeof(line) + 8], why[200];

			snprintf(nv, sizeof(nv), "%s=%s", key + 4, val);
			if (mr_knob_set_parse(&c->opts, nv, "opt", why,
					      sizeof(why))) {
				fclose(f);
				seterr(err, errlen, "%s:%u: %s", path, lineno,
				       why);
				return -1;
			}
		} else if (!strcmp(key, "ip6")) {
			if (mr_devconf_parse_ip6(val, c->ip6, &c->prefix6))
				goto bad;
			c->has_ip6 = 1;
		} else if (!strcmp(key, "gateway")) {
			static const uint8_t none[16];
			unsigned long pl;
			char ip32[24], *end;
			uint8_t plen;

			pl = strtoul(val, &end, 10);
			if (pl < 1 || pl > MR_DEVCONF_MAX_PORTS || *end != ',')
				goto bad;
			if (strchr(end + 1, ':')) {
				if (mr_devconf_parse_gw6(end + 1,
							 c->gateway6[pl - 1]) ||
				    !memcmp(c->gateway6[pl - 1], none, 16))
					goto bad;
				continue;
			}
			if (strlen(end + 1) > 15)
				goto bad;
			snprintf(ip32, sizeof(ip32), "%s/32", end + 1);
			if (mr_devconf_parse_ip(ip32, &c->gateway[pl - 1],
						&plen) ||
			    !c->gateway[pl - 1])
				goto bad;
		} else if (!strcmp(key, "uverbs")) {
			if (!mr_devconf_valid_name(val) ||
			    copy_str(c->uverbs, sizeof(c->uverbs), val))
				goto bad;
		}
		/* Unknown keys are ignored: newer tools may add some. */
	}
	fclose(f);
	if (!c->name[0] || !c->nports || !have_ip || !have_mac) {
		seterr(err, errlen, "%s: incomplete record", path);
		return -1;
	}
	return 0;
bad:
	fclose(f);
	seterr(err, errlen, "%s:%u: malformed line", path, lineno);
	return -1;
}

int mr_devconf_write(FILE *f, const struct mr_devconf *c)
{
	fprintf(f, "# MetaRoCE device record, written by metaroce-ctl\n");
	fprintf(f, "name=%s\n", c->name);
	for (unsigned i = 0; i < c->nports; i++)
		fprintf(f, "port=%s\n", c->ports[i]);
	fprintf(f, "ip=%u.%u.%u.%u/%u\n", c->ip >> 24, (c->ip >> 16) & 255,
		(c->ip >> 8) & 255, c->ip & 255, c->prefix);
	if (c->has_ip6) {
		char a[46];

		mr_devconf_ip6_str(c->ip6, a);
		fprintf(f, "ip6=%s/%u\n", a, c->prefix6);
	}
	fprintf(f, "mac=%02x:%02x:%02x:%02x:%02x:%02x\n", c->mac[0], c->mac[1],
		c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
	fprintf(f, "mtu=%u\n", c->mtu);
	fprintf(f, "udp_port=%u\n", c->udp_port);
	if (c->uverbs[0])
		fprintf(f, "uverbs=%s\n", c->uverbs);
	for (unsigned i = 0; i < c->nports; i++)
		if (c->gateway[i])
			fprintf(f, "gateway=%u,%u.%u.%u.%u\n", i + 1,
				c->gateway[i] >> 24, (c->gateway[i] >> 16) & 255,
				(c->gateway[i] >> 8) & 255, c->gateway[i] & 255);
	for (unsigned i = 0; i < c->nports; i++) {
		static const uint8_t none[16];
		char a[46];

		if (!memcmp(c->gateway6[i], none, 16))
			continue;
		mr_devconf_ip6_str(c->gateway6[i], a);
		fprintf(f, "gateway=%u,%s\n", i + 1, a);
	}
	for (int i = 0; i < MR_KNOBS_N; i++) {
		char v[32];

		if (!(c->opts.mask & (1ull << i)))
			continue;
		mr_knob_format(i, c->opts.v[i], v, sizeof(v));
		fprintf(f, "opt.%s=%s\n", mr_knob_defs()[i].name, v);
	}
	return ferror(f) ? -1 : 0;
}

uint64_t mr_devconf_node_guid(const uint8_t mac[6])
{
	return (uint64_t)(mac[0] ^ 2) << 56 | (uint64_t)mac[1] << 48 |
	       (uint64_t)mac[2] << 40 | 0xffULL << 32 | 0xfeULL << 24 |
	       (uint64_t)mac[3] << 16 | (uint64_t)mac[4] << 8 | mac[5];
}
