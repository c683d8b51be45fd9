/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ports (planes) and the buffer pool of a device: hot-plug the vdev of each
 * `port=` argument, one RX and one TX queue, mbufs big enough for a whole
 * frame of the record's MTU (one segment, so the engine writes a packet in
 * place and the receive path never stitches).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "mr_pci.h"
#include "mrdp_int.h"
#include "mrdp_svc_port.h"
#include "mrdp_pkt.h"

/* Bytes the kernel puts in front of a frame in a TPACKET_V2 ring slot
 * (tpacket2_hdr, sockaddr_ll, alignment): a received frame longer than
 * framesz minus this is truncated. */
#define AFP_RX_OVERHEAD 80
/* The PMD's TX slot overhead (TPACKET2_HDRLEN - sizeof(sockaddr_ll)). */
#define AFP_TX_OVERHEAD 32
/* Ring depth per direction, in payload bytes: a receiver descheduled for
 * a few scheduler ticks must not overflow (testbed.md: throughput = ring
 * depth / time off the CPU). 8 MiB = 2048 frames at RoCE MTU 4096; at
 * most 4096 frames (smaller MTUs: af_packet is bound by packets, about
 * 450,000 a second, and 4096 hold 9 ms of them). The rings are MAP_LOCKED by the PMD: RLIMIT_MEMLOCK must allow
 * them (root: unlimited).
 * Slot layout: a slot is the frame rounded up to 256 bytes and a block
 * holds 16 slots, so a block is a whole number of pages with no gap (the
 * PMD addresses slot i at i x framesz) and the ring holds no padding:
 * at MTU 4096 a slot is 4352 bytes, where the next power of two (8192)
 * doubled the pages every frame touches, and each page's first touch is
 * what costs (mrdp_warm.c). */
#define AFP_RING_PAYLOAD (8u << 20)
#define AFP_SLOT_ALIGN 256u
#define AFP_SLOTS_PER_BLOCK 16u
#define AFP_FRAMECNT_MIN 1024
#define AFP_FRAMECNT_MAX 4096

/*
 * AF_XDP: DPDK 22.11's PMD makes our mbuf pool the socket's UMEM (zero
 * copy between kernel and mbuf), one pool object = one UMEM chunk, and the
 * kernel takes chunks of 2 KiB up to one page only. It writes a received
 * frame XDP_PACKET_HEADROOM (256) bytes past the mbuf's own headroom, so
 * a page holds a frame of about 3.5 KiB: RoCE MTU 2048, never 4096.
 */
#define AFXDP_CHUNK_MIN 2048
#define AFXDP_HEADROOM 256 /* XDP_PACKET_HEADROOM of linux/bpf.h */
/* Mbufs the PMD parks in the fill ring per queue (2048 in 22.11) plus the
 * TX ring's: the pool must hold them on top of our own. */
#define AFXDP_POOL_EXTRA (2048 + MRDP_RING)
/* veth attaches an XDP program (without multi-buffer support, as libxdp's
 * default one) only while its peer's MTU leaves a frame, XDP's headroom and
 * the skb's shared info in one 4 KiB page: 4096 - 256 - 320 - 14. */
#define AFXDP_VETH_MAX_MTU 3506
#define AFXDP_VETH_MAX_MTU_S "3506"

static int is_af_packet(const char *args)
{
	return strncmp(args, "net_af_packet", 13) == 0 ||
	       strncmp(args, "eth_af_packet", 13) == 0;
}

static int is_af_xdp(const char *args)
{
	return strncmp(args, "net_af_xdp", 10) == 0 ||
	       strncmp(args, "eth_af_xdp", 10) == 0;
}

static unsigned afp_framesz(const struct mrdp_dev *d)
{
	unsigned need = (unsigned)d->max_frame + AFP_RX_OVERHEAD;

	return (need + AFP_SLOT_ALIGN - 1) / AFP_SLOT_ALIGN * AFP_SLOT_ALIGN;
}

