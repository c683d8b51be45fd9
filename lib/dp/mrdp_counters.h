/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The datapath's counters, each named once with one line of help: the
 * drop reasons (the enums), a plane's counters and the device's. The
 * structs (mrdp.h), the stats file's JSON (mrdp_stats.c) and the help of
 * metaroce-ctl stats --prom are all made from these tables: a new counter
 * is one row. No DPDK type (metaroce-ctl includes it).
 */
#ifndef MRDP_COUNTERS_H
#define MRDP_COUNTERS_H

/* Why received frames were dropped by the datapath: X(ID, name, help). */
#define MRDP_RX_DROPS(X)                                                   \
	X(SHORT, short, "shorter than its headers say")                    \
	X(TRUNCATED, truncated,                                            \
	  "a MetaRoCE frame cut short by the port (longer than its ring "  \
	  "slot: a peer's UDP GSO super-frame?)")                          \
	X(NOT_IPV4, not_ipv4, "other ethertype (VLAN, LLDP, ...): not IP") \
	X(NOT_OURS, not_ours,                                              \
	  "not for our address, UDP port or MAC (host traffic)")           \
	X(IP_HDR, ip_header, "bad IP version, header length, fragment")    \
	X(IP_CSUM, ip_checksum, "IPv4 header checksum wrong")              \
	X(UDP_CSUM, udp_checksum, "UDP checksum wrong")                    \
	X(ARP, arp, "ARP or IPv6 ND not about us, or malformed")           \
	X(ENGINE, engine, "passed to the engine, which refused it")

/* Why packets to send were dropped by the datapath. */
#define MRDP_TX_DROPS(X)                                                  \
	X(NO_MBUF, no_buffer, "buffer pool empty")                        \
	X(NEIGH_FULL, neighbour_queue_full,                               \
	  "queue of unresolved packets or neighbour table full")          \
	X(NEIGH_FAIL, neighbour_unreachable, "peer did not answer ARP")   \
	X(BAD_DEST, bad_destination, "dest id 0, multicast or broadcast") \
	X(PORT, port, "the port refused the frame")                       \
	X(NO_ROUTE, no_route, "no route to the peer on the plane (MR-ROUTE-6)")

#define MRDP_DROP_ENUM(id, name, help) MRDP_RXD_##id,
enum mrdp_rx_drop { MRDP_RX_DROPS(MRDP_DROP_ENUM) MRDP_RXD_MAX };
#undef MRDP_DROP_ENUM
#define MRDP_DROP_ENUM(id, name, help) MRDP_TXD_##id,
enum mrdp_tx_drop { MRDP_TX_DROPS(MRDP_DROP_ENUM) MRDP_TXD_MAX };
#undef MRDP_DROP_ENUM

/*
 * A plane's counters. X(name, help): one; XO(name, DROPS, n, help): n
 * counters by reason, written as an object {"<reason name>": N, ...}.
 */
#define MRDP_PLANE_COUNTERS(X, XO)                                            \
	X(rx_pkts, "MetaRoCE packets handed to the engine")                   \
	X(rx_bytes, "their frame bytes")                                      \
	X(tx_pkts, "MetaRoCE frames accepted by the port")                    \
	X(tx_bytes, "their frame bytes")                                      \
	X(rx_ecn_ce, "MetaRoCE packets received with CE")                     \
	X(rx_frames, "every frame polled from the port")                      \
	X(arp_req_rx, "ARP requests received")                                \
	X(arp_req_tx, "ARP requests sent")                                    \
	X(arp_reply_rx, "ARP replies received")                               \
	X(arp_reply_tx, "ARP replies sent")                                   \
	X(steered, "1: the kernel filters the plane's socket to our QPNs")    \
	X(zerocopy, "1: the plane sends zero-copy frames")                    \
	X(tx_zc_pkts, "zero-copy frames handed to the port")                  \
	X(tx_zc_linearized, "frames made contiguous: refused by the port, "   \
			    "waiting for ARP, loopback, or no zero-copy")     \
	X(tx_gso_frames, "UDP GSO super-frames sent (net_mrpkt)")             \
	X(tx_gso_segs, "frames sent inside them")                             \
	X(tx_calls, "send system calls of a net_mrpkt port")                  \
	X(tx_held, "frames that waited for later ones (dp_tx_hold_us)")      \
	X(tx_hold_flushes, "bursts of held frames sent at their deadline")    \
	X(rx_gso_frames, "UDP GSO super-frames received (net_mrpkt)")         \
	X(rx_gso_segs, "frames split out of them")                            \
	X(rx_calls, "receive system calls of a net_mrpkt port")               \
	X(rx_gso_bad, "received frames a net_mrpkt port could not take "      \
		      "(truncated, malformed, no buffer)")                    \
	X(rx_ring_drops, "frames the kernel dropped with a net_mrpkt ring "   \
			 "full (PACKET_STATISTICS)")                          \
	X(rx_blocks, "receive blocks of a net_mrpkt rx=block port walked "   \
		     "(one wake-up takes a block)")                           \
	X(rx_hold_starts, "receive holds begun: a one-way stream in, the "   \
			  "socket's per-frame wake-up off (dp_rx_hold_us)")   \
	X(rx_hold_periods, "hold periods ended (one wake-up each for all "  \
			   "their frames)")                                   \
	X(rx_hold_frames, "frames received while held")                      \
	XO(rx_drop, MRDP_RX_DROPS, MRDP_RXD_MAX, "frames dropped on receive") \
	XO(tx_drop, MRDP_TX_DROPS, MRDP_TXD_MAX, "packets dropped on send")

/* The device's own counters, X(name, help). */
#define MRDP_DEV_COUNTERS(X)                                              \
	X(loopback_pkts, "packets to our own address")                    \
	X(neigh_entries, "neighbour table size now")                      \
	X(neigh_resolved, "neighbour entries resolved")                   \
	X(route_reloads, "kernel route tables read again after a change " \
			 "(MR-ROUTE-5)")                                  \
	X(progress_rounds, "rounds with work, any thread")                \
	X(inline_rounds, "of which by the application's threads")         \
	X(sleeps, "progress thread idle sleeps")                          \
	X(lease_sleeps, "of which while an application waited in "        \
			"poll_cq, frames not waking it (the lease)")      \
	X(lease_expired, "leases the thread ended: the application "      \
			 "stopped polling without a word")                \
	X(wake_frame, "progress thread wake-ups by a frame")              \
	X(wake_kick, "by a kick (work posted, a hand-off)")               \
	X(wake_timer, "by its own timer (a deadline, the lease guard)")   \
	X(spins, "rounds of its spin after work (dp_spin_us, SCHED_OTHER)") \
	X(spin_cut_memory, "spins not begun: an application spins on its " \
			   "memory (dp_spin_memory_ms)")                  \
	X(spin_cut_crowd, "spins ended: sched_yield gave the CPU away "   \
			  "longer than dp_spin_crowd_us, or no spare CPU " \
			  "(dp_spin_spare_cpu)")                          \
	X(zc_outlived, "rounds after which an mbuf still referenced "     \
		       "application memory (must stay 0)")

#endif /* MRDP_COUNTERS_H */
