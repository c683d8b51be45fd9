-- SPDX-License-Identifier: BSD-2-Clause
-- Wireshark dissector for MetaRoCE, wire version 1 (docs/spec/wire.md).
--
-- Every packet type and field of the spec: BTH, PTH, RETH, IMMDT, ATOMETH,
-- ATOMACKETH, DETH, AETH and SACK blocks, the payload and the ICRC
-- (CRC32C, verified). A packet that breaks a rule of MR-PARSE-1..7 gets an
-- expert item naming the clause; the fields that can be read are still
-- shown. Installed in Wireshark's global Lua plugin directory; the UDP
-- port (default 4797, MR-ENC-2) is a preference.
--
-- Filter names: metaroce.opcode, metaroce.dqpn, metaroce.ssn,
-- metaroce.path_id, metaroce.ppsn, metaroce.aeth.cum_ssn,
-- metaroce.sack.path_id, metaroce.icrc.status, ... (tshark -G fields).

local p = Proto("metaroce", "MetaRoCE")

local OPCODES = {
	[0x01] = "SEND", [0x02] = "SEND_IMM", [0x03] = "WRITE",
	[0x04] = "WRITE_IMM", [0x05] = "READ_REQ", [0x06] = "READ_RESP",
	[0x07] = "ATOMIC_CS", [0x08] = "ATOMIC_FA", [0x09] = "ATOMIC_RESP",
	[0x0a] = "SEND_INV", [0x0b] = "ATOMIC_WRITE", [0x10] = "ACK", [0x11] = "PROBE", [0x20] = "UD_SEND",
	[0x21] = "UD_SEND_IMM",
}
-- Extension headers each opcode implies (MR-HDR-2), in wire order.
local EXT = {
	[0x01] = {}, [0x02] = { "imm" }, [0x03] = { "reth" },
	[0x04] = { "reth", "imm" }, [0x05] = { "reth" }, [0x06] = {},
	[0x07] = { "atometh" }, [0x08] = { "atometh" },
	[0x09] = { "atomacketh" }, [0x0a] = { "ieth" }, [0x0b] = { "atometh" },
	[0x10] = { "aeth" },
	[0x11] = {},
	[0x20] = { "deth" }, [0x21] = { "deth", "imm" },
}
local EXT_LEN = { reth = 16, imm = 4, atometh = 28, atomacketh = 8,
	deth = 8, aeth = 24, ieth = 4 }
local SYNDROMES = { [0] = "ACK", [1] = "SEQ_ERR", [2] = "RNR",
	[3] = "REM_ACCESS", [4] = "INV_REQ", [5] = "REM_OP" }
local BTH_LEN, PTH_LEN, ICRC_LEN = 32, 8, 4
local MAX_PAYLOAD, MAX_MSG, MAX_BLOCKS, MAX_PATHS = 4096, 0x80000000, 64, 64
-- MR-ACK-9: the blocks of one ACK take at most this many bytes
local MAX_SACK_BYTES = 1280

