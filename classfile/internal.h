/*
 * Internals of libjinst_classfile shared between its modules. Nothing outside
 * classfile/ includes this file.
 */
#ifndef JINST_CLASSFILE_INTERNAL_H
#define JINST_CLASSFILE_INTERNAL_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "jinst/classfile.h"
#include "jinst/opcodes.h"

/* ---- the model --------------------------------------------------------------- */

/* A member's attribute headers are checked when the class is parsed, but
 * its list is only built on first use (jinst_member_attrs, or a write that
 * encodes the member): a class that is copied never reads the attributes
 * of its fields and methods, and an untouched member is copied as one span. */
struct jinst_member {
	uint32_t offset;         /* of access_flags */
	uint32_t end;            /* one past the member's last byte */
	uint16_t access_flags, name_index, descriptor_index;
	bool modified;           /* header or attribute list changed: re-encode the member */
	bool method;             /* in methods[], so its attributes have context METHOD */
	bool attrs_read;         /* attrs holds the list; until then it is empty */
	jinst_class *cls;        /* whose bytes hold the attributes */
	jinst_attr_list attrs;
};

typedef struct jinst_pool jinst_pool; /* the builder's hash table and appended entries */

struct jinst_class {
	jinst_arena *arena;
	bool owns_arena;
	const uint8_t *bytes;
	uint32_t len;
	uint16_t minor_version, major_version;

	/* Constant pool as read: for each index, its tag and the offset of its
	 * tag byte. Index 0 and the slot after a Long/Double have tag 0. */
	uint16_t cp_count;        /* original constant_pool_count */
	uint8_t *cp_tags;
	uint32_t *cp_offsets;
	uint32_t cp_end;          /* offset just past the constant pool */
	jinst_pool *pool;         /* NULL until the first jinst_cp_add */
	/* The original Class constants by name (jinst_cp_find_class): hash
	 * slots holding indices, 0 = empty; NULL until the first lookup. */
	uint16_t *class_names;
	uint32_t class_names_mask;
	/* By pool index (the original pool's and the first added ones): the
	 * stack words of a field or method reference, as the editor's depth
	 * flow reads them (edit_layout.c, ref_words); NULL until the first
	 * lookup. */
	uint16_t *ref_words;
	/* By original pool index: how the inference types a field or method
	 * reference (infer.c, ref_typed), known when ref_kinds[index] says so;
	 * both NULL until the first lookup. */
	struct jinst_ref_type *ref_types;
	uint8_t *ref_kinds;
	/* The locals of the last method's implicit first frame
	 * (jinst_initial_frame), for init_member with access flags, name and
	 * descriptor init_key; init_member NULL until the first one. */
	const jinst_member *init_member;
	uint64_t init_key;
	const jinst_ftype *init_locals;
	uint16_t init_count;
	/* By Utf8 index: 1 + the attribute kind that name has in some context,
	 * 0 when not looked up yet; NULL until an attribute list is built. */
	uint8_t *attr_kinds;

	uint16_t access_flags, this_class, super_class;
	uint16_t interface_count;
	uint32_t interfaces_offset;
	uint16_t field_count, method_count;
	jinst_member *fields, *methods;
	uint32_t fields_offset;   /* of fields_count */
	uint32_t methods_offset;  /* of methods_count */
	jinst_attr_list attrs;
	uint32_t attrs_offset;    /* of the class's attributes_count */
	bool header_modified;     /* access_flags/this/super/interfaces changed */
	uint16_t methods_added;   /* by jinst_class_add_method: the writer writes methods_count */
	bool old_code_layout;     /* version 45.0-45.2: Code uses u1 max_stack/max_locals, u2 code_length */
};

/* ---- the arena's fast path --------------------------------------------------------- */

/* The arena (arena.c) as the library sees it, so the common allocation, a
 * few bytes that fit the current block, is a bump inlined at the call: the
 * editor and the inference allocate a few dozen times per method, and the
 * call alone cost more than the bump. Anything else (a new block, a size
 * near the limit, the one-malloc-per-allocation debug arena) goes to the
 * function. */
typedef struct jinst_arena_block {
	struct jinst_arena_block *next;
	size_t size, used;
	/* data follows, 8-aligned */
} jinst_arena_block;

struct jinst_arena {
	jinst_arena_block *head; /* current block; older ones follow through next */
	size_t total;            /* bytes of all blocks */
};

#define JINST_ARENA_HEADER ((sizeof(jinst_arena_block) + 7) & ~(size_t)7)

