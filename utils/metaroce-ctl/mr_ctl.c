/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroce-ctl: create, show and delete MetaRoCE devices of the caller's
 * network namespace (see mr_ctl_view.h for what a device is on disk).
 * Every error is one line on stderr and a non-zero exit status (2: usage,
 * 1: anything else), and leaves nothing half-created.
 */
#include "mr_ctl_gc.h"
#include "mr_ctl_opt.h"
#include "mr_ctl_paths.h"
#include "mr_ctl_persist.h"
#include "mr_ctl_port.h"
#include "mr_ctl_stats.h"
#include "mr_ctl_view.h"
#include "mr_devconf.h"
#include "mr_gid.h"

#include <errno.h>
#include <json-c/json.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MRCTL_DEFAULT_UDP 4797
#define ROCEV2_UDP 4791

static const char usage_main[] =
	"Usage: metaroce-ctl link add NAME --port DEVARGS [--gateway IP]\n"
	"                        [--port DEVARGS [--gateway IP] ...]\n"
	"                        --ip ADDR/LEN [--ip ADDR6/LEN] [--mac MAC] "
	"[--mtu N] "
	"[--udp-port P]\n"
	"                        [--opt KNOB=VALUE ...] [--persist]\n"
	"       metaroce-ctl link set NAME --opt KNOB=VALUE|KNOB= ...\n"
	"       metaroce-ctl link show [NAME] [-v] [--json]\n"
	"       metaroce-ctl link del NAME [--persist] | --persisted\n"
	"       metaroce-ctl link restore\n"
	"       metaroce-ctl link gc [--dry-run] [--skip-pid PID ...]\n"
	"       metaroce-ctl stats NAME [--json | --prom] [--last]\n"
	"       metaroce-ctl paths NAME [--json] [--watch[=SECONDS] | --last]\n"
	"       metaroce-ctl knobs\n"
	"       metaroce-ctl link help | --help | --version\n";

static const char usage_link[] =
	"\n"
	"Devices belong to the caller's network namespace; run programs with\n"
	"metaroce-run so that libibverbs sees them.\n"
	"\n"
	"link add NAME   create device NAME (1..63 of A-Z a-z 0-9 _ . -, not\n"
	"                starting with ., not rxe* or siw*: names other "
	"providers\n"
	"                claim)\n"
	"  --port DEVARGS  one port = one network plane, 1 to 8 of them: an\n"
	"                  interface name (veth0: net_mrpkt<N>,iface=veth0,\n"
	"                  lib/dp's AF_PACKET port with UDP GSO; gso=no for\n"
	"                  a peer on the af_packet PMD), a vdev\n"
	"                  (net_af_packet0,iface=veth0  net_af_xdp0,iface=..\n"
	"                  net_memif0,...  net_tap0,...) or a PCI address\n"
	"                  (0000:3b:00.0[,key=value...]), or service:SOCKET:\n"
	"                  the ports of metaroced serving SOCKET (every\n"
	"                  --port of the device then names it)\n"
	"    --gateway IP  after a --port the kernel does not see (PCI, "
	"memif):\n"
	"                  its plane's router; peers outside --ip's subnet "
	"are\n"
	"                  reached through it (else every peer is on-link);\n"
	"                  an IPv4 and an IPv6 one (link-local allowed) at "
	"most\n"
	"  --ip ADDR/LEN   IPv4 address and prefix length of the device "
	"(GID 1);\n"
	"                  again with an IPv6 address for a global GID 2 "
	"(GID 0\n"
	"                  is always the link-local fe80:: of the MAC)\n"
	"  --mac MAC       default: the MAC of the first iface= interface "
	"that\n"
	"                  exists here, else 02:00:<the four bytes of ADDR>\n"
	"  --mtu N         RoCE MTU 256|512|1024|2048|4096; default 4096, "
	"capped\n"
	"                  at what the iface= interfaces carry (netdev MTU - "
	"124)\n"
	"                  and at 2048 with an af_xdp port\n"
	"  --udp-port P    UDP destination port, default 4797 (not 4791)\n"
	"  --opt KNOB=VALUE  a tuning knob of the device (metaroce-ctl knobs)\n"
	"link set NAME --opt KNOB=VALUE   change knobs (KNOB= restores the\n"
	"                default); programs that open the device later see "
	"them\n"
	"link show [NAME] [-v] [--json]   devices, ports, address, MAC, MTU,\n"
	"                GIDs; -v: every knob in force and where it comes "
	"from\n"
	"                (default, device, environment of this command)\n"
	"  --persist       also record it in /etc/metaroce/NAME.conf, so that\n"
	"                  metaroce.service (link restore) creates it at boot\n"
	"link del NAME   remove the device and everything made for it\n"
	"  --persist       and its record in /etc/metaroce\n"
	"  --persisted     (no NAME) remove every device recorded there "
	"(the\n"
	"                  service's stop), keeping the records\n"
	"link restore    create every device recorded in /etc/metaroce "
	"that is\n"
	"                not there (metaroce.service's start)\n"
	"link gc         remove the /dev/infiniband nodes and views that "
	"network\n"
	"                namespaces gone without link del left behind (root)\n"
	"  --dry-run       only say what would be removed\n"
	"  --skip-pid PID  vouch that process PID holds none of our "
	"namespaces\n"
	"                  (gc refuses while a process cannot be "
	"inspected)\n"
	"stats NAME [--json | --prom] [--last]\n"
	"                live counters of a device in use, per process and "
	"summed\n"
	"                (per plane: packets, bytes, ECN marks, drops by "
	"reason, ARP;\n"
	"                engine: retransmissions, SACK holes, timeouts, "
	"NAKs, drops\n"
	"                by reason; per path: packets, losses, repaths);\n"
	"                --last: also those of the programs that ended "
	"last;\n"
	"                --prom: the sum in Prometheus's text format\n"
	"paths NAME [--json] [--watch[=SECONDS] | --last]\n"
	"                each live connection of the device and each of its "
	"paths:\n"
	"                plane, UDP source port, state, weight, RTT (min, "
	"smoothed),\n"
	"                RTO, in flight and window, ECN marks, losses; "
	"--watch: again\n"
	"                every SECONDS (1); --json: with ecn_frac and "
	"loss_frac\n"
	"\n"
	"knobs           every tuning knob: name, type, default, range, layer\n"
	"\n"
	"Environment: METAROCE_RUNDIR (default /run/metaroce) holds the "
	"views;\n"
	"METAROCE_CONFDIR (default /etc/metaroce) the persisted records;\n"
	"METAROCE_<KNOB> (upper case) overrides a knob for the programs "
	"started\n"
	"with it.\n";