local f = p.fields
f.version = ProtoField.uint8("metaroce.version", "Version", base.DEC, nil, 0xf0)
f.bth_rsvd0 = ProtoField.uint8("metaroce.bth.reserved0", "Reserved", base.HEX, nil, 0x0f)
f.opcode = ProtoField.uint8("metaroce.opcode", "Opcode", base.HEX, OPCODES)
f.flags = ProtoField.uint16("metaroce.flags", "Flags", base.HEX)
f.f_solicited = ProtoField.bool("metaroce.flags.solicited", "SOLICITED", 16, nil, 0x0001)
f.f_ack_req = ProtoField.bool("metaroce.flags.ack_req", "ACK_REQ", 16, nil, 0x0002)
f.f_retx = ProtoField.bool("metaroce.flags.retx", "RETX", 16, nil, 0x0004)
f.f_gbn = ProtoField.bool("metaroce.flags.gbn", "GBN", 16, nil, 0x0008)
f.f_rsvd = ProtoField.uint16("metaroce.flags.reserved", "Reserved", base.HEX, nil, 0xfff0)
f.dqpn = ProtoField.uint32("metaroce.dqpn", "Destination QP", base.HEX, nil, 0x00ffffff)
f.dqpn_rsvd = ProtoField.uint32("metaroce.dqpn.reserved", "Reserved", base.HEX, nil, 0xff000000)
f.sqpn = ProtoField.uint32("metaroce.sqpn", "Source QP", base.HEX, nil, 0x00ffffff)
f.sqpn_rsvd = ProtoField.uint32("metaroce.sqpn.reserved", "Reserved", base.HEX, nil, 0xff000000)
f.ssn = ProtoField.uint32("metaroce.ssn", "Send sequence number", base.DEC)
f.msn = ProtoField.uint32("metaroce.msn", "Message sequence number", base.DEC)
f.rsn = ProtoField.uint32("metaroce.rsn", "Receive sequence number", base.DEC)
f.offset = ProtoField.uint32("metaroce.offset", "Offset", base.DEC)
f.msg_len = ProtoField.uint32("metaroce.msg_len", "Message length", base.DEC)
f.path_id = ProtoField.uint16("metaroce.path_id", "Path", base.DEC)
f.pflags = ProtoField.uint8("metaroce.pth.pflags", "Path flags (reserved)", base.HEX)
f.pth_plane = ProtoField.uint8("metaroce.pth.plane", "Plane", base.DEC)
f.ppsn = ProtoField.uint32("metaroce.ppsn", "Per-path sequence number", base.DEC)
f.reth_vaddr = ProtoField.uint64("metaroce.reth.vaddr", "Virtual address", base.HEX)
f.reth_rkey = ProtoField.uint32("metaroce.reth.rkey", "Remote key", base.HEX)
f.reth_dma_len = ProtoField.uint32("metaroce.reth.dma_len", "DMA length", base.DEC)
f.imm = ProtoField.bytes("metaroce.imm", "Immediate data")
f.ieth_rkey = ProtoField.uint32("metaroce.ieth.rkey", "Invalidate rkey", base.HEX)
f.atom_vaddr = ProtoField.uint64("metaroce.atometh.vaddr", "Virtual address", base.HEX)
f.atom_rkey = ProtoField.uint32("metaroce.atometh.rkey", "Remote key", base.HEX)
f.atom_swap_add = ProtoField.uint64("metaroce.atometh.swap_add", "Swap / add", base.HEX)
f.atom_compare = ProtoField.uint64("metaroce.atometh.compare", "Compare", base.HEX)
f.atom_orig = ProtoField.uint64("metaroce.atomacketh.orig", "Original value", base.HEX)
f.deth_qkey = ProtoField.uint32("metaroce.deth.qkey", "Queue key", base.HEX)
f.deth_rsvd = ProtoField.uint32("metaroce.deth.reserved", "Reserved", base.HEX)
f.aeth_syndrome = ProtoField.uint8("metaroce.aeth.syndrome", "Syndrome", base.DEC, SYNDROMES)
f.aeth_rnr_timer = ProtoField.uint8("metaroce.aeth.rnr_timer", "RNR timer", base.DEC)
f.aeth_nblocks = ProtoField.uint8("metaroce.aeth.nblocks", "SACK blocks", base.DEC)
f.aeth_rsvd3 = ProtoField.uint8("metaroce.aeth.reserved3", "Reserved", base.HEX)
f.aeth_nak_msn = ProtoField.uint32("metaroce.aeth.nak_msn", "NAK message", base.DEC)
f.aeth_cum_ssn = ProtoField.uint32("metaroce.aeth.cum_ssn", "Cumulative ssn", base.DEC)
f.aeth_cum_msn = ProtoField.uint32("metaroce.aeth.cum_msn", "Cumulative msn", base.DEC)
f.aeth_rate_hint = ProtoField.uint32("metaroce.aeth.rate_hint", "Rate hint (Mb/s)", base.DEC)
f.aeth_ecn_ce = ProtoField.uint16("metaroce.aeth.ecn_ce", "CE marks since RTR (mod 2^16)", base.DEC)
f.aeth_rsvd22 = ProtoField.uint16("metaroce.aeth.reserved22", "Reserved", base.HEX)
f.sack = ProtoField.none("metaroce.sack", "SACK block")
f.sack_path_id = ProtoField.uint8("metaroce.sack.path_id", "Path", base.DEC, nil, 0x3f)
f.sack_has_ce = ProtoField.bool("metaroce.sack.has_ce", "CE count follows", 8, nil, 0x40)
f.sack_has_bm = ProtoField.bool("metaroce.sack.has_bitmap", "Bitmap follows", 8, nil, 0x80)
f.sack_bm_len = ProtoField.uint8("metaroce.sack.bm_len", "Bitmap bytes", base.DEC)
f.sack_ce_cum = ProtoField.uint16("metaroce.sack.ce_cum", "CE marks on this path since RTR (mod 2^16)", base.DEC)
f.sack_cum_ppsn = ProtoField.uint32("metaroce.sack.cum_ppsn", "Cumulative ppsn", base.DEC)
f.sack_bitmap = ProtoField.bytes("metaroce.sack.bitmap", "Bitmap")
f.sack_received = ProtoField.uint16("metaroce.sack.received", "Received after cum_ppsn", base.DEC)
f.sack_first_hole_end = ProtoField.uint32("metaroce.sack.highest", "Highest ppsn received", base.DEC)
f.payload = ProtoField.bytes("metaroce.payload", "Payload")
f.payload_len = ProtoField.uint32("metaroce.payload_len", "Payload length", base.DEC)
f.icrc = ProtoField.uint32("metaroce.icrc", "ICRC", base.HEX)
f.icrc_status = ProtoField.string("metaroce.icrc.status", "ICRC status")

