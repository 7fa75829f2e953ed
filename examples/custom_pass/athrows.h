/* The example's pass: athrow instructions counted per method, and a call
 * to OWNER.thrown(I)V before each (athrows.c). */
#ifndef ATHROWS_H
#define ATHROWS_H

#include "jinst/instrument.h"
#include "jinst/opcodes.h"

typedef struct athrows athrows;

typedef struct athrows_method {
	const char *class_name, *method, *descriptor;
	uint32_t athrows;
} athrows_method;

/* Fills *out with the pass (hand it to jinst_instrument_add_pass, which
 * then owns it) and *state with its figures, readable until the
 * instrumenter is freed. */
int athrows_new(jinst_pass *out, athrows **state, const char *owner);

/* The methods the pass changed, with their athrow counts. */
const athrows_method *athrows_methods(const athrows *t, size_t *count);

#endif