#define die_usage mrctl_die_usage

static int fail(const char *msg)
{
	fprintf(stderr, "metaroce-ctl: %s\n", msg);
	return 1;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
		return -1;
	*v = strtoul(s, &end, 10);
	return *v > max ? -1 : 0;
}

static void check_ip(const char *s, uint32_t *ip, uint8_t *prefix)
{
	uint32_t host;

	if (mr_devconf_parse_ip(s, ip, prefix))
		die_usage("--ip '%s': expected an IPv4 address/prefix length "
			  "such as 192.0.2.1/24",
			  s);
	if (*prefix == 0)
		die_usage("--ip '%s': prefix length must be 1..32", s);
	if ((*ip >> 24) == 0 || (*ip >> 24) == 127 || (*ip >> 28) >= 14)
		die_usage("--ip '%s': not a unicast host address", s);
	host = *prefix == 32 ? 0 : *ip & (0xffffffffu >> *prefix);
	if (*prefix <= 30 && (host == 0 || host == (0xffffffffu >> *prefix)))
		die_usage("--ip '%s': the network or broadcast address of "
			  "its prefix",
			  s);
}

/*
 * Providers that claim devices by name. libibverbs asks every provider in
 * load order, and matches "rdma_device:N<name>" against each one's
 * table before our match_device is reached when that provider loads
 * first (installed providers load in the order of /etc/libibverbs.d).
 * rdma-core 44's rxe table has "rdma_device:*Nrxe*", its only name
 * match among the Debian 12 provider libraries (checked with strings);
 * siw matched "siw*" by name before rdma-core moved it to its kernel
 * driver id, and older installations still do.
 */
static const struct {
	const char *glob, *provider, *names;
} claimed_names[] = {
	{ "rdma_device:*Nrxe*", "rxe (Soft-RoCE)", "rxe*, *Nrxe*" },
	{ "rdma_device:*Nsiw*", "siw (Soft-iWARP)", "siw*, *Nsiw*" },
};

