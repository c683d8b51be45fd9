/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected form 0x82F63B78,
 * initial value and final XOR 0xFFFFFFFF): the ICRC of the wire format
 * (docs/spec/wire.md, MR-ICRC-1). Check value: "123456789" -> 0xE3069283.
 *
 * Pure functions, no state: safe from any thread. On x86-64 CPUs with
 * SSE4.2 the CRC32 instruction is used; elsewhere a slicing-by-8 table.
 */
#ifndef MR_CRC32C_H
#define MR_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC32C of buf[0, len), continuing from crc (0 to start). Chaining is
 * exact: mr_crc32c(mr_crc32c(0, a, n), b, m) is the CRC of a || b. */
uint32_t mr_crc32c(uint32_t crc, const void *buf, size_t len);

/* The same, always in software (table-driven); tests compare the two. */
uint32_t mr_crc32c_sw(uint32_t crc, const void *buf, size_t len);

#endif /* MR_CRC32C_H */