#ifndef JINST_DEBUG_ARENA
static inline void *jinst_arena_bump(jinst_arena *a, size_t size)
{
	jinst_arena_block *b = a->head;
	size_t need = (size + 7) & ~(size_t)7;
	if (size <= 65536 && b->size - b->used >= need) {
		void *p = (uint8_t *)b + JINST_ARENA_HEADER + b->used;
		b->used += need;
		return p;
	}
	return (jinst_arena_alloc)(a, size);
}

static inline void *jinst_arena_zbump(jinst_arena *a, size_t size)
{
	void *p = jinst_arena_bump(a, size);
	if (p)
		memset(p, 0, size);
	return p;
}

#define jinst_arena_alloc(a, size) jinst_arena_bump((a), (size))
#define jinst_arena_zalloc(a, size) jinst_arena_zbump((a), (size))
#endif

/* ---- bounds-checked reader with a sticky error flag --------------------------- */

/* Offsets are absolute in the class file, so diagnostics name real offsets.
 * A read past `end` returns zeros and sets `bad`; callers check once per record. */
typedef struct jinst_reader {
	const uint8_t *base;
	uint32_t pos, end;
	bool bad;
} jinst_reader;

static inline void jinst_reader_init(jinst_reader *r, const uint8_t *base, uint32_t pos, uint32_t end)
{
	r->base = base;
	r->pos = pos;
	r->end = end;
	r->bad = false;
}

static inline uint32_t jinst_rd_left(const jinst_reader *r)
{
	return r->end - r->pos;
}

static inline bool jinst_rd_need(jinst_reader *r, uint32_t n)
{
	if (r->bad || r->end - r->pos < n) {
		r->bad = true;
		return false;
	}
	return true;
}

static inline uint8_t jinst_rd_u1(jinst_reader *r)
{
	if (!jinst_rd_need(r, 1))
		return 0;
	return r->base[r->pos++];
}