/* The claimed_names entry that would take name, or -1. */
static int claimed_by(const char *name)
{
	char alias[16 + MR_DEVCONF_NAME_MAX];

	snprintf(alias, sizeof(alias), "rdma_device:N%s", name);
	for (size_t i = 0; i < sizeof(claimed_names) / sizeof(claimed_names[0]);
	     i++)
		if (!fnmatch(claimed_names[i].glob, alias, 0))
			return (int)i;
	return -1;
}

static int cmd_add(int argc, char **argv)
{
	struct mrctl_port ports[MR_DEVCONF_MAX_PORTS];
	const char *name = NULL, *ip = NULL, *ip6 = NULL, *mac = NULL, *v;
	unsigned long mtu = 0, udp = MRCTL_DEFAULT_UDP;
	unsigned carried = 4096;
	const char *narrow = NULL;
	int have_mac = 0, claimed;
	struct mrctl_view view;
	struct mr_devconf c;
	char err[512];
	char pexp[MR_DEVCONF_ARGS_MAX];
	int ret;

	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "gateway", required_argument, NULL, 'g' },
		{ "ip", required_argument, NULL, 'i' },
		{ "mac", required_argument, NULL, 'm' },
		{ "mtu", required_argument, NULL, 'M' },
		{ "udp-port", required_argument, NULL, 'u' },
		{ "opt", required_argument, NULL, 'o' },
		{ "persist", no_argument, NULL, 'P' },
		{ 0 },
	};
	int o, persist = 0;

	memset(&c, 0, sizeof(c));
	mrctl_opt_begin("link add");
	while ((o = mrctl_getopt(argc, argv, "", lo)) != -1) {
		v = optarg;
		switch (o) {
		case 'p':
			if (c.nports == MR_DEVCONF_MAX_PORTS)
				die_usage("at most %d --port",
					  MR_DEVCONF_MAX_PORTS);
			if (mrctl_port_expand(v, c.nports, pexp, sizeof(pexp)))
				v = pexp;
			if (mrctl_port_parse(v, &ports[c.nports], err,
					     sizeof(err)))
				die_usage("%s", err);
			for (unsigned j = 0; j < c.nports; j++)
				if (!strcmp(ports[j].dev, ports[c.nports].dev))
					die_usage("--port %s given twice",
						  ports[j].dev);
			strcpy(c.ports[c.nports++], v);
			break;
		case 'g': {
			static const uint8_t none[16];
			char ip32[24];
			uint8_t plen;
			unsigned k = c.nports - 1;

			if (!c.nports)
				die_usage("--gateway IP follows the --port it "
					  "is for");
			if (strchr(v, ':')) {
				if (memcmp(c.gateway6[k], none, 16))
					die_usage("--gateway: one IPv6 gateway "
						  "per --port");
				if (mr_devconf_parse_gw6(v, c.gateway6[k]))
					die_usage("--gateway '%s': expected "
						  "the IPv6 address of the "
						  "plane's router",
						  v);
				break;
			}
			if (c.gateway[k])
				die_usage("--gateway: one IPv4 gateway per "
					  "--port");
			snprintf(ip32, sizeof(ip32), "%.15s/32", v);
			if (strlen(v) > 15 ||
			    mr_devconf_parse_ip(ip32, &c.gateway[k], &plen) ||
			    (c.gateway[k] >> 24) == 0 ||
			    (c.gateway[k] >> 24) == 127 ||
			    (c.gateway[k] >> 28) >= 14)
				die_usage("--gateway '%s': expected the IPv4 "
					  "or IPv6 address of the plane's "
					  "router",
					  v);
			break;
		}
		case 'i':
			if (strchr(v, ':')) {
				if (ip6)
					die_usage("--ip: one IPv6 address at "
						  "most");
				ip6 = v;
			} else {
				if (ip)
					die_usage("--ip: one IPv4 address at "
						  "most");
				ip = v;
			}
			break;
		case 'm':
			if (mac)
				die_usage("--mac given twice");
			mac = v;
			break;
		case 'M':
			if (parse_uint(v, 4096, &mtu) ||
			    (mtu != 256 && mtu != 512 && mtu != 1024 &&
			     mtu != 2048 && mtu != 4096))
				die_usage("--mtu '%s': must be 256, 512, 1024, "
					  "2048 or 4096",
					  v);
			break;
		case 'u':
			if (parse_uint(v, 65535, &udp) || !udp)
				die_usage("--udp-port '%s': must be 1..65535",
					  v);
			if (udp == ROCEV2_UDP)
				die_usage("--udp-port 4791 is RoCEv2's; "
					  "MetaRoCE needs a port of its own");
			break;
		case 'o':
			if (mr_knob_set_parse(&c.opts, v, "--opt", err,
					      sizeof(err)))
				die_usage("%s", err);
			break;
		case 'P':
			persist = 1;
			break;
		}
	}
	if (optind < argc)
		name = argv[optind++];
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!name)
		die_usage("link add: missing device NAME");
	/* A leading '.' would hide the device from listings of the view. */
	if (!mr_devconf_valid_name(name) || name[0] == '.')
		die_usage("invalid device name '%s' (1..63 of A-Z a-z 0-9 "
			  "_ . -, not starting with .)",
			  name);
	if ((claimed = claimed_by(name)) >= 0)
		die_usage("device name '%s' would be taken by rdma-core's %s "
			  "provider, which claims the names %s; choose "
			  "another, such as mr0",
			  name, claimed_names[claimed].provider,
			  claimed_names[claimed].names);
	if (!c.nports)
		die_usage("link add %s: at least one --port DEVARGS is needed",
			  name);
	if (ip6) {
		if (mr_devconf_parse_ip6(ip6, c.ip6, &c.prefix6))
			die_usage("--ip '%s': expected a global IPv6 "
				  "address/prefix length such as "
				  "2001:db8::1/64 (not link-local: the "
				  "device's own is made from its MAC)",
				  ip6);
		c.has_ip6 = 1;
	}
	if (!ip)
		die_usage("link add %s: --ip ADDR/LEN (IPv4) is needed", name);
	check_ip(ip, &c.ip, &c.prefix);
	if (mac && mr_devconf_parse_mac(mac, c.mac))
		die_usage("--mac '%s': expected a unicast MAC such as "
			  "02:00:c0:00:02:01",
			  mac);
	strcpy(c.name, name);
	c.udp_port = (uint16_t)udp;

	for (unsigned i = 0; i < c.nports; i++) {
		unsigned m;

		if (!ports[i].iface_exists)
			continue;
		m = mrctl_roce_mtu(ports[i].netdev_mtu);
		if (!m) {
			snprintf(err, sizeof(err),
				 "interface %s has MTU %u: "
				 "too small for MetaRoCE (needs at least %u)",
				 ports[i].iface, ports[i].netdev_mtu,
				 256 + MRCTL_HDR_OVERHEAD);
			return fail(err);
		}
		if (m < carried) {
			carried = m;
			narrow = ports[i].iface;
		}
		if (!mac && !have_mac && ports[i].has_mac) {
			memcpy(c.mac, ports[i].mac, 6);
			have_mac = 1;
		}
	}
	for (unsigned i = 0; i < c.nports; i++) {
		/* An AF_XDP frame lives in one page with the PMD's and XDP's
		 * headroom (lib/dp/mrdp_port.c): RoCE MTU 2048 at most. */
		if (ports[i].is_pci || strncmp(ports[i].dev, "net_af_xdp", 10))
			continue;
		if (mtu > MRCTL_AF_XDP_MAX_MTU) {
			snprintf(err, sizeof(err),
				 "--mtu %lu: an af_xdp port (%.40s) carries at "
				 "most RoCE MTU %u (a frame and its headroom "
				 "fit one page)",
				 mtu, ports[i].dev, MRCTL_AF_XDP_MAX_MTU);
			return fail(err);
		}
		if (carried > MRCTL_AF_XDP_MAX_MTU)
			carried = MRCTL_AF_XDP_MAX_MTU;
	}
	if (mtu && mtu > carried) {
		snprintf(err, sizeof(err),
			 "--mtu %lu: interface %s carries at "
			 "most RoCE MTU %u (netdev MTU minus %u bytes of "
			 "headers)",
			 mtu, narrow, carried, MRCTL_HDR_OVERHEAD);
		return fail(err);
	}
	c.mtu = mtu ? (uint32_t)mtu : carried;
	if (!mac && !have_mac) {
		c.mac[0] = 0x02; /* locally administered, unicast */
		c.mac[1] = 0x00;
		c.mac[2] = (uint8_t)(c.ip >> 24);
		c.mac[3] = (uint8_t)(c.ip >> 16);
		c.mac[4] = (uint8_t)(c.ip >> 8);
		c.mac[5] = (uint8_t)c.ip;
	}

	/* Refused before anything is made: a record persisted earlier is
	 * not overwritten. */
	if (persist && mrctl_persist_check(c.name, err, sizeof(err)))
		return fail(err);
	if (mrctl_view_open(&view, MRCTL_LOCK_CREATE, err, sizeof(err)))
		return fail(err);
	ret = mrctl_view_add(&view, &c, err, sizeof(err));
	if (!ret && persist && mrctl_persist_write(&c, err, sizeof(err))) {
		char err2[512];

		/* All or nothing: the device goes again. */
		mrctl_view_del(&view, c.name, err2, sizeof(err2));
		ret = -1;
	}
	mrctl_view_close(&view);
	if (ret)
		return fail(err);
	return 0;
}

