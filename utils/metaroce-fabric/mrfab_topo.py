# SPDX-License-Identifier: BSD-2-Clause
"""The plan of a fabric (namespaces, interfaces, addresses, routes) made
from its configuration, and the commands that build it. docs/fabric.md
describes the addressing; the datapath's side of it is docs/spec
routing.md (MR-ROUTE-*)."""

from mrfab_config import cables


def host_index(f, host):
    return [h for h, _ in f.hosts].index(host) + 1


def device_ip(f, host):
    """The one address of a host's MetaRoCE device, reachable through
    every plane (MR-ROUTE-1)."""
    return "10.200.0.%d" % host_index(f, host)


def mgmt_ip(f, host):
    return "10.254.%d.1" % host_index(f, host)


def port_ip(f, host, plane):
    return "10.%d.%d.1" % (100 + plane, host_index(f, host))


def port_gw(f, host, plane):
    return "10.%d.%d.254" % (100 + plane, host_index(f, host))


# IPv6 (ipv6 yes): the same plan in fd00::/16, the IPv4 address's numbers
# as the groups (docs/fabric.md).
def device_ip6(f, host):
    return "fd00:200::%d" % host_index(f, host)


def port_ip6(f, host, plane):
    return "fd00:%d:%d::1" % (100 + plane, host_index(f, host))


def port_gw6(f, host, plane):
    return "fd00:%d:%d::fe" % (100 + plane, host_index(f, host))


def uplink_ips6(plane, leaf, spine):
    base = "fd00:%d:%d:%d::" % (110 + plane, leaf, spine)
    return base + "1", base + "2"


def uplink_ips(plane, leaf, spine):
    """(leaf side, spine side) of a leaf-spine /30."""
    base = "10.%d.%d." % (110 + plane, leaf)
    return base + str(4 * spine + 1), base + str(4 * spine + 2)


def ns_of(f, node, plane):
    """Namespace of a node: hosts <name>-<host>, routers <name>-p<P><l|s>N,
    the management router <name>-mgmt."""
    if node == "mgmt":
        return "%s-mgmt" % f.name
    if node[0] in "ls" and node[1:].isdigit():
        return "%s-p%d%s" % (f.name, plane, node)
    return "%s-%s" % (f.name, node)


def is_router(node):
    return node[0] in "ls" and node[1:].isdigit()


def ifname(node, peer, plane):
    """Interface of node toward peer: a host's plane port is p<P>, its
    management port mg; a router's interface is named after the peer."""
    if not is_router(node) and node != "mgmt":
        return "mg" if peer == "mgmt" else "p%d" % plane
    return peer


def namespaces(f):
    out = [ns_of(f, h, 0) for h, _ in f.hosts] + [ns_of(f, "mgmt", 0)]
    for p in range(1, f.planes + 1):
        out += [ns_of(f, "l%d" % l, p) for l in range(1, f.leaves + 1)]
        if f.leaves > 1:
            out += [ns_of(f, "s%d" % s, p) for s in range(1, f.spines + 1)]
    return out


