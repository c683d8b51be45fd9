/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_ctl_port.h"
#include "mr_devconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* DDDD:BB:DD.F or BB:DD.F */
static int is_pci_addr(const char *s, size_t n)
{
	static const char full[] = "xxxx:xx:xx.f", shrt[] = "xx:xx.f";
	const char *pat;

	if (n == sizeof(full) - 1)
		pat = full;
	else if (n == sizeof(shrt) - 1)
		pat = shrt;
	else
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (pat[i] == 'x' && !isxdigit((unsigned char)s[i]))
			return 0;
		if (pat[i] == 'f' && (s[i] < '0' || s[i] > '7'))
			return 0;
		if ((pat[i] == ':' || pat[i] == '.') && s[i] != pat[i])
			return 0;
	}
	return 1;
}

/* net_<driver>[N]: lower-case letters, digits and '_' after "net_". */
static int is_vdev_name(const char *s, size_t n)
{
	if (n <= 4 || strncmp(s, "net_", 4))
		return 0;
	for (size_t i = 4; i < n; i++)
		if (!islower((unsigned char)s[i]) &&
		    !isdigit((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

static int allowed_char(char c)
{
	return isalnum((unsigned char)c) || strchr("_.,:=/@+-[]", c);
}

static int query_iface(struct mrctl_port *p, char *err, size_t errlen)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		seterr(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, p->iface, strlen(p->iface));
	if (ioctl(fd, SIOCGIFMTU, &ifr)) {
		int e = errno;

		close(fd);
		if (e == ENODEV)
			return 0;
		seterr(err, errlen, "interface %s: %s", p->iface, strerror(e));
		return -1;
	}
	p->iface_exists = 1;
	p->netdev_mtu = (unsigned)ifr.ifr_mtu;
	if (!ioctl(fd, SIOCGIFHWADDR, &ifr) &&
	    ifr.ifr_hwaddr.sa_family == 1 /* ARPHRD_ETHER */) {
		memcpy(p->mac, ifr.ifr_hwaddr.sa_data, 6);
		p->has_mac =
			!(p->mac[0] & 1) && (p->mac[0] | p->mac[1] | p->mac[2] |
					     p->mac[3] | p->mac[4] | p->mac[5]);
	}
	close(fd);
	return 0;
}

/* One key=value of the devargs (len bytes at kv). */
static int parse_kv(const char *devargs, const char *kv, size_t len,
		    struct mrctl_port *p, char *err, size_t errlen)
{
	const char *eq = memchr(kv, '=', len);
	size_t klen = eq ? (size_t)(eq - kv) : 0;

	if (!eq || !klen || klen == len - 1) {
		seterr(err, errlen, "--port '%s': '%.*s' is not key=value",
		       devargs, (int)len, kv);
		return -1;
	}
	/* DPDK keys have '-' too (memif's socket-abstract). */
	for (size_t i = 0; i < klen; i++)
		if (!isalnum((unsigned char)kv[i]) && kv[i] != '_' &&
		    kv[i] != '-') {
			seterr(err, errlen, "--port '%s': bad key '%.*s'",
			       devargs, (int)klen, kv);
			return -1;
		}
	if (klen == 5 && !strncmp(kv, "iface", 5)) {
		size_t vlen = len - klen - 1;

		if (p->iface[0]) {
			seterr(err, errlen, "--port '%s': iface given twice",
			       devargs);
			return -1;
		}
		if (vlen >= IF_NAMESIZE || memchr(eq + 1, '/', vlen) ||
		    memchr(eq + 1, ':', vlen)) {
			seterr(err, errlen,
			       "--port '%s': '%.*s' is not an interface name",
			       devargs, (int)vlen, eq + 1);
			return -1;
		}
		memcpy(p->iface, eq + 1, vlen);
		p->iface[vlen] = 0;
	}
	return 0;
}

int mrctl_port_parse(const char *devargs, struct mrctl_port *p, char *err,
		     size_t errlen)
{
	size_t n = strlen(devargs), first;
	const char *s = devargs, *end = devargs + n;
	int depth = 0;

	memset(p, 0, sizeof(*p));
	if (!n || n >= MR_DEVCONF_ARGS_MAX) {
		seterr(err, errlen, "--port: devargs must be 1..%d characters",
		       MR_DEVCONF_ARGS_MAX - 1);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!allowed_char(devargs[i])) {
			seterr(err, errlen,
			       "--port '%s': character '%c' not allowed",
			       devargs,
			       isprint((unsigned char)devargs[i]) ? devargs[i]
								  : '?');
			return -1;
		}
	/* service:<socket>: the device's ports are a datapath service's
	 * (metaroced); nothing here to check but the path's form. */
	if (!strncmp(devargs, "service:", 8)) {
		const char *path = devargs + 8;

		if (path[0] != '/' || strchr(path, ',') ||
		    strlen(path) >= 108) {
			seterr(err, errlen,
			       "--port '%s': service:<absolute socket path "
			       "of metaroced, under 108 characters>",
			       devargs);
			return -1;
		}
		snprintf(p->dev, sizeof(p->dev), "service");
		p->is_service = 1;
		return 0;
	}
	first = strcspn(devargs, ",");
	if (is_pci_addr(devargs, first)) {
		p->is_pci = 1;
	} else if (!is_vdev_name(devargs, first)) {
		seterr(err, errlen,
		       "--port '%s': '%.*s' is neither a vdev name "
		       "(net_<driver>"
		       "N) nor a PCI address (DDDD:BB:DD.F)",
		       devargs, (int)first, devargs);
		return -1;
	}
	if (first >= sizeof(p->dev)) {
		seterr(err, errlen, "--port '%s': device name too long",
		       devargs);
		return -1;
	}
	memcpy(p->dev, devargs, first);
	p->dev[first] = 0;

	/* key=value list; ',' inside [...] belongs to the value (DPDK lists) */
	s = devargs + first;
	while (s < end) {
		const char *kv = ++s, *q = kv;

		for (; q < end && (depth || *q != ','); q++) {
			if (*q == '[')
				depth++;
			else if (*q == ']' && --depth < 0)
				break;
		}
		if (depth) {
			seterr(err, errlen, "--port '%s': unbalanced [ ]",
			       devargs);
			return -1;
		}
		if (q < end && *q == ']') {
			seterr(err, errlen, "--port '%s': unbalanced [ ]",
			       devargs);
			return -1;
		}
		if (parse_kv(devargs, kv, (size_t)(q - kv), p, err, errlen))
			return -1;
		s = q;
	}

	if (!p->is_pci &&
	    (!strncmp(p->dev, "net_af_packet", 13) ||
	     !strncmp(p->dev, "net_mrpkt", 9) ||
	     !strncmp(p->dev, "net_af_xdp", 10)) &&
	    !p->iface[0]) {
		seterr(err, errlen, "--port '%s': %s needs iface=<netdev>",
		       devargs, p->dev);
		return -1;
	}
	if (p->iface[0]) {
		if (query_iface(p, err, errlen))
			return -1;
		/* These PMDs attach to an existing netdev; tap makes its own.
		 */
		if (!p->iface_exists &&
		    (!strncmp(p->dev, "net_af_packet", 13) ||
		     !strncmp(p->dev, "net_mrpkt", 9) ||
		     !strncmp(p->dev, "net_af_xdp", 10))) {
			seterr(err, errlen,
			       "--port '%s': no interface %s in this network "
			       "namespace",
			       devargs, p->iface);
			return -1;
		}
	}
	return 0;
}

int mrctl_port_expand(const char *arg, unsigned k, char *out, size_t cap)
{
	size_t n = strlen(arg);
	int w;

	if (!n || n >= IF_NAMESIZE || strpbrk(arg, ",=:/[]") ||
	    !strncmp(arg, "net_", 4) || !if_nametoindex(arg))
		return 0;
	w = snprintf(out, cap, "net_mrpkt%u,iface=%s", k, arg);
	return w > 0 && (size_t)w < cap;
}

unsigned mrctl_roce_mtu(unsigned netdev_mtu)
{
	unsigned m;

	if (netdev_mtu < 256 + MRCTL_HDR_OVERHEAD)
		return 0;
	for (m = 4096; m > netdev_mtu - MRCTL_HDR_OVERHEAD; m >>= 1)
		;
	return m;
}