/* The GID table as sysfs lists it, and each GID's address in text. */
static const char *const gid_kind_name[] = {
	[MR_GID_LINKLOCAL] = "link-local",
	[MR_GID_IPV4] = "ipv4",
	[MR_GID_GLOBAL6] = "ipv6",
};

static void gid_addr_str(const struct mr_devconf *c, const struct mr_gid *g,
			 char buf[46])
{
	if (g->kind == MR_GID_IPV4)
		snprintf(buf, 46, "%u.%u.%u.%u", c->ip >> 24,
			 (c->ip >> 16) & 255, (c->ip >> 8) & 255, c->ip & 255);
	else
		mr_devconf_ip6_str(g->raw, buf);
}

/* A view made by a metaroce-ctl from before the GID table changed: why
 * (mr_gid_view_check), else NULL. */
static const char *stale_view(const struct mrctl_view *v,
			      const struct mr_devconf *c, char *why, size_t len)
{
	char dir[PATH_MAX + 64];

	if (snprintf(dir, sizeof(dir), "%s/class/infiniband/%s", v->sysfs,
		     c->name) >= (int)sizeof(dir))
		return NULL;
	return mr_gid_view_check(dir, c, why, len) ? why : NULL;
}

static void print_text(const struct mrctl_view *v, const struct mr_devconf *c)
{
	char why[160];
	struct mr_gid gids[MR_GID_MAX];
	char guid[20], gid[40], a[46];
	unsigned n = mr_gid_table(c, gids);

	mrctl_guid_str(c, guid);
	printf("%s: node %s node_guid %s\n", c->name, c->uverbs, guid);
	printf("    ip %u.%u.%u.%u/%u mac %02x:%02x:%02x:%02x:%02x:%02x "
	       "mtu %u udp_port %u\n",
	       c->ip >> 24, (c->ip >> 16) & 255, (c->ip >> 8) & 255,
	       c->ip & 255, c->prefix, c->mac[0], c->mac[1], c->mac[2],
	       c->mac[3], c->mac[4], c->mac[5], c->mtu, c->udp_port);
	if (c->has_ip6) {
		mr_devconf_ip6_str(c->ip6, a);
		printf("    ip6 %s/%u\n", a, c->prefix6);
	}
	for (unsigned i = 0; i < c->nports; i++)
		printf("    port %u %s\n", i, c->ports[i]);
	/* The GID table (mr_gid.h), as ibv_devinfo -v shows it. */
	for (unsigned i = 0; i < n; i++) {
		mr_gid_sysfs(gids[i].raw, gid);
		gid_addr_str(c, &gids[i], a);
		printf("    gid %u %s RoCE v2 %s %s\n", i, gid,
		       gid_kind_name[gids[i].kind], a);
	}
	if (stale_view(v, c, why, sizeof(why)))
		printf("    stale view: %s (made by an older metaroce-ctl; "
		       "programs do not list the device): recreate it\n",
		       why);
}

