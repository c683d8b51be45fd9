/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MetaRoCE wire format: the packet layouts of docs/spec/wire.md, as decoded
 * structs plus explicit big-endian encode/parse. No bitfields, no packed
 * structs: every header is built and read byte by byte through mr_be.h.
 *
 * A MetaRoCE packet rides in Ethernet / IPv4 / UDP (destination port
 * MR_UDP_PORT_DEFAULT, configurable). After the UDP header:
 *
 *   BTH (32) | PTH (8) | extension headers (by opcode) | payload | ICRC (4)
 *
 * ACK packets: BTH | PTH | AETH (24) | n x SACK block (2..41) | ICRC.
 * The ICRC is CRC32C over everything from the first byte of the BTH to the
 * last byte of the payload (clause MR-ICRC-1).
 *
 * This header is the contract between lib/core modules; the spec in
 * docs/spec/ and this file must say the same thing.
 */
#ifndef MR_WIRE_H
#define MR_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define MR_WIRE_VERSION 1
/* Not 4791 (RoCEv2) and not 4793 (UET), so NICs that parse those leave us
 * alone. */
#define MR_UDP_PORT_DEFAULT 4797

#define MR_BTH_LEN 32
#define MR_PTH_LEN 8
#define MR_RETH_LEN 16
#define MR_IMMDT_LEN 4
#define MR_IETH_LEN 4
#define MR_ATOMETH_LEN 28
#define MR_ATOMACKETH_LEN 8
#define MR_DETH_LEN 8
#define MR_AETH_LEN 24
/* A SACK block (MR-ACK-13): a head byte, cum_ppsn (4 bytes in the first
 * block, a 1..5-byte varint of the difference from the block before in the
 * others), ce_cum only when non-zero, the bitmap only when non-empty. A
 * path without a hole or a mark takes 5 bytes first and 2 after (when its
 * cum_ppsn is within 63 of the previous block's); 41 at most. */
#define MR_SACK_FIRST_MIN_LEN 5
#define MR_SACK_MIN_LEN 2
#define MR_SACK_BLOCK_MAX_LEN 41
/* MR-ACK-13: a block's head byte: path_id in the low 6 bits, then
 * whether ce_cum and the bitmap follow. */
#define MR_SACK_H_PATH 0x3fu
#define MR_SACK_H_CE 0x40u
#define MR_SACK_H_BM 0x80u
#define MR_ICRC_LEN 4

/* 256-bit per-path selective-ACK bitmap. */
#define MR_SACK_BITS 256
#define MR_SACK_BYTES (MR_SACK_BITS / 8)
/* Paths one connection may use (path_id < MR_MAX_PATHS, MR-PATH-1). */
#define MR_MAX_PATHS 64
/* An ACK carries at most one block per path (MR-ACK-9) ... */
#define MR_ACK_MAX_BLOCKS MR_MAX_PATHS
/* ... and at most this many bytes of blocks: with the 68 bytes of
 * headers and ICRC 1348 bytes, an IP packet of 1376: it fits a 1500-byte
 * MTU. 64 paths without holes take at most 5 + 63 x 8 = 509 bytes (131
 * when their cum_ppsn are within 63 of each other, as a sprayed
 * connection's are), so one ACK reports every path; a connection whose
 * bitmaps do not fit reports them over successive ACKs, and every block
 * is cumulative, so none is lost by waiting. */
#define MR_ACK_MAX_SACK_BYTES 1280

/* Largest header stack of any data packet (BTH+PTH+RETH+IMMDT or ATOMETH). */
#define MR_MAX_HDR_LEN (MR_BTH_LEN + MR_PTH_LEN + MR_ATOMETH_LEN + MR_IMMDT_LEN)

/* QPNs are 24 bits on the wire, as in verbs. */
#define MR_QPN_MASK 0x00ffffffu