static unsigned pool_room(const struct mrdp_dev *d, int *xdp)
{
	unsigned room = (unsigned)d->max_frame, i;

	*xdp = 0;
	for (i = 0; i < d->conf.nports; i++)
		if (is_af_xdp(d->conf.ports[i]))
			(*xdp)++;
	if (*xdp) {
		unsigned min = AFXDP_CHUNK_MIN -
			       (unsigned)sizeof(struct rte_mbuf) -
			       RTE_PKTMBUF_HEADROOM -
			       RTE_CACHE_LINE_ROUNDUP(
				       sizeof(struct rte_mempool_objhdr));

		room += AFXDP_HEADROOM;
		if (room < min)
			room = min;
	}

	/* af_packet refuses a queue whose mbufs cannot take a whole ring
	 * slot. */
	for (i = 0; i < d->conf.nports; i++)
		if (is_af_packet(d->conf.ports[i])) {
			char v[32];
			unsigned f = afp_framesz(d);

			if (mrdp_devarg(d->conf.ports[i], "framesz", v,
					sizeof(v)))
				f = (unsigned)strtoul(v, NULL, 10);
			if (f - AFP_TX_OVERHEAD > room)
				room = f - AFP_TX_OVERHEAD;
		}
	return (room + 63) / 64 * 64 + RTE_PKTMBUF_HEADROOM;
}