/* The knobs a program started from here would run with. */
static int print_knobs(const struct mr_devconf *c)
{
	const struct mr_knob_def *defs = mr_knob_defs();
	struct mr_knobs k;
	char err[256], v[32];

	if (mr_knobs_resolve(&k, &c->opts, err, sizeof(err)))
		return fail(err);
	printf("    knobs (value, source):\n");
	for (int i = 0; i < MR_KNOBS_N; i++) {
		mr_knob_format(i, k.v[i], v, sizeof(v));
		printf("      %-14s %-8s %s%s%s\n", defs[i].name, v,
		       mr_knob_src_name(k.src[i]),
		       k.src[i] == MR_KNOB_SRC_ENV ? " " : "",
		       k.src[i] == MR_KNOB_SRC_ENV ? defs[i].env : "");
	}
	return 0;
}

/* One device as JSON; verbose: with its knobs in force (print_knobs). */
static struct json_object *dev_json(const struct mrctl_view *view,
				    const struct mr_devconf *c, int verbose)
{
	char why[160];
	struct json_object *o = json_object_new_object(), *a;
	struct mr_gid gids[MR_GID_MAX];
	char guid[20], buf[64];
	unsigned ngid = mr_gid_table(c, gids);

	mrctl_guid_str(c, guid);
	json_object_object_add(o, "name", json_object_new_string(c->name));
	json_object_object_add(o, "node", json_object_new_string(c->uverbs));
	a = json_object_new_array();
	for (unsigned i = 0; i < c->nports; i++)
		json_object_array_add(a, json_object_new_string(c->ports[i]));
	json_object_object_add(o, "ports", a);
	snprintf(buf, sizeof(buf), "%u.%u.%u.%u", c->ip >> 24,
		 (c->ip >> 16) & 255, (c->ip >> 8) & 255, c->ip & 255);
	json_object_object_add(o, "ip", json_object_new_string(buf));
	json_object_object_add(o, "prefixlen", json_object_new_int(c->prefix));
	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", c->mac[0],
		 c->mac[1], c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
	json_object_object_add(o, "mac", json_object_new_string(buf));
	json_object_object_add(o, "mtu", json_object_new_int((int)c->mtu));
	json_object_object_add(o, "udp_port", json_object_new_int(c->udp_port));
	json_object_object_add(o, "node_guid", json_object_new_string(guid));
	if (c->has_ip6) {
		char a6[46];

		mr_devconf_ip6_str(c->ip6, a6);
		json_object_object_add(o, "ip6", json_object_new_string(a6));
		json_object_object_add(o, "prefixlen6",
				       json_object_new_int(c->prefix6));
	}
	a = json_object_new_array();
	for (unsigned i = 0; i < ngid; i++) {
		struct json_object *g = json_object_new_object();
		char gid[40], ga[46];

		mr_gid_sysfs(gids[i].raw, gid);
		gid_addr_str(c, &gids[i], ga);
		json_object_object_add(g, "index", json_object_new_int((int)i));
		json_object_object_add(g, "gid", json_object_new_string(gid));
		json_object_object_add(g, "type",
				       json_object_new_string("RoCE v2"));
		json_object_object_add(
			g, "kind",
			json_object_new_string(gid_kind_name[gids[i].kind]));
		json_object_object_add(g, "addr", json_object_new_string(ga));
		json_object_array_add(a, g);
	}
	json_object_object_add(o, "gids", a);
	if (stale_view(view, c, why, sizeof(why)))
		json_object_object_add(o, "stale_view",
				       json_object_new_string(why));
	if (verbose) {
		const struct mr_knob_def *defs = mr_knob_defs();
		struct mr_knobs k;
		char err[256], v[32];

		/* Checked by the caller: cannot fail here. */
		mr_knobs_resolve(&k, &c->opts, err, sizeof(err));
		a = json_object_new_array();
		for (int i = 0; i < MR_KNOBS_N; i++) {
			struct json_object *e = json_object_new_object();

			mr_knob_format(i, k.v[i], v, sizeof(v));
			json_object_object_add(
				e, "name",
				json_object_new_string(defs[i].name));
			json_object_object_add(e, "value",
					       json_object_new_string(v));
			json_object_object_add(
				e, "source",
				json_object_new_string(
					mr_knob_src_name(k.src[i])));
			if (k.src[i] == MR_KNOB_SRC_ENV)
				json_object_object_add(
					e, "variable",
					json_object_new_string(defs[i].env));
			json_object_array_add(a, e);
		}
		json_object_object_add(o, "knobs", a);
	}
	return o;
}