/* Largest payload of one packet (the largest MTU), MR-HDR-13. */
#define MR_WIRE_MAX_PAYLOAD 4096u
/* Largest message (2 GiB, as verbs), MR-HDR-12. */
#define MR_WIRE_MAX_MSG_LEN 0x80000000u
/* Operand size of the atomics: msg_len of ATOMIC_* and ATOMIC_RESP. */
#define MR_WIRE_ATOMIC_LEN 8u
/* Defined BTH flag bits; the others are reserved (0). */
#define MR_BTH_F_ALL 0x001fu
/* Largest rnr_timer value (IB's 5-bit encoding). */
#define MR_RNR_TIMER_MAX 31u

/* Opcodes (BTH byte 1). Extension headers are implied by the opcode:
 *   SEND          -                 SEND_IMM      IMMDT
 *   WRITE         RETH              WRITE_IMM     RETH IMMDT
 *   READ_REQ      RETH              READ_RESP     -
 *   ATOMIC_CS     ATOMETH           ATOMIC_FA     ATOMETH
 *   ATOMIC_RESP   ATOMACKETH        ACK           AETH + SACK blocks
 *   PROBE         -  (no payload)
 *   UD_SEND       DETH              UD_SEND_IMM   DETH IMMDT
 *   SEND_INV      IETH              ATOMIC_WRITE  ATOMETH
 */
enum mr_wire_opcode {
	MR_OP_SEND = 0x01,
	MR_OP_SEND_IMM = 0x02,
	MR_OP_WRITE = 0x03,
	MR_OP_WRITE_IMM = 0x04,
	MR_OP_READ_REQ = 0x05,
	MR_OP_READ_RESP = 0x06,
	MR_OP_ATOMIC_CS = 0x07,
	MR_OP_ATOMIC_FA = 0x08,
	MR_OP_ATOMIC_RESP = 0x09,
	MR_OP_SEND_INV = 0x0a, /* SEND with remote invalidate (MR-EXT-8) */
	/* 8 bytes placed atomically (MR-EXT-9): the data in atom.swap_add,
	 * answered with ATOMIC_RESP like the other atomics (MR-AW-3). */
	MR_OP_ATOMIC_WRITE = 0x0b,
	MR_OP_ACK = 0x10,
	/* A path probe (MR-PRB-*): BTH + PTH only, no data, no ssn; it
	 * takes a ppsn of its path and is acknowledged in that path's SACK
	 * block like a data packet, so a suspect path is tested without
	 * holding any data hostage. */
	MR_OP_PROBE = 0x11,
	MR_OP_UD_SEND = 0x20,
	MR_OP_UD_SEND_IMM = 0x21,
};

/* BTH flags (16 bits). */
enum mr_bth_flag {
	MR_BTH_F_SOLICITED = 1u << 0, /* solicited event at the receiver */
	MR_BTH_F_ACK_REQ = 1u << 1,   /* receiver should ACK without delay */
	MR_BTH_F_RETX = 1u << 2,      /* this packet is a retransmission */
	MR_BTH_F_GBN = 1u << 3,	      /* sender runs the gbn baseline mode */
	/* The sender has no new data queued after this packet: the
	 * receiver's rate hint stops counting it (MR-CC-14). */
	MR_BTH_F_IDLE = 1u << 4,
};

/* AETH syndrome: 0 = ACK, otherwise the NAK code. */
enum mr_nak_code {
	MR_NAK_NONE = 0,
	MR_NAK_SEQ_ERR = 1, /* gbn: out-of-sequence packet; resend from cum */
	MR_NAK_RNR = 2,	    /* no receive WQE; retry after rnr timer */
	MR_NAK_REM_ACCESS = 3, /* bad rkey, bounds or permission */
	MR_NAK_INV_REQ = 4,    /* malformed or unsupported request */
	MR_NAK_REM_OP = 5,     /* responder could not complete the operation */
};