local e = p.experts
e.short = ProtoExpert.new("metaroce.short", "Packet too short (MR-PARSE-1/5)", expert.group.MALFORMED, expert.severity.ERROR)
e.version = ProtoExpert.new("metaroce.bad_version", "Unknown wire version (MR-PARSE-2)", expert.group.MALFORMED, expert.severity.ERROR)
e.opcode = ProtoExpert.new("metaroce.bad_opcode", "Reserved opcode (MR-PARSE-3)", expert.group.MALFORMED, expert.severity.ERROR)
e.icrc = ProtoExpert.new("metaroce.bad_icrc", "ICRC mismatch (MR-PARSE-4)", expert.group.CHECKSUM, expert.severity.ERROR)
e.reserved = ProtoExpert.new("metaroce.reserved_nonzero", "Reserved field not zero (MR-PARSE-6)", expert.group.MALFORMED, expert.severity.ERROR)
e.field = ProtoExpert.new("metaroce.bad_field", "Field rule broken (MR-PARSE-7)", expert.group.MALFORMED, expert.severity.ERROR)
e.nak = ProtoExpert.new("metaroce.nak", "NAK", expert.group.SEQUENCE, expert.severity.WARN)
e.retx = ProtoExpert.new("metaroce.retx", "Retransmission", expert.group.SEQUENCE, expert.severity.NOTE)

p.prefs.udp_port = Pref.uint("UDP port", 4797, "MetaRoCE UDP destination port (MR-ENC-2)")

-- CRC32C (MR-ICRC-1): reflected polynomial 0x82F63B78.
local crc_table = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if bit32.band(c, 1) ~= 0 then
			c = bit32.bxor(bit32.rshift(c, 1), 0x82F63B78)
		else
			c = bit32.rshift(c, 1)
		end
	end
	crc_table[i] = c
end

local function crc32c(tvb, off, len)
	local crc = 0xffffffff
	local bytes = tvb:raw(off, len)
	for i = 1, len do
		local b = bytes:byte(i)
		crc = bit32.bxor(crc_table[bit32.band(bit32.bxor(crc, b), 0xff)],
			bit32.rshift(crc, 8))
	end
	return bit32.bxor(crc, 0xffffffff)
end

local function popcount8(b)
	local n = 0
	while b ~= 0 do
		n = n + bit32.band(b, 1)
		b = bit32.rshift(b, 1)
	end
	return n
end

-- A reserved field: shown, and flagged when not zero.
local function reserved(tree, field, range, value)
	local item = tree:add(field, range)
	if value ~= 0 then
		item:add_proto_expert_info(e.reserved)
	end
	return item
end

local function bad(item, msg)
	item:add_proto_expert_info(e.field, msg)
end