static int cmd_show(int argc, char **argv)
{
	const char *name = NULL;
	struct mrctl_view view;
	struct mr_devconf *all;
	int json = 0, verbose = 0;
	char err[512];
	unsigned n;

	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ 0 },
	};
	int o;

	mrctl_opt_begin("link show");
	while ((o = mrctl_getopt(argc, argv, "jv", lo)) != -1) {
		if (o == 'j')
			json = 1;
		else
			verbose = 1;
	}
	if (optind < argc)
		name = argv[optind++];
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (name && !mr_devconf_valid_name(name))
		die_usage("invalid device name '%s'", name);
	if (verbose) {
		struct mr_knobs k;

		/* A bad variable: the error a program would get, first. */
		if (mr_knobs_resolve(&k, NULL, err, sizeof(err)))
			return fail(err);
	}
	if (mrctl_view_open(&view, MRCTL_LOCK_NONE, err, sizeof(err)) ||
	    mrctl_view_list(&view, name, &all, &n, err, sizeof(err)))
		return fail(err);
	if (json) {
		struct json_object *arr = json_object_new_array();

		for (unsigned i = 0; i < n; i++)
			json_object_array_add(
				arr, dev_json(&view, &all[i], verbose));
		puts(json_object_to_json_string_ext(
			arr,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
		json_object_put(arr);
		n = 0;
	}
	for (unsigned i = 0; i < n; i++) {
		{
			print_text(&view, &all[i]);
			if (verbose && print_knobs(&all[i])) {
				free(all);
				return 1;
			}
		}
	}
	free(all);
	return fflush(stdout) ? fail("cannot write output") : 0;
}

static int cmd_del(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "persist", no_argument, NULL, 'P' },
		{ "persisted", no_argument, NULL, 'A' },
		{ 0 },
	};
	struct mrctl_view view;
	int o, persist = 0, all = 0;
	const char *name;
	char err[512];
	int ret;

	mrctl_opt_begin("link del");
	while ((o = mrctl_getopt(argc, argv, "", lo)) != -1) {
		if (o == 'P')
			persist = 1;
		else
			all = 1;
	}
	argc -= optind;
	argv += optind;
	if (all) {
		if (argc || persist)
			die_usage("link del --persisted takes no NAME and no "
				  "--persist");
		return mrctl_persist_del_all();
	}
	if (argc != 1)
		die_usage(argc ? "link del takes one NAME"
			       : "link del: missing device NAME");
	name = argv[0];
	if (!mr_devconf_valid_name(name))
		die_usage("invalid device name '%s'", name);
	if (persist)
		return mrctl_persist_del(name);
	if (mrctl_view_open(&view, MRCTL_LOCK, err, sizeof(err)))
		return fail(err);
	ret = mrctl_view_del(&view, name, err, sizeof(err));
	mrctl_view_close(&view);
	return ret ? fail(err) : 0;
}

