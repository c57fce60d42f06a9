/* fuzz.h - what every harness of tests/fuzz/ gives: the libFuzzer entry
 * point, and the seeds of its corpus, written by `fuzz_replay --seeds`
 * (replay.c) from what the code itself encodes, so that the corpus
 * follows the formats. A harness checks what its decoder must promise
 * on any bytes: no crash, no read outside them (ASan), and a refusal
 * that names its cause.
 */
#ifndef LEV_FUZZ_H
#define LEV_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Calls emit(name, bytes, len) for each seed of the harness's corpus. */
void fuzz_seeds(void (*emit)(const char *name, const void *p, size_t n));

/* Aborts with a message when a decoder broke its promise (the fuzzer
 * reports it as a crash). */
void fuzz_fail(const char *what, const char *detail);

#endif
