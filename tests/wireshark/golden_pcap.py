#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Write a pcap of MetaRoCE packets with known contents for the dissector
test: the byte-exact vectors of docs/spec/wire.md Appendix A, one packet of
every other opcode, and malformed packets, each breaking one rule.

golden_pcap.py OUT.pcap   (frame numbers are listed in test_dissector.sh)
Frame 20 is an ICMP error quoting a MetaRoCE packet cut short.
"""
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def bth(op, flags=0, dqpn=0, sqpn=0, ssn=0, msn=0, rsn=0, off=0, mlen=0,
        ver=0x10):
    return struct.pack(">BBHIIIIIII", ver, op, flags, dqpn, sqpn, ssn, msn,
                       rsn, off, mlen)


def pth(path, ppsn, pflags=0):
    return struct.pack(">HBBI", path, pflags, 0, ppsn)


def seal(pkt, good=True):
    c = crc32c(pkt)
    return pkt + struct.pack(">I", c if good else c ^ 1)


def frame(payload, sport=49152, dport=4797):
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0x02, 20 + len(udp), 0, 0x4000,
                     64, 17, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    s = sum(struct.unpack(">10H", ip))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    ip = ip[:10] + struct.pack(">H", ~s & 0xFFFF) + ip[12:]
    eth = bytes.fromhex("020000000002" "020000000001") + b"\x08\x00"
    return eth + ip + udp


def hexpkt(text):
    return bytes.fromhex("".join(l.split("  ")[0] + (l.split("  ")[1] if
                         "  " in l else "") for l in text.strip().split("\n")))


# Appendix A, as printed there (the ICRC included).
SEND_IMM = bytes.fromhex(
    "1002000300000011" "0000002201020304" "0000000700000003"
    "0000000000000005" "0002000000000100" "deadbeef" "68656c6c6f" "047c3fc7")
READ_REQ = bytes.fromhex(
    "10050000 00abcdef 00000001 fffffffe 00000010 00000000 00000000 00001000"
    "00000000 ffffffff" "00007f0012345678 00001234 00001000" "b028bc4b")
ACK = bytes.fromhex(
    "10100000 00000022 00000011 00000000 00000000 00000000 00000000 00000000"
    "00010000 00000000"
    "00000100 00000000 01020305 00000008 000186a0 00030000"
    "82 00000101 01 05" "c1f4007e")

pkts = [
    SEND_IMM,                                                    # 1
    READ_REQ,                                                    # 2
    ACK,                                                         # 3
    # 4 WRITE_IMM, 5 bytes at offset 0 of 5
    seal(bth(0x04, 0x2, 0x33, 0x44, 10, 2, 0, 0, 5) + pth(3, 77) +
         struct.pack(">QII", 0x1000, 0xabc, 5) + b"\x01\x02\x03\x04" +
         b"world"),
    # 5 ATOMIC_CS
    seal(bth(0x07, 0, 0x33, 0x44, 11, 3, 0, 0, 8) + pth(0, 5) +
         struct.pack(">QIQQ", 0x2000, 0x55, 0x1111, 0x2222)),
    # 6 ATOMIC_RESP
    seal(bth(0x09, 0, 0x44, 0x33, 90, 3, 0, 0, 8) + pth(1, 6) +
         struct.pack(">Q", 0x2222)),
    # 7 UD_SEND_IMM, qkey 0x11111111
    seal(bth(0x21, 0x1, 0x66, 0x77, 1, 0, 0, 0, 3) + pth(0, 1) +
         struct.pack(">II", 0x11111111, 0) + b"\xca\xfe\x00\x01" + b"abc"),
    # 8 NAK RNR, rnr_timer 14, no blocks
    seal(bth(0x10, 0, 0x33, 0x44) + pth(0, 9) +
         struct.pack(">BBBBIIIIHH", 2, 14, 0, 0, 4, 100, 4, 0, 0, 0)),
    # --- malformed, one defect each
    SEND_IMM[:-1] + bytes([SEND_IMM[-1] ^ 0xFF]),                # 9 ICRC
    seal(bth(0x01, ver=0x20) + pth(0, 0)),                       # 10 version
    seal(bth(0x0c) + pth(0, 0)),                                 # 11 opcode
    seal(bth(0x01, 0x10, 1, 2) + pth(0, 0)),                     # 12 flag bit 4
    seal(bth(0x03, 0, 1, 2, 0, 0, 0, 0, 9) + pth(0, 0) +         # 13 dma_len
         struct.pack(">QII", 0, 1, 8) + b"x"),
    seal(bth(0x10) + pth(0, 0) +                                 # 14 nblocks 65
         struct.pack(">BBBBIIIIHH", 0, 0, 65, 0, 0, 0, 0, 0, 0, 0)),
    bytes(20),                                                   # 15 short
    seal(bth(0x10) + pth(0, 0) +                                 # 16 dup path
         struct.pack(">BBBBIIIIHH", 0, 0, 2, 0, 0, 0, 0, 0, 0, 0) +
         struct.pack(">BIBB", 0x85, 1, 1, 1) + b"\x85\x00\x01\x01"),
    seal(bth(0x05, 0, 1, 2, 0, 0, 0, 0, 16) + pth(0, 0) +        # 17 RETH cut
         bytes(8)),
    seal(bth(0x10) + pth(0, 0) +                                 # 18 CE flag, 0
         struct.pack(">BBBBIIIIHH", 0, 0, 1, 0, 0, 0, 0, 0, 0, 0) +
         struct.pack(">BIH", 0x40, 1, 0)),
    seal(bth(0x10) + pth(0, 0) +                                 # 19 ce_cum 7
         struct.pack(">BBBBIIIIHH", 0, 0, 1, 0, 0, 0, 0, 0, 9, 0) +
         struct.pack(">BIH", 0x40 | 63, 1, 7)),
]



def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def icmp_unreachable(inner_frame, keep):
    """Frame 20: host 10.0.0.2 has no socket on the port and answers with
    ICMP port unreachable quoting the first KEEP bytes of the IP packet
    (its lengths still say the whole packet)."""
    quoted = inner_frame[14:14 + keep]
    icmp = struct.pack(">BBHI", 3, 3, 0, 0) + quoted
    icmp = icmp[:2] + struct.pack(">H", csum(icmp)) + icmp[4:]
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(icmp), 0, 0x4000,
                     64, 1, 0, bytes([10, 0, 0, 2]), bytes([10, 0, 0, 1]))
    ip = ip[:10] + struct.pack(">H", csum(ip)) + ip[12:]
    eth = bytes.fromhex("020000000001" "020000000002") + b"\x08\x00"
    return eth + ip + icmp


# 20: a 1,000-byte WRITE_FIRST (ssn 42, path 5, ppsn 9) quoted cut to
# 20 + 8 + 100 bytes: decoded, no ICRC or length verdict (MR-ICRC-1).
QUOTED = frame(seal(bth(0x03, 0, 0x33, 0x44, 42, 1, 0, 0, 4096) +
                    pth(5, 9) + struct.pack(">QII", 0x1000, 0xabc, 4096) +
                    bytes(1000)))
# 21: ATOMIC_WRITE (MR-EXT-9): the 8 bytes "aw-bytes" in swap_add.
AW = seal(bth(0x0b, 0x2, 0x33, 0x44, 12, 4, 0, 0, 8) + pth(2, 7) +
          struct.pack(">QI", 0x3008, 0x66) + b"aw-bytes" + bytes(8))
# 22: a SACK block whose bitmap ends in a zero byte (MR-ACK-12).
TRAIL0 = seal(bth(0x10) + pth(0, 0) +
              struct.pack(">BBBBIIIIHH", 0, 0, 1, 0, 0, 0, 0, 0, 0, 0) +
              struct.pack(">BIB", 0x83, 1, 2) + b"\x01\x00")
frames = [frame(p) for p in pkts] + [icmp_unreachable(QUOTED, 128),
                                     frame(AW), frame(TRAIL0)]

with open(sys.argv[1], "wb") as out:
    out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i, fr in enumerate(frames):
        out.write(struct.pack("<IIII", 1700000000 + i, 0, len(fr), len(fr)))
        out.write(fr)