static int cmd_set(int argc, char **argv)
{
	struct mr_knob_set set = { 0 };
	const char *name = NULL, *v;
	struct mrctl_view view;
	uint64_t unset = 0;
	char err[512];
	int ret;

	static const struct option lo[] = {
		{ "opt", required_argument, NULL, 'o' },
		{ 0 },
	};

	mrctl_opt_begin("link set");
	while (mrctl_getopt(argc, argv, "", lo) != -1) {
		v = optarg;
		{
			size_t n = strlen(v);
			char kn[64];
			int id;

			/* KNOB= : back to the default. */
			if (n && v[n - 1] == '=' && n < sizeof(kn)) {
				memcpy(kn, v, n - 1);
				kn[n - 1] = 0;
				id = mr_knob_find(kn);
				if (id < 0)
					die_usage("--opt '%s': no knob named "
						  "%s (metaroce-ctl knobs "
						  "lists them)",
						  v, kn);
				unset |= 1ull << id;
				set.mask &= ~(1ull << id);
				continue;
			}
			if (mr_knob_set_parse(&set, v, "--opt", err,
					      sizeof(err)))
				die_usage("%s", err);
		}
	}
	if (optind < argc)
		name = argv[optind++];
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!name)
		die_usage("link set: missing device NAME");
	if (!mr_devconf_valid_name(name))
		die_usage("invalid device name '%s'", name);
	if (!set.mask && !unset)
		die_usage("link set %s: nothing to change (--opt KNOB=VALUE)",
			  name);
	if (mrctl_view_open(&view, MRCTL_LOCK, err, sizeof(err)))
		return fail(err);
	ret = mrctl_view_set_opts(&view, name, &set, unset, err, sizeof(err));
	mrctl_view_close(&view);
	return ret ? fail(err) : 0;
}