/* Base transport header: 32 bytes.
 *   0  u8  version (high nibble) | reserved (low nibble, 0)
 *   1  u8  opcode
 *   2  u16 flags
 *   4  u32 dqpn    destination QP (low 24 bits; high 8 reserved 0)
 *   8  u32 sqpn    source QP (low 24 bits)
 *  12  u32 ssn     sender's connection-wide packet sequence (dedup; a
 *                  retransmission keeps its ssn, gets a new path/ppsn)
 *  16  u32 msn     message sequence of the request this packet belongs to
 *  20  u32 rsn     SEND*: which receive WQE it consumes (count of SENDs
 *                  before it on this QP); other opcodes 0
 *  24  u32 offset  byte offset of the payload within the message
 *  28  u32 msg_len total length of the message in bytes
 */
struct mr_bth {
	uint8_t version;
	uint8_t opcode;
	uint16_t flags;
	uint32_t dqpn;
	uint32_t sqpn;
	uint32_t ssn;
	uint32_t msn;
	uint32_t rsn;
	uint32_t offset;
	uint32_t msg_len;
};

/* Per-path header: 8 bytes.
 *   0  u16 path_id   which of the sender's paths (selects UDP sport/plane)
 *   2  u8  pflags    reserved, 0
 *   3  u8  plane     the network plane the sender put the packet on: the
 *                    ACK of this path returns on it (MR-HDR-14, MR-MP-7;
 *                    a path remapped off a failed plane, MR-PM-5)
 *   4  u32 ppsn      per-path packet sequence number on that path
 */
struct mr_pth {
	uint16_t path_id;
	uint8_t pflags;
	uint8_t plane;
	uint32_t ppsn;
};

/* RETH: 16 bytes: u64 vaddr, u32 rkey, u32 dma_len. */
struct mr_reth {
	uint64_t vaddr;
	uint32_t rkey;
	uint32_t dma_len;
};

/* ATOMETH: 28 bytes: u64 vaddr, u32 rkey, u64 swap_add, u64 compare. */
struct mr_atometh {
	uint64_t vaddr;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t compare;
};

/* DETH: 8 bytes: u32 qkey, u32 reserved. */
struct mr_deth {
	uint32_t qkey;
};

/* One per-path SACK block, decoded. On the wire (MR-ACK-13), in order:
 *   u8  head          path_id | MR_SACK_H_CE if ce_cum != 0 |
 *                     MR_SACK_H_BM if the bitmap has a bit set
 *   cum_ppsn          first per-path sequence NOT yet received (every
 *                     ppsn before it on this path has arrived): u32 in
 *                     the first block; in the others the zigzag LEB128
 *                     varint (1..5 bytes, shortest form) of the signed
 *                     difference from the previous block's cum_ppsn
 *   u16 ce_cum        only with MR_SACK_H_CE: CE-marked packets received
 *                     on this path since the QP entered RTR, modulo 2^16
 *                     (cumulative, MR-ACK-11)
 *   u8  n, u8[n]      only with MR_SACK_H_BM: the bitmap up to its last
 *                     non-zero byte (1..32, MR-ACK-12); bit i (byte i/8,
 *                     bit i%8, LSB first) set = ppsn cum_ppsn + 1 + i
 *                     has arrived
 * Decoded, the bitmap is always the whole 32 bytes (zero past n), so the
 * sender's SACK processing does not see the trimming.
 */
struct mr_sack_block {
	uint16_t path_id;
	uint16_t ce_cum;
	uint32_t cum_ppsn;
	uint8_t bitmap[MR_SACK_BYTES];
};

/* AETH: 24 bytes.
 *   0  u8  syndrome   enum mr_nak_code (0 = plain ACK)
 *   1  u8  rnr_timer  with MR_NAK_RNR: the IB encoded min RNR timer
 *   2  u8  nblocks    SACK blocks that follow (0..MR_ACK_MAX_BLOCKS;
 *                     blocks[0] is the path the ACK travels on)
 *   3  u8  reserved
 *   4  u32 nak_msn    the message a NAK refers to
 *   8  u32 cum_ssn    every ssn before it has been received
 *  12  u32 cum_msn    every message before it is complete at the receiver
 *  16  u32 rate_hint  receiver's rate hint, Mb/s (0 = no hint)
 *  20  u16 ecn_ce     CE-marked packets received for this QP since it
 *                     entered RTR, modulo 2^16 (cumulative: a lost ACK
 *                     loses no mark, MR-ACK-8)
 *  22  u16 reserved
 */