-- One SACK block at off, of at most avail bytes (MR-ACK-13): a head byte
-- (path_id, then whether ce_cum and the bitmap follow), cum_ppsn (4 bytes
-- in the first block; in the others the zigzag LEB128 step from prev, the
-- block before's cum_ppsn), ce_cum, bm_len and the bitmap (MR-ACK-12).
-- Returns its length and its cum_ppsn, or nil if it is cut short.
local function dissect_sack(tvb, off, avail, tree, seen, prev)
	if avail < (prev and 2 or 5) then
		return nil
	end
	local h = tvb(off, 1):uint()
	local path = bit32.band(h, 0x3f)
	local pos, cum, vlen, canon = off + 1, 0, 4, true
	if prev then
		local z, i = 0, 0
		while true do
			if pos + i - off >= avail then
				return nil
			end
			local b = tvb(pos + i, 1):uint()
			z = z + bit32.band(b, 0x7f) * 2 ^ (7 * i)
			i = i + 1
			if bit32.band(b, 0x80) == 0 then
				canon = not ((i > 1 and b == 0) or (i == 5 and b > 0x0f))
				break
			end
			if i == 5 then
				canon = false
				break
			end
		end
		vlen = i
		local d = (z % 2 == 0) and z / 2 or -(z + 1) / 2
		cum = (prev + d) % 0x100000000
	else
		cum = tvb(pos, 4):uint()
	end
	pos = pos + vlen
	local ce_off, bm_off, n = nil, nil, 0
	if bit32.band(h, 0x40) ~= 0 then
		if pos + 2 - off > avail then
			return nil
		end
		ce_off, pos = pos, pos + 2
	end
	if bit32.band(h, 0x80) ~= 0 then
		if pos + 1 - off > avail then
			return nil
		end
		bm_off, n = pos, tvb(pos, 1):uint()
		pos = pos + 1
		if n <= 32 and pos + n - off > avail then
			return nil
		end
	end
	local blen = pos - off + (n <= 32 and n or 0)
	local st = tree:add(f.sack, tvb(off, blen))
	st:add(f.sack_path_id, tvb(off, 1))
	st:add(f.sack_has_ce, tvb(off, 1))
	st:add(f.sack_has_bm, tvb(off, 1))
	local ci = st:add(f.sack_cum_ppsn, tvb(off + 1, vlen), cum)
	if not canon then
		bad(ci, "cum_ppsn step not in its shortest form (MR-ACK-13)")
	end
	if ce_off then
		local c = st:add(f.sack_ce_cum, tvb(ce_off, 2))
		if tvb(ce_off, 2):uint() == 0 then
			bad(c, "CE flag with a count of 0 (MR-ACK-13)")
		end
	end
	if bm_off then
		local bi = st:add(f.sack_bm_len, tvb(bm_off, 1))
		if n > 32 or n == 0 then
			bad(bi, "Bitmap of 0 or more than 32 bytes (MR-ACK-12)")
			return blen, cum
		end
		st:add(f.sack_bitmap, tvb(bm_off + 1, n))
		if tvb(bm_off + n, 1):uint() == 0 then
			bad(bi, "Bitmap ends in a zero byte (MR-ACK-12)")
		end
	end
	local got, highest = 0, nil
	for i = 0, n - 1 do
		local b = tvb(bm_off + 1 + i, 1):uint()
		got = got + popcount8(b)
		for k = 0, 7 do
			if bit32.band(b, bit32.lshift(1, k)) ~= 0 then
				highest = (cum + 1 + i * 8 + k) % 0x100000000
			end
		end
	end
	st:add(f.sack_received, got):set_generated()
	if highest then
		st:add(f.sack_first_hole_end, highest):set_generated()
	end
	st:set_text(string.format("SACK block: path %d, cum_ppsn %d, %d received after it",
		path, cum, got))
	if seen[path] then
		bad(st, "Two SACK blocks for one path (MR-ACK-9)")
	end
	seen[path] = true
	return blen, cum
end

function p.dissector(tvb, pinfo, tree)
	local len = tvb:reported_length_remaining()
	pinfo.cols.protocol = "MetaRoCE"
	local t = tree:add(p, tvb())
	-- A packet quoted in an ICMP error (a host with no socket on our port
	-- answering it) is cut short by design (RFC 4443 2.4(c): at most 1280
	-- bytes in all): decode the headers it still has, check no length
	-- or ICRC, and flag nothing.
	local quoted = pinfo.in_error_pkt
	if quoted then
		t:add(f.icrc_status, "not checked (quoted in an ICMP error)"):set_generated()
		if len < BTH_LEN + PTH_LEN then
			pinfo.cols.info = "MetaRoCE [quoted, short]"
			return len
		end
	elseif len < BTH_LEN + PTH_LEN + ICRC_LEN or tvb:captured_len() < len then
		t:add_proto_expert_info(e.short, string.format(
			"%d bytes: at least 44 (BTH + PTH + ICRC) needed", len))
		pinfo.cols.info = "MetaRoCE [short]"
		return len
	end

	-- BTH
	local bth = t:add(tvb(0, BTH_LEN), "Base transport header")
	local b0 = tvb(0, 1):uint()
	local ver = bit32.rshift(b0, 4)
	local vi = bth:add(f.version, tvb(0, 1))
	if ver ~= 1 then
		vi:add_proto_expert_info(e.version)
	end
	reserved(bth, f.bth_rsvd0, tvb(0, 1), bit32.band(b0, 0x0f))
	local op = tvb(1, 1):uint()
	local oi = bth:add(f.opcode, tvb(1, 1))
	local name = OPCODES[op]
	if not name then
		oi:add_proto_expert_info(e.opcode)
	end
	local flags = tvb(2, 2):uint()
	local fl = bth:add(f.flags, tvb(2, 2))
	fl:add(f.f_solicited, tvb(2, 2))
	fl:add(f.f_ack_req, tvb(2, 2))
	fl:add(f.f_retx, tvb(2, 2))
	fl:add(f.f_gbn, tvb(2, 2))
	reserved(fl, f.f_rsvd, tvb(2, 2), bit32.band(flags, 0xfff0))
	local dqpn = bit32.band(tvb(4, 4):uint(), 0xffffff)
	local sqpn = bit32.band(tvb(8, 4):uint(), 0xffffff)
	bth:add(f.dqpn, tvb(4, 4))
	reserved(bth, f.dqpn_rsvd, tvb(4, 4), bit32.band(tvb(4, 4):uint(), 0xff000000))
	bth:add(f.sqpn, tvb(8, 4))
	reserved(bth, f.sqpn_rsvd, tvb(8, 4), bit32.band(tvb(8, 4):uint(), 0xff000000))
	local ssn, msn = tvb(12, 4):uint(), tvb(16, 4):uint()
	local rsn, offset, msg_len = tvb(20, 4):uint(), tvb(24, 4):uint(), tvb(28, 4):uint()
	bth:add(f.ssn, tvb(12, 4))
	bth:add(f.msn, tvb(16, 4))
	local rsn_i = bth:add(f.rsn, tvb(20, 4))
	local off_i = bth:add(f.offset, tvb(24, 4))
	local len_i = bth:add(f.msg_len, tvb(28, 4))

	-- PTH
	local pth = t:add(tvb(BTH_LEN, PTH_LEN), "Per-path header")
	local path = tvb(32, 2):uint()
	pth:add(f.path_id, tvb(32, 2))
	reserved(pth, f.pflags, tvb(34, 1), tvb(34, 1):uint())
	pth:add(f.pth_plane, tvb(35, 1)) -- MR-HDR-14
	pth:add(f.ppsn, tvb(36, 4))
	local ppsn = tvb(36, 4):uint()

	-- ICRC (MR-ICRC-1..3): over everything before it.
	local want, got = 0, 0
	if not quoted then
		want = tvb(len - 4, 4):uint()
		got = crc32c(tvb, 0, len - 4)
		local ci = t:add(f.icrc, tvb(len - 4, 4))
		if want == got then
			t:add(f.icrc_status, "good"):set_generated()
		else
			t:add(f.icrc_status, "bad"):set_generated()
			ci:add_proto_expert_info(e.icrc, string.format(
				"ICRC 0x%08x, computed 0x%08x", want, got))
		end
	end

	local info = string.format("%s dqpn=0x%x sqpn=0x%x", name or
		string.format("opcode 0x%02x", op), dqpn, sqpn)
	if bit32.band(flags, 0x0004) ~= 0 then
		t:add_proto_expert_info(e.retx)
	end
	if ver ~= 1 or not name then
		pinfo.cols.info = "MetaRoCE " .. info .. " [malformed]"
		return len
	end

	-- Extension headers (MR-HDR-2)
	local pos = BTH_LEN + PTH_LEN
	local need = pos + ICRC_LEN
	for _, x in ipairs(EXT[op]) do
		need = need + EXT_LEN[x]
	end
	if quoted and len < need - ICRC_LEN then
		pinfo.cols.info = "MetaRoCE " .. info .. " [quoted in an ICMP error, short]"
		return len
	elseif not quoted and len < need then
		t:add_proto_expert_info(e.short, string.format(
			"%s needs at least %d bytes, has %d", name, need, len))
		pinfo.cols.info = "MetaRoCE " .. info .. " [short]"
		return len
	end
	local dma_len, nblocks, syndrome
	for _, x in ipairs(EXT[op]) do
		if x == "reth" then
			local h = t:add(tvb(pos, 16), "RETH")
			h:add(f.reth_vaddr, tvb(pos, 8))
			h:add(f.reth_rkey, tvb(pos + 8, 4))
			h:add(f.reth_dma_len, tvb(pos + 12, 4))
			dma_len = tvb(pos + 12, 4):uint()
			info = info .. string.format(" va=0x%s rkey=0x%x len=%d",
				tvb(pos, 8):uint64():tohex(), tvb(pos + 8, 4):uint(), dma_len)
		elseif x == "imm" then
			local h = t:add(tvb(pos, 4), "IMMDT")
			h:add(f.imm, tvb(pos, 4))
			info = info .. " imm=" .. tostring(tvb(pos, 4):bytes())
		elseif x == "ieth" then
			local h = t:add(tvb(pos, 4), "IETH")
			h:add(f.ieth_rkey, tvb(pos, 4))
			info = info .. string.format(" inv_rkey=0x%x", tvb(pos, 4):uint())
		elseif x == "atometh" then
			local h = t:add(tvb(pos, 28), "ATOMETH")
			h:add(f.atom_vaddr, tvb(pos, 8))
			h:add(f.atom_rkey, tvb(pos + 8, 4))
			h:add(f.atom_swap_add, tvb(pos + 12, 8))
			h:add(f.atom_compare, tvb(pos + 20, 8))
		elseif x == "atomacketh" then
			local h = t:add(tvb(pos, 8), "ATOMACKETH")
			h:add(f.atom_orig, tvb(pos, 8))
		elseif x == "deth" then
			local h = t:add(tvb(pos, 8), "DETH")
			h:add(f.deth_qkey, tvb(pos, 4))
			reserved(h, f.deth_rsvd, tvb(pos + 4, 4), tvb(pos + 4, 4):uint())
			info = info .. string.format(" qkey=0x%x", tvb(pos, 4):uint())
		elseif x == "aeth" then
			local h = t:add(tvb(pos, 24), "AETH")
			syndrome = tvb(pos, 1):uint()
			local si = h:add(f.aeth_syndrome, tvb(pos, 1))
			local rnr = tvb(pos + 1, 1):uint()
			local ri = h:add(f.aeth_rnr_timer, tvb(pos + 1, 1))
			nblocks = tvb(pos + 2, 1):uint()
			local ni = h:add(f.aeth_nblocks, tvb(pos + 2, 1))
			reserved(h, f.aeth_rsvd3, tvb(pos + 3, 1), tvb(pos + 3, 1):uint())
			local nak_msn = tvb(pos + 4, 4):uint()
			local nmi = h:add(f.aeth_nak_msn, tvb(pos + 4, 4))
			h:add(f.aeth_cum_ssn, tvb(pos + 8, 4))
			h:add(f.aeth_cum_msn, tvb(pos + 12, 4))
			h:add(f.aeth_rate_hint, tvb(pos + 16, 4))
			h:add(f.aeth_ecn_ce, tvb(pos + 20, 2))
			reserved(h, f.aeth_rsvd22, tvb(pos + 22, 2), tvb(pos + 22, 2):uint())
			if not SYNDROMES[syndrome] then
				bad(si, "Reserved syndrome (MR-ACK-3)")
			elseif syndrome ~= 0 then
				si:add_proto_expert_info(e.nak, "NAK " .. SYNDROMES[syndrome])
			end
			if (syndrome == 2 and rnr > 31) or (syndrome ~= 2 and rnr ~= 0) then
				bad(ri, "rnr_timer only with RNR, at most 31 (MR-ACK-4)")
			end
			if syndrome == 0 and nak_msn ~= 0 then
				bad(nmi, "nak_msn on a plain ACK (MR-ACK-5)")
			end
			if nblocks > MAX_BLOCKS then
				bad(ni, "More than 64 SACK blocks (MR-PARSE-5)")
			end
			info = string.format("%s%s dqpn=0x%x sqpn=0x%x cum_ssn=%d blocks=%d",
				syndrome == 0 and "ACK" or "NAK ",
				syndrome == 0 and "" or (SYNDROMES[syndrome] or tostring(syndrome)),
				dqpn, sqpn, tvb(pos + 8, 4):uint(), nblocks)
		end
		pos = pos + EXT_LEN[x]
	end

	if quoted then
		-- The extension headers are decoded above; what follows them
		-- (payload, SACK blocks, ICRC) is cut off.
		pinfo.cols.info = info .. " [quoted in an ICMP error]"
		return len
	end
	local plen = len - ICRC_LEN - pos
	if op == 0x10 then
		-- ACK: exactly nblocks SACK blocks, then the ICRC (MR-ACK-1).
		local seen, used, prev = {}, 0, nil
		for i = 0, (nblocks > MAX_BLOCKS and -1 or nblocks - 1) do
			local b, cum = dissect_sack(tvb, pos + used, plen - used, t, seen, prev)
			if not b then
				used = nil
				break
			end
			used, prev = used + b, cum
		end
		if nblocks > MAX_BLOCKS or not used then
			t:add_proto_expert_info(e.short, "ACK shorter than its SACK blocks (MR-PARSE-5)")
			pinfo.cols.info = "MetaRoCE " .. info .. " [short]"
			return len
		end
		if used > MAX_SACK_BYTES then
			t:add_proto_expert_info(e.field, "SACK blocks of more than 1280 bytes (MR-ACK-9)")
		end
		if plen > used then
			t:add_proto_expert_info(e.field, "Bytes after the last SACK block (MR-ACK-1)")
		end
		if rsn ~= 0 or offset ~= 0 or msg_len ~= 0 then
			bad(len_i, "rsn, offset and msg_len must be 0 on an ACK (MR-ACK-2)")
		end
	else
		t:add(f.payload_len, plen):set_generated()
		if plen > 0 then
			t:add(f.payload, tvb(pos, plen))
		end
		-- MR-PARSE-7, the rules one packet can be checked against.
		if plen > MAX_PAYLOAD then
			bad(t, "Payload longer than 4096 bytes (MR-HDR-13)")
		end
		if msg_len > MAX_MSG then
			bad(len_i, "msg_len above 2^31 (MR-HDR-12)")
		end
		if rsn ~= 0 and op ~= 0x01 and op ~= 0x02 and op ~= 0x0a and op ~= 0x06 and op ~= 0x09 then
			bad(rsn_i, "rsn must be 0 on this opcode (MR-HDR-9)")
		end
		if op <= 0x04 or op == 0x06 then
			if offset + plen > msg_len then
				bad(off_i, "offset + payload beyond msg_len (MR-HDR-10)")
			elseif plen == 0 and (offset ~= 0 or msg_len ~= 0) then
				bad(off_i, "Empty packet of a non-empty message (MR-HDR-11)")
			end
		end
		if (op == 0x03 or op == 0x04) and dma_len ~= msg_len then
			bad(len_i, "dma_len must equal msg_len (MR-EXT-1)")
		end
		if op == 0x05 and (plen ~= 0 or offset ~= 0 or msg_len ~= dma_len) then
			bad(len_i, "READ_REQ: no payload, offset 0, msg_len = dma_len (MR-EXT-2)")
		end
		if ((op >= 0x07 and op <= 0x09) or op == 0x0b) and (plen ~= 0 or offset ~= 0 or msg_len ~= 8) then
			bad(len_i, "Atomics: no payload, offset 0, msg_len 8 (MR-EXT-5/6/9)")
		end
		if (op == 0x20 or op == 0x21) and (offset ~= 0 or msg_len ~= plen) then
			bad(len_i, "UD: offset 0 and msg_len = payload length (MR-EXT-7)")
		end
		info = info .. string.format(" ssn=%d msn=%d off=%d/%d", ssn, msn, offset, msg_len)
	end
	info = info .. string.format(" path=%d ppsn=%d", path, ppsn)
	if want ~= got then
		info = info .. " [bad ICRC]"
	end
	pinfo.cols.info = info
	return len
end

local registered_port
local function register_port()
	local udp = DissectorTable.get("udp.port")
	if registered_port then
		udp:remove(registered_port, p)
	end
	registered_port = p.prefs.udp_port
	udp:add(registered_port, p)
end
p.prefs_changed = register_port
register_port()