/* The range of row d as people read it. */
static void knob_range(const struct mr_knob_def *d, char *buf, size_t cap)
{
	if (d->type == MR_KNOB_BOOL)
		snprintf(buf, cap, "no/yes");
	else if (d->type == MR_KNOB_CHOICE)
		snprintf(buf, cap, "%s", d->choices);
	else
		snprintf(buf, cap, "%s%lld..%lld",
			 d->flags & MR_KNOB_F_ZERO_OFF ? "0," : "",
			 (long long)d->min, (long long)d->max);
}

/* The KNOBS entries of metaroce-ctl(8) (docs/man/fill.py). */
static void knobs_man(void)
{
	const struct mr_knob_def *d = mr_knob_defs();
	char def[32], range[160];

	for (int i = 0; i < MR_KNOBS_N; i++) {
		mr_knob_format(i, d[i].def, def, sizeof(def));
		knob_range(&d[i], range, sizeof(range));
		printf(".TP\n.BR %s \" (%s, default %s; %s%s)\"\n\\&%s.\n",
		       d[i].name, range, def, d[i].layer,
		       d[i].flags & MR_KNOB_F_PROCESS ? ", per process" : "",
		       d[i].help);
	}
}

/* The table of knobs, for people and for the README's check. */
static int cmd_knobs(int argc, char **argv)
{
	static const char *const types[] = { "uint", "int", "bool", "name" };
	static const struct option lo[] = {
		{ "man", no_argument, NULL, 'm' },
		{ 0 },
	};
	const struct mr_knob_def *d = mr_knob_defs();
	char def[32], range[160];
	int man = 0;

	mrctl_opt_begin("knobs");
	while (mrctl_getopt(argc, argv, "", lo) != -1)
		man = 1;
	if (optind < argc)
		die_usage("knobs takes no arguments");
	if (man) {
		knobs_man();
		return fflush(stdout) ? fail("cannot write output") : 0;
	}
	printf("%-14s %-5s %-7s %-18s %-8s %s\n", "KNOB", "TYPE", "DEFAULT",
	       "RANGE", "LAYER", "HELP");
	for (int i = 0; i < MR_KNOBS_N; i++) {
		mr_knob_format(i, d[i].def, def, sizeof(def));
		knob_range(&d[i], range, sizeof(range));
		printf("%-14s %-5s %-7s %-18s %-8s %s%s\n", d[i].name,
		       types[d[i].type], def, range, d[i].layer, d[i].help,
		       d[i].flags & MR_KNOB_F_PROCESS ? " (per process)" : "");
	}
	return fflush(stdout) ? fail("cannot write output") : 0;
}

static int is_help(const char *a)
{
	return !strcmp(a, "help") || !strcmp(a, "--help") || !strcmp(a, "-h");
}

int main(int argc, char **argv)
{
	/* The view is read by every user that runs verbs programs. */
	umask(022);
	if (argc < 2)
		die_usage("missing command");
	if (is_help(argv[1])) {
		fputs(usage_main, stdout);
		fputs(usage_link, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("metaroce-ctl %s\n", MR_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "stats"))
		return mrctl_cmd_stats(argc - 1, argv + 1);
	if (!strcmp(argv[1], "paths"))
		return mrctl_cmd_paths(argc - 1, argv + 1);
	if (!strcmp(argv[1], "knobs"))
		return cmd_knobs(argc - 1, argv + 1);
	if (strcmp(argv[1], "link")) {
		if (argv[1][0] == '-')
			die_usage("unknown option '%s'", argv[1]);
		die_usage("unknown command '%s'", argv[1]);
	}
	if (argc == 2 || !strcmp(argv[2], "show") || !strcmp(argv[2], "list"))
		return argc == 2 ? cmd_show(1, argv + 1)
				 : cmd_show(argc - 2, argv + 2);
	if (is_help(argv[2])) {
		fputs(usage_main, stdout);
		fputs(usage_link, stdout);
		return 0;
	}
	if (!strcmp(argv[2], "add"))
		return cmd_add(argc - 2, argv + 2);
	if (!strcmp(argv[2], "restore"))
		return mrctl_cmd_restore(argc - 2, argv + 2);
	if (!strcmp(argv[2], "set"))
		return cmd_set(argc - 2, argv + 2);
	if (!strcmp(argv[2], "gc"))
		return mrctl_cmd_gc(argc - 2, argv + 2);
	if (!strcmp(argv[2], "del") || !strcmp(argv[2], "delete"))
		return cmd_del(argc - 2, argv + 2);
	die_usage("unknown link command '%s'", argv[2]);
	return MRCTL_EXIT_USAGE;
}
