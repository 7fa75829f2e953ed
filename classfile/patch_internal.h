/*
 * Internals of the code patcher (include/jinst/patch.h), shared by its
 * modules: patch.c (open, and the insertions, handler and ranges a caller
 * asks for) and patch_commit.c (layout, and the new Code attribute).
 */
#ifndef JINST_PATCH_INTERNAL_H
#define JINST_PATCH_INTERNAL_H

#include "internal.h"

#include "jinst/patch.h"

typedef struct insertion {
	uint32_t offset;
	uint32_t rank; /* 0 outside, 1 inside: outside code always comes first */
	uint32_t seq;  /* call order, for a stable sort */
	uint32_t len;
	uint16_t depth;
	const uint8_t *bytes;
} insertion;

/* A position where offsets shift: an insertion position or a switch. */
typedef struct point {
	uint32_t orig;
	uint32_t pos;   /* new offset of the position (after outside code) */
	uint32_t insn;  /* new offset of the instruction (after inside code) */
	int32_t after;  /* shift for original offsets past orig, up to the next point */
	uint32_t ins_lo, ins_hi; /* its insertions */
} point;

typedef struct range {
	uint32_t start, end;
} range;

struct jinst_patch {
	jinst_class *cls;
	jinst_member *method;
	jinst_attr *attr;
	const uint8_t *info;       /* the Code attribute's info */
	uint32_t info_len;
	uint16_t max_stack, max_locals;
	uint32_t code_length;
	const uint8_t *code;
	uint32_t tail;             /* offset in info of exception_table_length */
	uint16_t nframes;          /* number_of_entries of the StackMapTable, 0 without */
	bool has_frames;
	/* 50+, no StackMapTable, yet a position that needs a frame: the
	 * class is one its VM does not verify (patch.c), the output gets none. */
	bool frameless;
	uint16_t *starts;          /* instruction offsets */
	uint32_t count;
	uint8_t *is_start;         /* bitmap over code_length + 1 */
	uint8_t *dead;             /* instructions after an unconditional transfer */
	uint8_t *need;             /* at commit (50+): positions that need a frame, cleared by the frames */
	uint16_t *fix;             /* offsets of branches and switches */
	uint32_t nfix;
	insertion *ins;
	uint32_t nins, cap;
	bool sorted;
	const uint8_t *handler;
	uint32_t handler_len;
	uint16_t handler_depth, catch_type;
	range *ranges;
	uint32_t nranges, rcap;
	point *pts;
	uint32_t npts;
	bool spent;
};

static inline bool is_start(const jinst_patch *p, uint32_t off)
{
	return off < p->code_length && (p->is_start[off >> 3] >> (off & 7) & 1);
}

static inline bool is_switch(uint8_t op)
{
	return jinst_opcodes[op].flags & JINST_OPF_SWITCH;
}

static inline void set_bit(uint8_t *map, uint32_t off)
{
	map[off >> 3] |= (uint8_t)(1u << (off & 7));
}

#endif