static inline uint16_t jinst_rd_u2(jinst_reader *r)
{
	if (!jinst_rd_need(r, 2))
		return 0;
	const uint8_t *p = r->base + r->pos;
	r->pos += 2;
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t jinst_rd_u4(jinst_reader *r)
{
	if (!jinst_rd_need(r, 4))
		return 0;
	const uint8_t *p = r->base + r->pos;
	r->pos += 4;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Pointer to the next n bytes and skips them, or NULL (and bad) past the end. */
static inline const uint8_t *jinst_rd_bytes(jinst_reader *r, uint32_t n)
{
	if (!jinst_rd_need(r, n))
		return NULL;
	const uint8_t *p = r->base + r->pos;
	r->pos += n;
	return p;
}

static inline uint16_t jinst_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t jinst_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void jinst_put_u2(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void jinst_put_u4(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* ---- growable output buffer ---------------------------------------------------- */

/* malloc-backed; an allocation failure sticks in `oom` and later writes are dropped. */
typedef struct jinst_buf {
	uint8_t *data;
	size_t len, cap;
	bool oom;
} jinst_buf;

bool jinst_buf_grow(jinst_buf *b, size_t need);

static inline bool jinst_buf_reserve(jinst_buf *b, size_t n)
{
	return b->cap - b->len >= n || jinst_buf_grow(b, n);
}

static inline void jinst_buf_u1(jinst_buf *b, uint8_t v)
{
	if (jinst_buf_reserve(b, 1))
		b->data[b->len++] = v;
}

static inline void jinst_buf_u2(jinst_buf *b, uint16_t v)
{
	if (jinst_buf_reserve(b, 2)) {
		b->data[b->len++] = (uint8_t)(v >> 8);
		b->data[b->len++] = (uint8_t)v;
	}
}

static inline void jinst_buf_u4(jinst_buf *b, uint32_t v)
{
	if (jinst_buf_reserve(b, 4)) {
		uint8_t *p = b->data + b->len;
		p[0] = (uint8_t)(v >> 24);
		p[1] = (uint8_t)(v >> 16);
		p[2] = (uint8_t)(v >> 8);
		p[3] = (uint8_t)v;
		b->len += 4;
	}
}

static inline void jinst_buf_bytes(jinst_buf *b, const void *p, size_t n)
{
	if (n && jinst_buf_reserve(b, n)) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
	}
}

static inline void jinst_buf_patch_u4(jinst_buf *b, size_t at, uint32_t v)
{
	if (!b->oom) {
		uint8_t *p = b->data + at;
		p[0] = (uint8_t)(v >> 24);
		p[1] = (uint8_t)(v >> 16);
		p[2] = (uint8_t)(v >> 8);
		p[3] = (uint8_t)v;
	}
}

static inline void jinst_buf_patch_u2(jinst_buf *b, size_t at, uint16_t v)
{
	if (!b->oom) {
		b->data[at] = (uint8_t)(v >> 8);
		b->data[at + 1] = (uint8_t)v;
	}
}

void jinst_buf_free(jinst_buf *b);

/* ---- diagnostics ------------------------------------------------------------------ */

/* Records code, offset and message in diag (which may be NULL) and returns code. */
int jinst_fail(jinst_diag *diag, int code, uint32_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Sets diag->where unless an inner layer already set it. */
void jinst_diag_where(jinst_diag *diag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "method name(desc)" / "field name:desc" for diagnostics. */
void jinst_diag_member(jinst_diag *diag, const jinst_class *cls, const jinst_member *m, bool method);

/* ---- attributes -------------------------------------------------------------------- */

/* Reads attributes_count and the attribute headers at r, assigning each
 * attribute its kind from its name and context. Contents are not decoded.
 * With list NULL the headers are only checked (the same checks, the same
 * diagnostics) and r is left past the attributes. */
int jinst_attrs_read(jinst_class *cls, jinst_reader *r, enum jinst_attr_context ctx,
                     jinst_attr_list *list, jinst_diag *diag);
/* Builds m's attribute list if it is not built yet (jinst_member_attrs with
 * a diagnostic). Its headers were checked at parse time: only ENOMEM fails. */
int jinst_member_attrs_load(jinst_member *m, jinst_diag *diag);
/* Writes attributes_count and every attribute: a copy of the original info
 * unless the attribute is modified or from_model is set, in which case its
 * model is encoded (decoding it first when needed). */
int jinst_attrs_write(jinst_class *cls, jinst_attr_list *list, bool from_model, jinst_buf *out,
                      jinst_diag *diag);
/* The attribute kinds with a model (JVMS 4.7), one row each: the kind, the
 * model's type, its decoder (dec_<name> in attr.c) and its encoder
 * (enc_<name> in attr_encode.c). Both files build their table by kind from
 * these rows, so every kind that decodes to a model also encodes from it.
 * Synthetic, Deprecated and unknown attributes have no model: their info is
 * copied. */
#define JINST_ATTR_MODELS(X)                                                                          \
	X(JINST_ATTR_CONSTANT_VALUE, jinst_attr_index, constant_value, index)                         \
	X(JINST_ATTR_SIGNATURE, jinst_attr_index, utf8_index, index)                                  \
	X(JINST_ATTR_SOURCE_FILE, jinst_attr_index, utf8_index, index)                                \
	X(JINST_ATTR_MODULE_MAIN_CLASS, jinst_attr_index, class_index, index)                         \
	X(JINST_ATTR_NEST_HOST, jinst_attr_index, class_index, index)                                 \
	X(JINST_ATTR_EXCEPTIONS, jinst_index_list, class_list, index_list)                            \
	X(JINST_ATTR_NEST_MEMBERS, jinst_index_list, class_list, index_list)                          \
	X(JINST_ATTR_PERMITTED_SUBCLASSES, jinst_index_list, class_list, index_list)                  \
	X(JINST_ATTR_MODULE_PACKAGES, jinst_index_list, package_list, index_list)                     \
	X(JINST_ATTR_INNER_CLASSES, jinst_inner_classes, inner_classes, inner_classes)                \
	X(JINST_ATTR_ENCLOSING_METHOD, jinst_enclosing_method, enclosing_method, enclosing_method)    \
	X(JINST_ATTR_SOURCE_DEBUG_EXTENSION, jinst_blob, source_debug_extension, blob)                \
	X(JINST_ATTR_LINE_NUMBER_TABLE, jinst_line_numbers, line_numbers, line_numbers)               \
	X(JINST_ATTR_LOCAL_VARIABLE_TABLE, jinst_local_variables, local_variables, local_variables)   \
	X(JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE, jinst_local_variables, local_variables, local_variables) \
	X(JINST_ATTR_RUNTIME_VISIBLE_ANNOTATIONS, jinst_annotations, annotations_attr, annotations_attr) \
	X(JINST_ATTR_RUNTIME_INVISIBLE_ANNOTATIONS, jinst_annotations, annotations_attr, annotations_attr) \
	X(JINST_ATTR_RUNTIME_VISIBLE_PARAMETER_ANNOTATIONS, jinst_parameter_annotations, parameter_annotations, \
	  parameter_annotations)                                                                      \
	X(JINST_ATTR_RUNTIME_INVISIBLE_PARAMETER_ANNOTATIONS, jinst_parameter_annotations, parameter_annotations, \
	  parameter_annotations)                                                                      \
	X(JINST_ATTR_RUNTIME_VISIBLE_TYPE_ANNOTATIONS, jinst_type_annotations, type_annotations, type_annotations) \
	X(JINST_ATTR_RUNTIME_INVISIBLE_TYPE_ANNOTATIONS, jinst_type_annotations, type_annotations,   \
	  type_annotations)                                                                           \
	X(JINST_ATTR_ANNOTATION_DEFAULT, jinst_element_value, annotation_default, annotation_default) \
	X(JINST_ATTR_BOOTSTRAP_METHODS, jinst_bootstrap_methods, bootstrap_methods, bootstrap_methods) \
	X(JINST_ATTR_METHOD_PARAMETERS, jinst_method_parameters, method_parameters, method_parameters) \
	X(JINST_ATTR_MODULE, jinst_module, module, module)                                            \
	X(JINST_ATTR_RECORD, jinst_record, record, record)                                            \
	X(JINST_ATTR_CODE, jinst_code, code_attr, code_attr)                                          \
	X(JINST_ATTR_STACK_MAP_TABLE, jinst_stack_map, stack_map_table, stack_map_table)

/* Encodes a->model as attribute info bytes (no name index or length). */
int jinst_attr_encode(jinst_class *cls, jinst_attr *a, bool from_model, jinst_buf *out,
                      jinst_diag *diag);
/* Kind of an attribute named name[0..len) in context ctx. */
enum jinst_attr_kind jinst_attr_kind_of(const uint8_t *name, uint16_t len, enum jinst_attr_context ctx);
/* The same for the Utf8 at name_index of the original pool, looked up once
 * per name and class (cls->attr_kinds); UNKNOWN when it is no Utf8. */
enum jinst_attr_kind jinst_attr_kind_at(jinst_class *cls, uint16_t name_index, enum jinst_attr_context ctx);

/* Length of the instruction at code[pc] (pc < len), or 0 when it is
 * malformed or runs past the end. Switches are measured from their padding
 * and counts. */
uint32_t jinst_insn_length(const uint8_t *code, uint32_t len, uint32_t pc);

/* jinst_code_decode, also giving what the decoder builds anyway to check
 * branch targets: the index of the instruction at each pc (-1 inside an
 * instruction; code_length + 1 entries, the last -1) and the indices of
 * the instructions that jump (branches, jsr, switches), in code order.
 * Arena-allocated. */
int jinst_code_decode_at(jinst_class *cls, const jinst_code *code, jinst_insn **insns, uint32_t *count,
                         int32_t **insn_at, uint32_t **jumps, uint32_t *njumps, jinst_diag *diag);

/* Words an instruction pops and pushes (jsr: what its target receives);
 * -1 when its pool reference does not say (edit_layout.c). */
int jinst_insn_effect(jinst_class *cls, const jinst_insn *in, int *pops, int *pushes);

/* Encodes instructions back into code bytes (deep mode: same layout as decoded). */
int jinst_code_encode(jinst_class *cls, const jinst_insn *insns, uint32_t count, jinst_buf *out,
                      jinst_diag *diag);

/* One instruction of straight-line code through the abstract interpreter of
 * infer.c, for the editor's derived frames (classfile/edit.c). Locals and
 * stack hold one slot per word (a long or double is its type, then top).
 * `new` pushes Uninitialized(in->offset); the receiver of an <init> that is
 * Uninitialized(v) becomes new_class(ctx, v). Branch operands are not read.
 * Returns 0 or a negative JINST_E* code. */
typedef struct jinst_sim {
	uint16_t max_locals, max_stack;
	jinst_ftype *locals, *stack;
	uint16_t sp;
	jinst_ftype (*new_class)(void *ctx, uint16_t value);
	void *ctx;
	void *run; /* the interpreter's state, made on the first step (NULL before) */
} jinst_sim;
int jinst_sim_step(jinst_class *cls, jinst_sim *s, const jinst_insn *in, jinst_diag *diag);

/* The locals of a method's implicit first frame (JVMS 4.10.1.6), as
 * jinst_stack_map_expand gives them with no map, but kept in the class for
 * the method last asked about: the inference starts from them and frame
 * compression writes the first frame against them, one method after the
 * other. Read-only; they live as long as the class. */
int jinst_initial_frame(jinst_class *cls, const jinst_member *m, const jinst_ftype **locals, uint16_t *count,
                        jinst_diag *diag);

/* Parses one field type of a descriptor at *p into t and advances *p past
 * it; false when it is malformed (JVMS 4.3.2: a base type, L name ; with a
 * name, or at most 255 dimensions of one of these). Every verification type
 * taken from a descriptor or a class name goes through here, so later code
 * may trust an Object type's name: an array name is a whole descriptor. */
bool jinst_descriptor_type(const uint8_t **p, const uint8_t *end, jinst_ftype *t);

/* Modified UTF-8 check; lenient accepts the overlong forms of versions <= 47.
 * Returns the index of the first invalid byte, or -1. */
long jinst_mutf8_error_at(const uint8_t *s, size_t len, bool lenient);
long jinst_mutf8_error_at_scalar(const uint8_t *s, size_t len, bool lenient);
#ifdef __SSE2__
bool jinst_mutf8_valid_sse2(const uint8_t *s, size_t len, bool lenient);
#endif

/* The high bit of every byte of v that is not plain ASCII: a high bit of its
 * own, or zero. (A byte above a zero byte may be flagged too, which only
 * sends text to the full check.) */
static inline uint64_t jinst_nonascii_bits(uint64_t v)
{
	return (v | ((v - 0x0101010101010101ull) & ~v)) & 0x8080808080808080ull;
}

/* Almost every name in a class file is plain ASCII: OR the words together
 * without branching and look at the result once. */
static inline bool jinst_mutf8_check(const uint8_t *s, size_t len, bool lenient)
{
	uint64_t acc = 0, v;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&v, s + i, 8);
		acc |= jinst_nonascii_bits(v);
	}
	if (i < len) {
		if (len >= 8) {
			memcpy(&v, s + len - 8, 8);
			acc |= jinst_nonascii_bits(v);
		} else {
			for (; i < len; i++)
				acc |= (uint64_t)s[i] | (s[i] == 0 ? 0x80u : 0u);
		}
	}
	if ((acc & 0x8080808080808080ull) == 0)
		return true;
	return jinst_mutf8_error_at(s, len, lenient) < 0;
}

/* The constant pool's strings are checked in bulk: one pass marks every byte
 * of the pool that is not plain ASCII (high bit set, or zero), one bit per
 * byte, bit j%8 of marks[j/8] for s[j]; marks must hold len/8 + 16 bytes,
 * the rest zeroed. Then a string needs the full check only when a byte of it
 * is marked, which jinst_mutf8_marked answers without a loop for the short
 * strings that make up almost every pool. */
void jinst_mutf8_mark(const uint8_t *s, size_t len, uint8_t *marks);

static inline uint64_t jinst_le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* Whether any byte in [from, from + len) is marked. */
static inline bool jinst_mutf8_marked(const uint8_t *marks, size_t from, size_t len)
{
	while (len > 56) {
		if (jinst_le64(marks + from / 8) >> (from % 8) << 8)
			return true;
		from += 56;
		len -= 56;
	}
	uint64_t w = jinst_le64(marks + from / 8) >> (from % 8);
	return (w & ((1ull << len) - 1)) != 0;
}

/* jinst_cp_tag for hot loops: original entries straight from the tag array. */
static inline uint8_t jinst_cp_tag_fast(const jinst_class *c, uint16_t index)
{
	return index < c->cp_count ? c->cp_tags[index] : jinst_cp_tag(c, index);
}

/* jinst_ftype_equal inlined for the inner loops of inference and
 * compression, with the pointer test first: types copied from one another
 * share their name bytes, so most equal names need no memcmp. */
static inline bool jinst_ftype_same(const jinst_ftype *a, const jinst_ftype *b)
{
	if (a->tag != b->tag)
		return false;
	if (a->tag == JINST_VT_OBJECT)
		return a->name_length == b->name_length && (a->name == b->name || memcmp(a->name, b->name, a->name_length) == 0);
	if (a->tag == JINST_VT_UNINITIALIZED)
		return a->value == b->value;
	return true;
}

/* The first Class constant of the original pool whose name is name[0..len),
 * else the first appended one, or 0. Frame compression names most object
 * types by their descriptor text, and this finds their constant without
 * building the pool builder's table over every entry; a miss goes to
 * jinst_cp_add as before. */
uint16_t jinst_cp_find_class(jinst_class *c, const uint8_t *name, uint16_t len);

/* Constant-pool entries as bytes: one entry; all appended entries in index order. */
void jinst_cp_write_entry(const jinst_cp_entry *e, jinst_buf *out);
void jinst_cp_write_original(const jinst_class *cls, jinst_buf *out);
void jinst_cp_write_added(const jinst_class *cls, jinst_buf *out);

/* Name and descriptor of a member as modified UTF-8 (NULL when malformed). */
static inline const uint8_t *jinst_member_name(const jinst_class *cls, const jinst_member *m, uint16_t *len)
{
	return jinst_cp_utf8(cls, m->name_index, len);
}

#endif
