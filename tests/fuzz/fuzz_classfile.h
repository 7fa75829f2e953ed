/* The fuzz target's entry point, shared with the replay driver and the
 * mutation test (tests/golden/test_mutate.c), which call it directly. */
#ifndef JINST_FUZZ_CLASSFILE_H
#define JINST_FUZZ_CLASSFILE_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