def build_steps(f):
    """[(namespace, [ip -batch lines])] after every namespace exists, and
    the veth pairs as (ns_a, if_a, ns_b, if_b). Routers forward and hash
    ECMP on L4 (fib_multipath_hash_policy=1) and do not filter by reverse
    path (a device's address is not on the subnet it sends from)."""
    veths = []
    cmds = {ns: ["link set lo up"] for ns in namespaces(f)}
    sysctl = {}
    for ns in namespaces(f):
        if not ns.endswith(tuple("-" + h for h, _ in f.hosts)):
            sysctl[ns] = ["net.ipv4.ip_forward=1",
                          "net.ipv4.fib_multipath_hash_policy=1",
                          "net.ipv4.conf.all.rp_filter=0",
                          "net.ipv4.conf.default.rp_filter=0"]
            if f.ipv6:
                sysctl[ns] += ["net.ipv6.conf.all.forwarding=1",
                               "net.ipv6.fib_multipath_hash_policy=1"]

    def veth(na, a, pa, nb, b, pb, ipa, ipb, plen, v6=None):
        nsa, nsb = ns_of(f, na, pa), ns_of(f, nb, pb)
        ia, ib = ifname(na, nb, pa), ifname(nb, na, pb)
        veths.append((nsa, ia, nsb, ib))
        for ns, i, ip in ((nsa, ia, ipa), (nsb, ib, ipb)):
            cmds[ns] += ["link set dev %s mtu %d up" % (i, f.mtu),
                         "addr add %s/%d dev %s" % (ip, plen, i)]
        if v6:
            # nodad: usable at once (DAD would hold them a second or two).
            for ns, i, ip in ((nsa, ia, v6[0]), (nsb, ib, v6[1])):
                cmds[ns].append("addr add %s/64 dev %s nodad" % (ip, i))

    for h, leaf in f.hosts:
        veth(h, None, 0, "mgmt", None, 0, mgmt_ip(f, h),
             mgmt_ip(f, h)[:-1] + "254", 24)
        hns = ns_of(f, h, 0)
        cmds[hns].append("route add default via %s dev mg"
                         % (mgmt_ip(f, h)[:-1] + "254"))
        hops, hops6 = [], []
        for p in range(1, f.planes + 1):
            veth(h, None, p, "l%d" % leaf, None, p, port_ip(f, h, p),
                 port_gw(f, h, p), 24,
                 (port_ip6(f, h, p), port_gw6(f, h, p)) if f.ipv6 else None)
            hops.append("nexthop via %s dev p%d weight 1"
                        % (port_gw(f, h, p), p))
            hops6.append("nexthop via %s dev p%d weight 1"
                         % (port_gw6(f, h, p), p))
            # The other hosts' ports on this plane, through this plane
            # (ping, traceroute and the kernel's own traffic).
            cmds[hns].append("route add 10.%d.0.0/16 via %s dev p%d"
                             % (100 + p, port_gw(f, h, p), p))
            if f.ipv6:
                cmds[hns].append("route add fd00:%d::/32 via %s dev p%d"
                                 % (100 + p, port_gw6(f, h, p), p))
        # Every device address through every plane: the kernel's table is
        # where the datapath reads each plane's next hop (MR-ROUTE-2,
        # MR-ADDR-4).
        cmds[hns].append("route add 10.200.0.0/24 " + " ".join(hops))
        if f.ipv6:
            cmds[hns].append("route add fd00:200::/64 " + " ".join(hops6))

    for p in range(1, f.planes + 1):
        if f.leaves > 1:
            for l in range(1, f.leaves + 1):
                for s in range(1, f.spines + 1):
                    a, b = uplink_ips(p, l, s)
                    veth("l%d" % l, None, p, "s%d" % s, None, p, a, b, 30,
                         uplink_ips6(p, l, s) if f.ipv6 else None)
        for h, leaf in f.hosts:
            dst = [(device_ip(f, h) + "/32",
                    "10.%d.%d.0/24" % (100 + p, host_index(f, h)),
                    uplink_ips)]
            if f.ipv6:
                dst.append((device_ip6(f, h) + "/128",
                            "fd00:%d:%d::/64" % (100 + p, host_index(f, h)),
                            uplink_ips6))
            for dev_ip, subnet, up in dst:
                for l in range(1, f.leaves + 1):
                    lns = ns_of(f, "l%d" % l, p)
                    if l == leaf:
                        # On-link: the leaf asks ARP (ND) for the device
                        # address and the device answers on that plane.
                        cmds[lns].append("route add %s dev %s scope link"
                                         % (dev_ip, h))
                        continue
                    hops = " ".join("nexthop via %s dev s%d weight 1"
                                    % (up(p, l, s)[1], s)
                                    for s in range(1, f.spines + 1))
                    for d in (dev_ip, subnet):
                        cmds[lns].append("route add %s %s" % (d, hops))
                if f.leaves > 1:
                    for s in range(1, f.spines + 1):
                        sns = ns_of(f, "s%d" % s, p)
                        for d in (dev_ip, subnet):
                            cmds[sns].append(
                                "route add %s via %s dev l%d"
                                % (d, up(p, leaf, s)[0], leaf))
    return veths, sysctl, cmds


def directions(f):
    """Every link direction: (direction name, cable name, sender,
    receiver, plane, namespace, interface, hook). The hook is where the
    sender's traffic can be shaped: a router's egress; for a host's own
    traffic (af_packet transmit bypasses the host's qdiscs) the ingress of
    the router it enters."""
    out = []
    for cable, p, a, b in cables(f):
        for snd, rcv in ((a, b), (b, a)):
            d = "p%d/%s>%s" % (p, snd, rcv)
            if is_router(snd):
                out.append((d, cable, snd, rcv, p, ns_of(f, snd, p),
                            ifname(snd, rcv, p), "egress"))
            else:
                out.append((d, cable, snd, rcv, p, ns_of(f, rcv, p),
                            ifname(rcv, snd, p), "ingress"))
    return out
