/*
 * Internals of the code editor (include/jinst/edit.h), shared by its
 * modules: edit.c (open, the node list, labels, insertion), edit_layout.c
 * (stack depths, layout, encoding), edit_frames.c (frames kept, given and
 * derived) and edit_commit.c (the tables remapped, and the commit).
 */
#ifndef JINST_EDIT_INTERNAL_H
#define JINST_EDIT_INTERNAL_H

#include "internal.h"

#include "jinst/edit.h"

enum { NODE_INSN = 0, NODE_LABEL = 1 };
enum { FORM_NORMAL = 0, FORM_WIDE = 1, FORM_INVERT = 2 };
#define NO_KEY UINT16_MAX
/* In a tracked attribute's refs: an original instruction (index in nodes), not a label. */
#define INSN_REF 0x80000000u

struct jinst_node {
	jinst_node *prev, *next;
	jinst_insn insn;   /* branch operands and switch targets are label ids */
	uint32_t orig;     /* original offset, JINST_NO_OFFSET for inserted code and labels */
	uint32_t label;    /* label nodes: the label id */
	uint32_t offset;   /* laid-out offset (labels: of what follows) */
	int32_t depth;     /* stack depth before, -1 before the depth flow reaches it */
	uint16_t key;      /* `new` nodes: the Uninitialized key, NO_KEY until one is given */
	uint8_t kind;      /* NODE_* */
	uint8_t form;      /* FORM_* of a 16-bit branch */
	bool removed;
	bool frame_needed; /* instruction nodes, during commit */
};

typedef struct label_info {
	jinst_node *node;        /* NULL until placed */
	jinst_full_frame *frame; /* kept (original) or given frame */
	bool given;              /* the frame came from jinst_edit_set_frame */
	bool target;             /* during commit: a branch, switch or handler reaches it */
	uint16_t catch_type;     /* during commit, for handlers: the first entry's catch type */
	bool handler;
} label_info;

typedef struct xentry {
	jinst_label start, end, handler;
	uint16_t catch_type;
} xentry;

/* A Code attribute whose positions were turned into labels, in the order
 * the commit walks the model again. */
typedef struct tracked_attr {
	jinst_attr *a;
	jinst_label *refs;
} tracked_attr;

typedef struct declared {
	uint16_t index;
	jinst_ftype type;
} declared;

struct jinst_edit {
	jinst_class *c;
	jinst_member *m;
	jinst_attr *code_attr;
	jinst_code *code;
	jinst_arena *A;
	jinst_edit_options opts;
	bool closed, dirty, has_map;
	bool frameless; /* 50+, no StackMapTable, a position that needs a frame: commit writes none */
	jinst_node *head, *tail;
	jinst_node *nodes; /* the original instructions, in order */
	uint32_t ninsns;
	int32_t *idx_at;   /* original offset -> index in nodes, -1 inside an instruction */
	jinst_label *lab_at; /* original offset -> its label, JINST_NO_LABEL */
	label_info *labels;
	uint32_t nlabels, cap_labels;
	jinst_label end_label;
	xentry *ex;
	uint32_t nex, cap_ex, orig_nex;
	tracked_attr *tracked;
	uint32_t ntracked;
	jinst_node **keys; /* Uninitialized key -> `new` node */
	uint32_t nkeys, cap_keys;
	declared *decl;
	uint32_t ndecl, cap_decl;
	uint16_t max_locals;
	jinst_full_frame initial; /* the method's implicit first frame, once derive needs it (locals set) */
	const uint8_t *orig_code; /* the code the original nodes were decoded from */
};

static inline bool cat2(const jinst_ftype *t)
{
	return t->tag == JINST_VT_LONG || t->tag == JINST_VT_DOUBLE;
}

/* Grows an arena array to hold at least need items (the old block is left
 * in the arena: growth doubles, so the waste stays below the final size). */
static inline bool grow(jinst_arena *A, void **items, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return true;
	uint32_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	void *p = jinst_arena_alloc(A, (size_t)n * size);
	if (!p)
		return false;
	if (*cap)
		memcpy(p, *items, (size_t)*cap * size);
	*items = p;
	*cap = n;
	return true;
}

static inline enum jinst_operand_kind kind_of(const jinst_insn *in)
{
	return (enum jinst_operand_kind)jinst_opcodes[in->opcode].kind;
}

static inline bool is_branch(const jinst_insn *in)
{
	enum jinst_operand_kind k = kind_of(in);
	return k == JINST_OPND_BRANCH2 || k == JINST_OPND_BRANCH4;
}

/* Ends a basic block with no fall-through: goto, goto_w, switches, returns, athrow, ret. */
static inline bool unconditional(uint8_t op)
{
	return jinst_opcodes[op].flags & JINST_OPF_UNCONDITIONAL;
}

/* The original offset of a node for diagnostics, -1 for inserted code. */
static inline int node_where(const jinst_node *n)
{
	return n->orig != JINST_NO_OFFSET ? (int)n->orig : -1;
}

/* edit.c */
int jinst_ed_key_of(jinst_edit *ed, jinst_node *n, uint16_t *key);
jinst_ftype *jinst_ed_copy_types(jinst_arena *A, const jinst_ftype *t, uint16_t n);

/* edit_layout.c: the depth flow (max_stack), offsets until every branch
 * reaches, and the code bytes from the laid-out nodes. */
int jinst_ed_depth_flow(jinst_edit *ed, uint32_t *max_stack, jinst_diag *diag);
int jinst_ed_layout(jinst_edit *ed, uint32_t *code_length, uint32_t *ninverted, jinst_diag *diag);
int jinst_ed_encode(jinst_edit *ed, uint32_t code_length, uint8_t **bytes, jinst_diag *diag);

/* edit_frames.c */
int jinst_ed_derive(jinst_edit *ed, jinst_sim *s, const jinst_full_frame *from, jinst_node *from_node, jinst_node *to,
                    jinst_full_frame **out, jinst_diag *diag);
jinst_full_frame *jinst_ed_with_declared(jinst_edit *ed, jinst_full_frame *f);
int jinst_ed_keep_frames(jinst_edit *ed, uint32_t max_stack, jinst_full_frame **out, uint32_t *count,
                         jinst_diag *diag);

#endif