int mrdp_pool_create(struct mrdp_dev *d, unsigned seq, char *err, size_t errlen)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	int xdp;
	unsigned n, room = pool_room(d, &xdp);
	struct rte_mempool *mp;

	if (xdp) {
		uint32_t chunk = rte_mempool_calc_obj_size(
			(uint32_t)sizeof(struct rte_mbuf) + room,
			RTE_MEMPOOL_F_NO_IOVA_CONTIG, NULL);
		long page = sysconf(_SC_PAGESIZE);

		if (chunk > (uint32_t)page) {
			unsigned i, afp = 0;

			for (i = 0; i < d->conf.nports; i++)
				afp |= is_af_packet(d->conf.ports[i]);
			snprintf(err, errlen,
				 "%s: an AF_XDP port's buffers are at most one "
				 "page (%ld bytes) but RoCE MTU %u%s needs %u: "
				 "use mtu 2048 or less",
				 d->conf.name, page, d->conf.mtu,
				 afp ? " with af_packet ring slots" : "",
				 chunk);
			return -EINVAL;
		}
	}
	/* Descriptors of every queue + staged/backlogged frames + queued
	 * packets of unresolved peers + slack for the caches. */
	n = d->nplanes * (2 * MRDP_RING + MRDP_BACKLOG + MRDP_BURST) + 512;
	n += (unsigned)xdp * AFXDP_POOL_EXTRA;
	snprintf(name, sizeof(name), "mrdp%u", seq);
	/* Not IOVA-contiguous: the vdev PMDs copy, and it saves memory. */
	mp = rte_mempool_create_empty(
		name, n, sizeof(struct rte_mbuf) + room, 64,
		sizeof(struct rte_pktmbuf_pool_private), SOCKET_ID_ANY,
		RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (!mp)
		goto fail;
	/* A stack, not a ring: the buffer freed last is the next one taken,
	 * so the buffers in use stay the few hundred a round needs. Our
	 * threads are not EAL lcores and get no per-lcore cache; with a FIFO
	 * ring every frame took the least recently used buffer, the whole
	 * pool (about 24 MiB) was walked before any buffer came back, and
	 * each of its pages paid its first touch (mrdp_warm.c) during the
	 * first ~2,800 frames: ib_write_bw -n 200 measured 168-243 MB/s
	 * with the ring against 237-428 with the stack, interleaved in the
	 * same minutes (FINDINGS 10). */
	if (rte_mempool_set_ops_byname(mp, "stack", NULL) != 0) {
		rte_mempool_free(mp);
		goto fail;
	}
	{
		struct rte_pktmbuf_pool_private priv = {
			.mbuf_data_room_size = (uint16_t)room,
			.mbuf_priv_size = 0,
		};

		rte_pktmbuf_pool_init(mp, &priv);
	}
	if (rte_mempool_populate_default(mp) < 0) {
		rte_mempool_free(mp);
		goto fail;
	}
	/* The AF_XDP PMD registers the pool's first memory chunk, sized for
	 * every object, as the UMEM: objects elsewhere would not be in it. */
	if (xdp && mp->nb_mem_chunks != 1) {
		rte_mempool_free(mp);
		snprintf(err, errlen,
			 "%s: the buffers of an AF_XDP port must be in one "
			 "piece of memory (got %u); raise METAROCE_DP_MEM_MB",
			 d->conf.name, mp->nb_mem_chunks);
		return -ENOMEM;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	d->pool = mp;
	MRDP_LOG("%s: pool %u mbufs of %u bytes\n", d->conf.name, n, room);
	return 0;
fail:
	snprintf(err, errlen,
		 "cannot create a pool of %u buffers of %u bytes (%s); "
		 "raise METAROCE_DP_MEM_MB",
		 n, room, rte_strerror(rte_errno));
	return -ENOMEM;
}

void mrdp_pool_free(struct mrdp_dev *d)
{
	rte_mempool_free(d->pool);
	d->pool = NULL;
}

static int iface_mtu(const char *ifname)
{
	struct ifreq ifr;
	int s, ret;

	memset(&ifr, 0, sizeof(ifr));
	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return -EINVAL;
	strcpy(ifr.ifr_name, ifname);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	ret = ioctl(s, SIOCGIFMTU, &ifr) < 0 ? -errno : ifr.ifr_mtu;
	close(s);
	return ret;
}

/*
 * The devargs we probe: the name made unique in this process (so two
 * devices may both say net_af_packet0), and for af_packet the ring
 * geometry for the MTU when the record does not give it.
 */
static int build_devargs(struct mrdp_dev *d, unsigned idx, unsigned seq,
			 char *out, size_t cap, char *err, size_t errlen)
{
	const char *args = d->conf.ports[idx];
	const char *rest = strchr(args, ',');
	size_t nlen = rest ? (size_t)(rest - args) : strlen(args);
	struct mrdp_plane *p = &d->plane[idx];
	char base[48], v[64];
	int w;

	if (mr_pci_port_addr(args, base)) {
		/* A PCI device keeps its address as its name (EAL probed it
		 * from the allow-list, or rte_dev_probe plugs it again). */
		snprintf(p->vdev_name, sizeof(p->vdev_name), "%s", base);
		p->pci = 1;
		w = snprintf(out, cap, "%s%s", base, rest ? rest : "");
		if (w < 0 || (size_t)w >= cap)
			goto toolong;
		return 0;
	}
	if (nlen == 0 || nlen >= sizeof(base)) {
		snprintf(err, errlen, "port '%s': bad device name", args);
		return -EINVAL;
	}
	memcpy(base, args, nlen);
	base[nlen] = 0;
	/* vdev drivers match by name prefix: keep the driver part, drop the
	 * instance number, append ours. */
	while (nlen > 0 && base[nlen - 1] >= '0' && base[nlen - 1] <= '9')
		base[--nlen] = 0;
	if (snprintf(p->vdev_name, sizeof(p->vdev_name), "%.40s_mr%up%u", base,
		     seq % 100000, idx) >= (int)sizeof(p->vdev_name))
		goto toolong;
	w = snprintf(out, cap, "%s%s", p->vdev_name, rest ? rest : "");
	if (w < 0 || (size_t)w >= cap)
		goto toolong;
	if (is_af_packet(args) || is_af_xdp(args)) {
		int mtu;

		if (!mrdp_devarg(args, "iface", v, sizeof(v))) {
			snprintf(err, errlen,
				 "port '%s': %s needs iface=<interface>", args,
				 is_af_xdp(args) ? "af_xdp" : "af_packet");
			return -EINVAL;
		}
		mtu = iface_mtu(v);
		if (mtu < 0) {
			snprintf(err, errlen,
				 "port '%s': no interface '%s' "
				 "in this network namespace",
				 args, v);
			return -ENODEV;
		}
		if ((size_t)mtu + MRDP_ETH_LEN < d->max_frame) {
			snprintf(err, errlen,
				 "interface %s has MTU %d but RoCE MTU %u "
				 "needs %zu: raise it (ip link set %s mtu "
				 "%s) or lower the record's mtu",
				 v, mtu, d->conf.mtu,
				 d->max_frame - MRDP_ETH_LEN, v,
				 is_af_xdp(args) ? "3000" : "9000");
			return -EINVAL;
		}
	}
	if (is_af_packet(args)) {
		unsigned need = (unsigned)d->max_frame + AFP_RX_OVERHEAD;
		if (mrdp_devarg(args, "framesz", v, sizeof(v))) {
			if (strtoul(v, NULL, 10) < need) {
				snprintf(err, errlen,
					 "port '%s': framesz %s too small "
					 "for RoCE MTU %u (need %u)",
					 args, v, d->conf.mtu, need);
				return -EINVAL;
			}
		} else {
			unsigned f = afp_framesz(d);

			w += snprintf(out + w, cap - (size_t)w, ",framesz=%u",
				      f);
			if (!mrdp_devarg(args, "blocksz", v, sizeof(v)))
				w += snprintf(out + w, cap - (size_t)w,
					      ",blocksz=%u",
					      f * AFP_SLOTS_PER_BLOCK);
		}
		if (!mrdp_devarg(args, "framecnt", v, sizeof(v))) {
			unsigned n = AFP_RING_PAYLOAD / d->conf.mtu;
			unsigned f = afp_framesz(d),
				 b = f * AFP_SLOTS_PER_BLOCK;
			unsigned per;

			if (mrdp_devarg(args, "framesz", v, sizeof(v))) {
				f = (unsigned)strtoul(v, NULL, 10);
				b = 4096; /* the PMD's default: one page */
			}
			if (mrdp_devarg(args, "blocksz", v, sizeof(v)))
				b = (unsigned)strtoul(v, NULL, 10);
			/* The kernel wants framecnt = slots per block x
			 * blocks. */
			per = f && b >= f ? b / f : 1;
			if (n > AFP_FRAMECNT_MAX)
				n = AFP_FRAMECNT_MAX;
			if (n < AFP_FRAMECNT_MIN)
				n = AFP_FRAMECNT_MIN;
			n = (n + per - 1) / per * per;
			w += snprintf(out + w, cap - (size_t)w, ",framecnt=%u",
				      n);
		}
		if ((size_t)w >= cap)
			goto toolong;
	}
	if (is_af_xdp(args) &&
	    !mrdp_devarg(args, "busy_budget", v, sizeof(v))) {
		/* The PMD's default "preferred busy polling" keeps the
		 * kernel from serving the queue unless we busy-poll it; our
		 * progress thread sleeps when idle, and each frame waited
		 * for a kernel timer (8.8 ms per ibv_rc_pingpong round trip
		 * against 1.2 ms without). */
		w += snprintf(out + w, cap - (size_t)w, ",busy_budget=0");
		if ((size_t)w >= cap)
			goto toolong;
	}
	if (strncmp(args, "net_memif", 9) == 0) {
		/* A frame longer than a memif buffer is chained, and DPDK
		 * 22.11 corrupted such frames between two processes (seen in
		 * tests/dp): give every frame one buffer. Deep rings, as for
		 * af_packet. */
		if (!mrdp_devarg(args, "bsize", v, sizeof(v))) {
			unsigned b = 2048;

			while (b < d->max_frame)
				b <<= 1;
			w += snprintf(out + w, cap - (size_t)w, ",bsize=%u", b);
		} else if (strtoul(v, NULL, 10) < d->max_frame) {
			snprintf(err, errlen,
				 "port '%s': bsize %s is smaller than a frame "
				 "of RoCE MTU %u (%zu)",
				 args, v, d->conf.mtu, d->max_frame);
			return -EINVAL;
		}
		if (!mrdp_devarg(args, "rsize", v, sizeof(v)))
			w += snprintf(out + w, cap - (size_t)w, ",rsize=11");
		if ((size_t)w >= cap)
			goto toolong;
	}
	return 0;
toolong:
	snprintf(err, errlen, "port '%s': arguments too long", args);
	return -EINVAL;
}

/* The PMD could not make its AF_XDP socket: libbpf/libxdp printed the
 * kernel's reason; say what to do about the one we see on veth. */
static int xsk_refused(const struct mrdp_dev *d, unsigned idx, char *err,
		       size_t errlen)
{
	const char *args = d->conf.ports[idx];
	char ifn[IF_NAMESIZE + 1] = "?";
	int mtu;

	mrdp_devarg(args, "iface", ifn, sizeof(ifn));
	mtu = iface_mtu(ifn);
	snprintf(err, errlen,
		 "port '%s': the kernel refused AF_XDP on %s (reason "
		 "above)%s",
		 args, ifn,
		 mtu > AFXDP_VETH_MAX_MTU ? "; veth takes XDP only with both "
					    "ends' MTU <= " AFXDP_VETH_MAX_MTU_S
					    " (use 3000)"
					  : "");
	return -EIO;
}

int mrdp_port_open(struct mrdp_dev *d, unsigned idx, unsigned seq, char *err,
		   size_t errlen)
{
	struct mrdp_plane *p = &d->plane[idx];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_eth_txconf txc;
	char devargs[MR_DEVCONF_ARGS_MAX + 128];
	uint16_t port;
	int ret;

	if (mrdp_svc_is_port(d->conf.ports[idx]))
		return mrdp_svc_port_open(d, idx, d->steer_slot, err, errlen);
	if (mrdp_pkt_is(d->conf.ports[idx]))
		return mrdp_pkt_port_open(d, idx, err, errlen);
	ret = build_devargs(d, idx, seq, devargs, sizeof(devargs), err, errlen);
	if (ret)
		return ret;
	{
		char ifname[IF_NAMESIZE + 1];
		const char *ifn = NULL;

		if (is_af_packet(d->conf.ports[idx]) &&
		    mrdp_devarg(d->conf.ports[idx], "iface", ifname,
				sizeof(ifname)))
			ifn = ifname;
		mrdp_wait_probe_begin(p, ifn, 0);
		/* EAL probed allow-listed PCI devices at its start; a device
		 * closed since (unplugged) is probed again. */
		if (p->pci &&
		    rte_eth_dev_get_port_by_name(p->vdev_name, &port) == 0)
			ret = 0;
		else
			ret = rte_dev_probe(devargs);
		if (ret >= 0)
			mrdp_wait_probe_end(p);
	}
	if (ret < 0 && p->pci) {
		snprintf(
			err, errlen,
			"port '%s': DPDK could not open it (%s): no PMD of "
			"this build (virtio, e1000/igb, igc, ixgbe, i40e, ice, "
			"iavf, vmxnet3) takes it, or its device arguments are "
			"wrong",
			d->conf.ports[idx], strerror(-ret));
		return -ENODEV;
	}
	if (ret < 0) {
		snprintf(err, errlen, "port '%s': DPDK could not open it (%s)",
			 d->conf.ports[idx], strerror(-ret));
		return -ENODEV;
	}
	p->open = 1;
	if (rte_eth_dev_get_port_by_name(p->vdev_name, &port) != 0) {
		snprintf(err, errlen, "port '%s' is not an Ethernet device",
			 d->conf.ports[idx]);
		return -ENODEV;
	}
	p->port_id = port;
	ret = rte_eth_dev_info_get(port, &info);
	if (ret)
		goto eio;
	memset(&conf, 0, sizeof(conf));
	/* Zero-copy transmit hands the port chained mbufs (mrdp_io.c):
	 * ethdev wants that asked for where it is offered. */
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	if ((info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) &&
	    (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_UDP_CKSUM)) {
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
					RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
		p->tx_csum_offload = 1;
	}
	if ((info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) &&
	    (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_UDP_CKSUM)) {
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM |
					RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
		p->rx_csum_offload = 1;
	}
	/* af_packet takes any frame its ring slot holds, AF_XDP any its
	 * UMEM chunk holds (the pool was sized for it) and memif chains
	 * buffers for a long frame: they ignore the ethdev MTU (the
	 * interface's was checked above). Other PMDs must be told the frame
	 * size. */
	if (!is_af_packet(d->conf.ports[idx]) &&
	    !is_af_xdp(d->conf.ports[idx]) &&
	    strncmp(d->conf.ports[idx], "net_memif", 9) != 0 &&
	    d->max_frame - MRDP_ETH_LEN > RTE_ETHER_MTU) {
		if (d->max_frame > info.max_rx_pktlen) {
			snprintf(err, errlen,
				 "port '%s' carries frames up to %u bytes; "
				 "RoCE MTU %u needs %zu",
				 d->conf.ports[idx], info.max_rx_pktlen,
				 d->conf.mtu, d->max_frame);
			return -EINVAL;
		}
		conf.rxmode.mtu = (uint32_t)(d->max_frame - MRDP_ETH_LEN);
	}
	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret)
		goto eio;
	{
		uint16_t nrx = MRDP_RING, ntx = MRDP_RING;

		ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
		if (ret)
			goto eio;
		/* AF_XDP creates its socket here (AF_PACKET at probe). */
		if (is_af_xdp(d->conf.ports[idx]))
			mrdp_wait_probe_begin(p, NULL, 1);
		ret = rte_eth_rx_queue_setup(port, 0, nrx, SOCKET_ID_ANY, NULL,
					     d->pool);
		if (ret && is_af_xdp(d->conf.ports[idx]))
			return xsk_refused(d, idx, err, errlen);
		if (ret)
			goto eio;
		if (is_af_xdp(d->conf.ports[idx]))
			mrdp_wait_probe_end(p);
		txc = info.default_txconf;
		txc.offloads = conf.txmode.offloads;
		ret = rte_eth_tx_queue_setup(port, 0, ntx, SOCKET_ID_ANY, &txc);
		if (ret)
			goto eio;
	}
	ret = rte_eth_dev_start(port);
	if (ret)
		goto eio;
	if (p->pci) {
		/* A NIC filters unicast frames by its own MAC; the record's
		 * (from --mac, or made from the address) may differ. */
		struct rte_ether_addr mac;

		memcpy(mac.addr_bytes, d->conf.mac, 6);
		if (rte_eth_dev_mac_addr_add(port, &mac, 0) != 0 &&
		    rte_eth_promiscuous_enable(port) != 0) {
			snprintf(err, errlen,
				 "port '%s' neither takes the device's MAC "
				 "nor promiscuous mode",
				 d->conf.ports[idx]);
			return -EIO;
		}
	}
	p->started = 1;
	/* af_packet's rings: the socket the progress thread sleeps on
	 * (mrdp_wait.c) is the one that maps them. */
	if (is_af_packet(d->conf.ports[idx]) && p->wait_fd >= 0) {
		uint64_t t0 = mrdp_now();
		long n = mrdp_warm_mapping(p->wait_fd);

		MRDP_LOG("%s: plane %u: %ld ring pages touched in %llu us\n",
			 d->conf.name, idx, n,
			 (unsigned long long)(mrdp_now() - t0) / 1000);
	}
	MRDP_LOG("%s: plane %u = %s (port %u)%s\n", d->conf.name, idx, devargs,
		 port, p->tx_csum_offload ? " csum offload" : "");
	return 0;
eio:
	snprintf(err, errlen, "port '%s': setup failed (%s)",
		 d->conf.ports[idx], strerror(ret < 0 ? -ret : ret));
	return -EIO;
}

void mrdp_port_close(struct mrdp_dev *d, unsigned idx)
{
	struct mrdp_plane *p = &d->plane[idx];

	if (p->svc) {
		mrdp_svc_port_close(d, idx);
		return;
	}
	if (p->pkt) {
		mrdp_pkt_close(p->pkt);
		p->pkt = NULL;
		p->started = 0;
		p->wait_fd = -1;
		return;
	}
	if (p->started)
		rte_eth_dev_stop(p->port_id);
	p->started = 0;
	if (p->open) {
		uint16_t port;

		if (rte_eth_dev_get_port_by_name(p->vdev_name, &port) == 0)
			rte_eth_dev_close(port);
		/* Unplug so the name can be probed again by a later open. */
		rte_eal_hotplug_remove(p->pci ? "pci" : "vdev", p->vdev_name);
	}
	p->open = 0;
}
