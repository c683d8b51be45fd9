# SPDX-License-Identifier: BSD-2-Clause
"""The maps of one link program (mrfab_link.bpf.c), reached through the
bpf(2) system call by the ids tc reports: Debian 12 ships no bpftool in
the base system and tc loads the object itself, so this is the one piece
of libbpf's job done here (a dozen lines of struct packing).

The value layouts below must match struct mrfab_cfg / mrfab_stats
(mrfab_link.h)."""

import ctypes
import os
import struct

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
SYS_BPF = 321  # x86_64

BPF_MAP_LOOKUP_ELEM = 1
BPF_MAP_UPDATE_ELEM = 2
BPF_PROG_GET_FD_BY_ID = 13
BPF_MAP_GET_FD_BY_ID = 14
BPF_OBJ_GET_INFO_BY_FD = 15

CFG_FMT = "<5Q8IQII"   # down_from, down_until, rate_bps, ecn_bytes,
                       # police_bytes; loss, corrupt, dup, reorder,
                       # lane_prio, ifindex, ingress, pad; delay_ns;
                       # delay_ifindex, pad2
STATS_FIELDS = ("pkts", "bytes", "ecn_marked", "drop_down", "drop_loss",
                "drop_police", "corrupted", "duplicated", "reordered",
                "not_ect", "tx_pkts", "tx_bytes", "delayed")
STATS_FMT = "<%dQ" % len(STATS_FIELDS)
FOREVER = (1 << 64) - 1


def _bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = _libc.syscall(SYS_BPF, cmd, buf, 128)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, "bpf(%d): %s" % (cmd, os.strerror(e)))
    return r, buf


def _fd_by_id(cmd, ident):
    r, _ = _bpf(cmd, struct.pack("<III", ident, 0, 0))
    return r


def _info(fd, size):
    info = ctypes.create_string_buffer(size)
    _bpf(BPF_OBJ_GET_INFO_BY_FD,
         struct.pack("<IIQ", fd, size, ctypes.addressof(info)))
    return info


def prog_maps(prog_id):
    """{map name: map id} of a loaded program."""
    fd = _fd_by_id(BPF_PROG_GET_FD_BY_ID, prog_id)
    try:
        ids = (ctypes.c_uint32 * 16)()
        # struct bpf_prog_info: nr_map_ids at 52, map_ids at 56.
        info = ctypes.create_string_buffer(256)
        struct.pack_into("<IQ", info, 52, 16, ctypes.addressof(ids))
        _bpf(BPF_OBJ_GET_INFO_BY_FD,
             struct.pack("<IIQ", fd, 256, ctypes.addressof(info)))
        n = struct.unpack_from("<I", info, 52)[0]
    finally:
        os.close(fd)
    out = {}
    for mid in list(ids)[:min(n, 16)]:
        mfd = _fd_by_id(BPF_MAP_GET_FD_BY_ID, mid)
        try:
            # struct bpf_map_info: name[16] at 24.
            name = _info(mfd, 96).raw[24:40].split(b"\0", 1)[0].decode()
        finally:
            os.close(mfd)
        out[name] = mid
    return out


def _map_op(map_id, cmd, value_size, value=None):
    fd = _fd_by_id(BPF_MAP_GET_FD_BY_ID, map_id)
    try:
        key = ctypes.c_uint32(0)
        val = ctypes.create_string_buffer(value or b"", value_size)
        _bpf(cmd, struct.pack("<IIQQQ", fd, 0, ctypes.addressof(key),
                              ctypes.addressof(val), 0))
        return val.raw
    finally:
        os.close(fd)


def write_cfg(map_id, cfg):
    v = struct.pack(CFG_FMT, cfg["down_from"], cfg["down_until"],
                    cfg["rate_bps"], cfg["ecn_bytes"], cfg["police_bytes"],
                    cfg["loss"], cfg["corrupt"], cfg["dup"], cfg["reorder"],
                    cfg["lane_prio"], cfg["ifindex"], cfg["ingress"], 0,
                    cfg["delay_ns"], cfg["delay_ifindex"], 0)
    _map_op(map_id, BPF_MAP_UPDATE_ELEM, len(v), v)


def read_stats(map_id):
    raw = _map_op(map_id, BPF_MAP_LOOKUP_ELEM, struct.calcsize(STATS_FMT))
    return dict(zip(STATS_FIELDS, struct.unpack(STATS_FMT, raw)))


def prob32(p):
    """A probability as the threshold of bpf_get_prandom_u32()."""
    return min(int(p * 4294967296.0), 4294967295)