struct mr_aeth {
	uint8_t syndrome;
	uint8_t rnr_timer;
	uint8_t nblocks;
	uint32_t nak_msn;
	uint32_t cum_ssn;
	uint32_t cum_msn;
	uint32_t rate_hint;
	uint16_t ecn_ce;
	struct mr_sack_block blocks[MR_ACK_MAX_BLOCKS];
};

/*
 * Field rules by opcode (docs/spec/wire.md, MR-EXT-* and MR-PARSE-*):
 *  - payload_len <= MR_WIRE_MAX_PAYLOAD, msg_len <= MR_WIRE_MAX_MSG_LEN.
 *  - SEND*, WRITE*, READ_RESP: offset + payload_len <= msg_len; a packet
 *    with no payload only for a zero-length message (offset 0, msg_len 0).
 *  - WRITE*: reth.vaddr is the target address of the message's first
 *    byte (the same in every packet; the payload goes to vaddr + offset),
 *    reth.dma_len == msg_len.
 *  - READ_REQ: no payload, offset 0, msg_len == reth.dma_len (the bytes to
 *    read; the READ_RESP packets carry the same msg_len and the request's
 *    msn).
 *  - ATOMIC_CS/FA/WRITE/RESP: no payload, offset 0, msg_len 8.
 *    ATOMIC_FA and ATOMIC_WRITE ignore atom.compare.
 *  - UD_SEND*: offset 0, msg_len == payload_len (one packet per message).
 *  - ACK: no payload, rsn/offset/msg_len 0; bth.ssn and bth.msn are not
 *    interpreted by the wire layer (transport.md may give them a meaning).
 *  - PROBE: no payload; ssn, msn, rsn, offset and msg_len 0 (MR-PRB-1).
 *  - rsn is 0 except on SEND, SEND_IMM and SEND_INV.
 * mr_wire_encode_hdr() does not check these (so tests can craft bad
 * packets); mr_wire_parse() does.
 */

/* A decoded packet. Fields of extension headers the opcode does not carry
 * are zero, except aeth.blocks[i] for i >= aeth.nblocks, which parse does
 * not write (so a data packet does not pay for clearing 2560 bytes).
 * payload points into the parsed buffer. */
struct mr_pkt {
	struct mr_bth bth;
	struct mr_pth pth;
	struct mr_reth reth;
	uint32_t imm; /* raw big-endian value, as verbs carries imm_data */
	uint32_t inv_rkey; /* IETH: the rkey a SEND_INV invalidates */
	struct mr_atometh atom;
	uint64_t atomic_orig; /* ATOMACKETH */
	struct mr_deth deth;
	struct mr_aeth aeth;
	const uint8_t *payload;
	uint32_t payload_len;
};

/* Why a packet failed to parse: also the drop-reason counters. */
enum mr_parse_err {
	MR_PARSE_OK = 0,
	MR_PARSE_SHORT = 1,   /* shorter than its headers + ICRC */
	MR_PARSE_VERSION = 2, /* unknown version */
	MR_PARSE_OPCODE = 3,  /* unknown opcode */
	MR_PARSE_ICRC = 4,    /* CRC32C mismatch */
	MR_PARSE_FIELD = 5,   /* reserved bits set or inconsistent lengths */
};
/* Number of enum mr_parse_err values (for counter arrays). */
#define MR_PARSE_ERR_COUNT 6

/* A static name of an enum mr_parse_err ("ok", "short", ...). */
const char *mr_wire_parse_err_str(int err);

