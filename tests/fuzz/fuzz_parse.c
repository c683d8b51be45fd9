/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the packet parser (docs/spec/wire.md MR-PARSE-*).
 * Each input is parsed twice: as given (mostly exercising the length,
 * version, opcode and ICRC checks, MR-PARSE-1..4), and with its last four
 * bytes replaced by a correct ICRC, so the field and length rules behind
 * the ICRC (MR-PARSE-5..7) are reached too. Properties checked:
 *  - the parser never reads outside the input (ASan: libFuzzer hands over
 *    an exactly sized heap copy);
 *  - a packet that parses re-encodes to exactly the same bytes (the wire
 *    format is canonical: reserved bits 0, no slack);
 *  - the payload lies inside the input, just before the ICRC;
 *  - hardware and software CRC32C agree;
 *  - the trace line (mr_wire_format()) truncates safely.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mr_crc32c.h"
#include "mr_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t enc[MR_BTH_LEN + MR_PTH_LEN + MR_AETH_LEN +
		   MR_ACK_MAX_SACK_BYTES + MR_WIRE_MAX_PAYLOAD +
		   MR_ICRC_LEN];

static void check_parsed(const uint8_t *buf, size_t size)
{
	struct mr_pkt p;
	size_t n;
	int rc = mr_wire_parse(buf, size, &p);

	if (rc < MR_PARSE_OK || rc >= MR_PARSE_ERR_COUNT)
		abort();
	if (rc != MR_PARSE_OK)
		return;
	if (p.payload < buf ||
	    p.payload + p.payload_len + MR_ICRC_LEN != buf + size)
		abort();
	if (mr_wire_peek_dqpn(buf, size) != p.bth.dqpn)
		abort();
	n = mr_wire_encode(&p, enc, sizeof(enc));
	if (n != size || memcmp(enc, buf, size))
		abort();
	/* the trace line: a short buffer is truncated, never overrun */
	{
		char small[48], line[1024];
		size_t a = mr_wire_format(&p, small, sizeof(small));
		size_t b = mr_wire_format(&p, line, sizeof(line));

		if (a != b ||
		    strlen(small) !=
			    (a < sizeof(small) ? a : sizeof(small) - 1))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	if (mr_crc32c(0, data, size) != mr_crc32c_sw(0, data, size))
		abort();
	check_parsed(data, size);
	if (size < MR_ICRC_LEN)
		return 0;
	/* An exactly sized copy, resealed: ASan still sees every overrun. */
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	mr_wire_seal(copy, size - MR_ICRC_LEN);
	check_parsed(copy, size);
	free(copy);
	return 0;
}