/* Extension header bytes implied by opcode (not counting BTH/PTH), or -1
 * for an unknown opcode. ACK: AETH only (blocks counted separately). */
int mr_wire_ext_len(uint8_t opcode);

/* Bytes block b takes on the wire (MR-ACK-13) when it follows block prev
 * in an ACK (prev NULL: b is the first block). */
size_t mr_wire_sack_len(const struct mr_sack_block *b,
			const struct mr_sack_block *prev);

/* Parse and verify one MetaRoCE packet (from the BTH to the ICRC
 * inclusive). Returns MR_PARSE_OK or an enum mr_parse_err. Never reads
 * outside [buf, buf + len). Checks in the order of MR-PARSE-1..: length of
 * BTH+PTH+ICRC, version, opcode, ICRC, then header lengths and fields, so
 * a corrupted packet counts as MR_PARSE_ICRC, never as a malformed one.
 * On error *out is partly written and must not be used. */
int mr_wire_parse(const uint8_t *buf, size_t len, struct mr_pkt *out);

/* Encode the headers of pkt (BTH, PTH and the extension headers its opcode
 * implies, including pkt->aeth.nblocks SACK blocks for ACKs) into buf.
 * The version written is always MR_WIRE_VERSION (bth.version is ignored);
 * reserved bytes are written 0; other fields are written as given.
 * Returns the header length, or 0 if cap is too small or the opcode is
 * unknown or aeth.nblocks > MR_ACK_MAX_BLOCKS or the blocks take more
 * than MR_ACK_MAX_SACK_BYTES. The payload is not
 * copied: the caller appends pkt->payload_len bytes, then calls
 * mr_wire_seal(). */
size_t mr_wire_encode_hdr(const struct mr_pkt *pkt, uint8_t *buf, size_t cap);

/* Header length mr_wire_encode_hdr() would write for pkt (BTH, PTH, the
 * extension headers, SACK blocks), or 0 for an unknown opcode,
 * aeth.nblocks > MR_ACK_MAX_BLOCKS or blocks of more than
 * MR_ACK_MAX_SACK_BYTES. */
size_t mr_wire_hdr_len(const struct mr_pkt *pkt);

/* Append the ICRC over buf[0, len) at buf + len (big-endian, MR-ICRC-2);
 * buf must have room for len + 4 bytes. Returns len + 4. */
size_t mr_wire_seal(uint8_t *buf, size_t len);

/* Set BTH flag bits f in an encoded header that is not sealed yet (a
 * sender decides some after building the packet, MR-CC-14). */
static inline void mr_wire_set_flags(uint8_t *buf, uint16_t f)
{
	buf[2] |= (uint8_t)(f >> 8); /* flags: bytes 2..3, big-endian */
	buf[3] |= (uint8_t)f;
}

/* A whole packet: headers, then pkt->payload_len bytes from pkt->payload,
 * then the ICRC. Returns the packet length, or 0 if cap is too small or
 * the header cannot be encoded (see mr_wire_hdr_len()). */
size_t mr_wire_encode(const struct mr_pkt *pkt, uint8_t *buf, size_t cap);

/* Peek the destination QPN without a full parse (demultiplexing); 0 if the
 * buffer is too short. */
uint32_t mr_wire_peek_dqpn(const uint8_t *buf, size_t len);

/* A static name of an opcode ("SEND", "READ_RESP", ...; "UNKNOWN"). */
const char *mr_wire_op_name(uint8_t opcode);

/* One line describing a decoded packet, for traces and test failure
 * reports: opcode, QPNs, sequence numbers, lengths, path, flags and the
 * opcode's extension fields (ACKs: syndrome, cumulative points and per
 * path block "path:cum_ppsn+bits set"). Written like snprintf(): at most
 * cap bytes including the NUL; returns the length the whole line needs. */
size_t mr_wire_format(const struct mr_pkt *pkt, char *buf, size_t cap);

#endif /* MR_WIRE_H */
