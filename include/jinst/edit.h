/*
 * The bytecode code editor: one method's code as an editable list of
 * instructions and labels, encoded again with its branches laid out, its
 * tables remapped and its frames kept, derived or recomputed.
 *
 * The model. jinst_edit_open() decodes a method's Code into a doubly linked
 * list of nodes. A node is an instruction or a label. Everything that names
 * a position in the code names a label, never an offset: branch and switch
 * targets, exception ranges and handlers, LineNumberTable and
 * LocalVariable(Type)Table entries, the local variable ranges of type
 * annotations (0x40, 0x41) and StackMapTable frames. What names an
 * instruction rather than a position follows that instruction wherever
 * code is inserted around it: the `new` of an Uninitialized type, and a
 * type annotation on an instruction (0x43-0x4B; when the instruction is
 * removed, the annotation goes). After a commit, jinst_node_offset gives
 * where each node landed.
 * At open, every original position something refers to gets one label node
 * just before its instruction, and one label (jinst_edit_end_label) stands
 * after the last instruction, where exception ranges and local variable
 * ranges that reach the end of the code end.
 *
 * Conventions for instructions (jinst_insn, include/jinst/classfile.h):
 *  - branch instructions (if*, goto, jsr, goto_w, jsr_w) carry the target
 *    label id in `operand`; switches carry label ids in sw->default_target
 *    and sw->targets[] (the caller's jinst_switch is copied at insertion);
 *  - `offset`, `length` and `wide` of a caller's instruction are ignored:
 *    the editor picks the encoding. ldc becomes ldc_w when its constant
 *    index exceeds 255; a local index above 255, or an iinc constant outside
 *    -128..127, takes the wide form; goto/jsr become goto_w/jsr_w and an
 *    out-of-range conditional branch becomes the inverted branch over a
 *    goto_w when the layout needs it;
 *  - in an array given to jinst_edit_insert, an element whose opcode is
 *    JINST_OP_LABEL places the label whose id is in `operand` there (a
 *    label is placed once).
 *
 * Insertion before a node has two meanings (enum jinst_where):
 *  - JINST_BEFORE_INSIDE: after the labels that stand just before the node.
 *    Branches, handlers and frames that pointed at the instruction now
 *    reach the inserted code first (an exit hook before `return`: a jump to
 *    the return runs the hook too, and the return's frame moves to the start
 *    of the hook). Line numbers at that position cover the inserted code.
 *  - JINST_BEFORE_OUTSIDE: before those labels. The inserted code runs only
 *    when control falls through into the position (a method-entry hook: a
 *    loop jumping back to offset 0 does not run it again). An exception
 *    range starting at the position does not cover the inserted code; one
 *    ending there does.
 *  - JINST_AFTER: right after the node, before any label that follows it.
 * At one position, code inserted outside always comes before code inserted
 * inside, whatever the order of the calls (a position without a label gets
 * one at its first inside insertion, as the boundary); successive
 * insertions on the same side keep their order.
 * Code inserted outside (or after) where only jumps arrive, after an
 * unconditional transfer, is unreachable; the frame derived for it is the
 * state after that transfer, which the verifier may refuse against the
 * frame that follows. Insert inside there.
 *
 * Frames (JINST_EDIT_FRAMES_KEEP, the default). Original frames (expanded
 * to full frames) stay attached to their labels and are re-encoded at the
 * new offsets in the most compact form. After layout, every position the
 * verifier needs a frame at (branch and switch targets, handlers, the
 * instruction after an unconditional transfer, JVMS 4.10.1) that has none
 * gets one: the frame the caller gave (jinst_edit_set_frame) or, else, the
 * frame derived by running the abstract interpreter forward from the
 * nearest preceding frame (or the method's initial frame) through the
 * straight-line code in between. No class hierarchy is needed, and the
 * derived frame is the fall-through state: right for code a pass inserts
 * (the target created by a branch rewrite, a label after an inserted
 * `goto`), not for a label that inserted branches reach with other types.
 * A handler label without a frame gets locals [] and its catch type (or
 * java/lang/Throwable) on the stack. Locals declared with
 * jinst_edit_declare_local are added to every original frame (with top
 * between the last local and the new one); frames given by the caller are
 * used as given. Class files older than 50.0 get no StackMapTable, nor
 * does a method of 50.0 or later that needs frames (a branch target, a
 * handler, code after an unconditional transfer) and has none: the bytes
 * a VM rebuilds for a class it does not verify (HotSpot keeps no
 * StackMapTable for the boot loader's classes; classfile/patch.c), which
 * that VM will not verify once changed either. Frames derived from the
 * fall-through state would be wrong there (code after a goto is not in
 * the state before it).
 * JINST_EDIT_FRAMES_ALL recomputes every frame of the new code with
 * jinst_frames_infer and the caller's hierarchy.
 *
 * Memory and lifetime. The editor and everything it allocates live in the
 * class's arena (jinst_class_arena): they last until the arena is reset or
 * the class freed, and jinst_edit_free only marks the editor closed.
 * Instructions and frames handed to the editor are copied. Pointers it
 * returns (nodes, instructions) are borrowed and stay valid until the arena
 * goes, even after a commit. One editor per method at a time; an editor
 * and its class are used by one thread at a time (the arena is not shared).
 *
 * Commit. jinst_edit_commit() checks the stack depths of the new code (an
 * insertion that leaves the stack unbalanced is refused; not under
 * JINST_EDIT_BALANCED, below), computes max_stack and max_locals, lays the
 * branches out to a fixpoint, remaps every table, builds the frames, and
 * installs the result into the method's Code model, marking what the
 * writer must re-encode. Any error
 * (JINST_ETOOLARGE for a JVMS 4.11 limit: code over 65,535 bytes, max_stack
 * or max_locals over 65,535 (255 for class files before 45.3), a table over
 * 65,535 entries; JINST_EINVAL for a branch to an unplaced label;
 * JINST_EMALFORMED for unbalanced stack depths) leaves the method exactly as
 * it was; constants the commit added to the pool (for frames) stay, unused.
 * An editor with no change commits nothing, so the method is still copied
 * byte for byte by the writer. After a commit (successful or not) the
 * editor must not be edited further.
 */
/*
 * Usage: an entry/exit hook pass (the tracing pass's shape), per method with
 * Code; ids and constant indices come from the pass (jinst_cp_add_methodref):
 *
 *   jinst_edit *ed;
 *   if (jinst_edit_open(&ed, cls, m, NULL, &diag)) -> skip the method
 *   jinst_insn enter[2] = {{.opcode = 0x11, .operand = id},     // sipush id
 *                          {.opcode = 0xb8, .operand = enter_ref}}; // invokestatic
 *   jinst_insn exit[2] = {{.opcode = 0x11, .operand = id}, {.opcode = 0xb8, .operand = exit_ref}};
 *   // (the order of the calls does not matter: outside code always
 *   // precedes inside code at a position; original_offset tells the
 *   // original returns from inserted code)
 *   for (jinst_node *n = jinst_edit_first(ed); n; n = jinst_node_next(n)) {
 *       const jinst_insn *in = jinst_node_insn(n);
 *       if (in && in->opcode >= 0xac && in->opcode <= 0xb1 && jinst_node_original_offset(n) != JINST_NO_OFFSET)
 *           jinst_edit_insert(ed, n, JINST_BEFORE_INSIDE, exit, 2, NULL);
 *   }
 *   jinst_node *first = jinst_edit_first_insn(ed);
 *   jinst_label start, handler;
 *   jinst_edit_new_label(ed, &start);
 *   jinst_edit_new_label(ed, &handler);
 *   // the catch-all starts after the entry code; in a constructor after
 *   // the invokespecial <init> that initializes `this`: place(start, call, JINST_AFTER)
 *   jinst_edit_place(ed, start, first, JINST_BEFORE_OUTSIDE);
 *   jinst_edit_insert(ed, first, JINST_BEFORE_OUTSIDE, enter, 2, NULL);
 *   jinst_insn h[4] = {{.opcode = JINST_OP_LABEL, .operand = handler},
 *                      {.opcode = 0x11, .operand = id}, {.opcode = 0xb8, .operand = exit_throw_ref},
 *                      {.opcode = 0xbf}};                      // athrow
 *   jinst_edit_insert(ed, NULL, JINST_AFTER, h, 4, NULL);    // at the end of the code
 *   jinst_edit_add_handler(ed, start, jinst_edit_end_label(ed), handler, 0); // last entry
 *   jinst_ftype thr = {JINST_VT_OBJECT, 0, 19, (const uint8_t *)"java/lang/Throwable"};
 *   jinst_full_frame hf = {0, 0, 1, NULL, &thr};               // locals [] stack [Throwable]
 *   jinst_edit_set_frame(ed, handler, &hf);
 *   if (jinst_edit_commit(ed, &diag)) -> the method is unchanged; log diag
 *   jinst_edit_free(ed);
 *
 * `times` mode: jinst_edit_new_local(ed, JINST_VT_LONG, &t0) and
 * jinst_edit_declare_local(ed, t0, &(jinst_ftype){JINST_VT_LONG}); the entry
 * code adds invokestatic System.nanoTime()J and lstore t0, the exits lload
 * t0; the handler frame lists top for each slot below t0, then the long.
 * tests/unit/test_edit.c (hooks) and tests/corpus/edit_check.c run exactly
 * this.
 */
#ifndef JINST_EDIT_H
#define JINST_EDIT_H

#include "jinst/classfile.h"
#include "jinst/infer.h"
#include "jinst/opcodes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jinst_edit jinst_edit;
typedef struct jinst_node jinst_node;
typedef uint32_t jinst_label;
#define JINST_NO_LABEL UINT32_MAX

/* In an insertion array: place the label `operand` here (not an opcode: 0xff is impdep2). */
#define JINST_OP_LABEL 0xff

enum jinst_edit_frames {
	JINST_EDIT_FRAMES_KEEP = 0, /* keep original frames, derive frames for inserted code */
	JINST_EDIT_FRAMES_ALL = 1,  /* recompute all frames (needs options.hierarchy) */
	JINST_EDIT_FRAMES_NONE = 2  /* write no StackMapTable (pre-50 class files, or a later pass does it) */
};

typedef struct jinst_edit_options {
	uint32_t version;                 /* JINST_EDIT_OPTIONS_VERSION */
	uint32_t frames;                  /* enum jinst_edit_frames */
	const jinst_hierarchy *hierarchy; /* for JINST_EDIT_FRAMES_ALL */
	uint32_t flags;                   /* JINST_EDIT_* */
	/* Version 2. The method's instructions as jinst_code_decode gave them
	 * for the code at decoded_code (its jinst_code.code), so that a caller
	 * that decoded the code already (the coverage placement) does not pay
	 * for it twice. The editor copies them, and uses them only while the
	 * method's code is still those bytes; otherwise (NULL, or the code
	 * edited since) it decodes. */
	const jinst_insn *decoded;
	uint32_t decoded_count;
	const uint8_t *decoded_code;
} jinst_edit_options;
#define JINST_EDIT_OPTIONS_VERSION 2
#define JINST_EDIT_OPTIONS_INIT {JINST_EDIT_OPTIONS_VERSION, JINST_EDIT_FRAMES_KEEP, NULL, 0, NULL, 0, NULL}
/* Commit even when nothing was edited: the code is laid out, its tables
 * remapped and its frames encoded anew (jinst rewrite --frames=keep). */
#define JINST_EDIT_REENCODE 0x1
/* The caller vouches that its code keeps the stack balanced: each run of
 * inserted instructions leaves the stack as deep as it found it, and at
 * every label and jump of its own the stack is as deep as at some position
 * of the original code (coverage's probes, jumps and trampolines). The
 * commit then checks no depths: max_stack is the original's plus the most
 * any inserted run pushes above where it starts, an upper bound as
 * JaCoCo's, where the depth flow over the whole method (a tenth of an
 * edit's time) gives the exact figure. */
#define JINST_EDIT_BALANCED 0x2

enum jinst_where {
	JINST_BEFORE_INSIDE = 0,
	JINST_BEFORE_OUTSIDE = 1,
	JINST_AFTER = 2
};

/* Decodes method's Code for editing. JINST_EINVAL for a method without
 * Code; JINST_EMALFORMED when the code, its tables or its frames are
 * malformed (an offset not on an instruction, a bad frame). opts may be NULL. */
int jinst_edit_open(jinst_edit **out, jinst_class *cls, jinst_member *method, const jinst_edit_options *opts,
                    jinst_diag *diag);
/* Lays out, remaps and installs the new code (see above). */
int jinst_edit_commit(jinst_edit *ed, jinst_diag *diag);
/* Closes the editor without installing anything. NULL is fine. */
void jinst_edit_free(jinst_edit *ed);
/* Whether the commit writes a StackMapTable (see "Frames" above): a pass
 * that gives frames for its own code (jinst_edit_set_frame) needs to
 * compute them only then. */
bool jinst_edit_writes_frames(const jinst_edit *ed);

/* ---- walking the list ---- */

jinst_node *jinst_edit_first(jinst_edit *ed);
jinst_node *jinst_edit_last(jinst_edit *ed);
jinst_node *jinst_node_next(const jinst_node *n);
jinst_node *jinst_node_prev(const jinst_node *n);
/* The instruction of an instruction node (branch operands are label ids),
 * NULL for a label node. */
const jinst_insn *jinst_node_insn(const jinst_node *n);
/* The label of a label node, JINST_NO_LABEL for an instruction. */
jinst_label jinst_node_label(const jinst_node *n);
/* Offset of an original instruction in the original code, JINST_NO_OFFSET
 * for inserted instructions and labels. */
uint32_t jinst_node_original_offset(const jinst_node *n);
/* After a successful commit: the node's offset in the new code (a label's
 * is the offset of what follows it). Undefined before. */
uint32_t jinst_node_offset(const jinst_node *n);
/* The original instruction at offset, NULL when there is none (or it was removed). */
jinst_node *jinst_edit_at(jinst_edit *ed, uint32_t original_offset);
/* The first original instruction node of the code (whatever was inserted before it). */
jinst_node *jinst_edit_first_insn(jinst_edit *ed);

/* ---- labels ---- */

/* A new, unplaced label. */
int jinst_edit_new_label(jinst_edit *ed, jinst_label *out);
/* The label of an original position (offset of an instruction, or the code
 * length for the end), created just before that instruction if there was
 * none. JINST_EINVAL when offset does not start an original instruction. */
int jinst_edit_label_at(jinst_edit *ed, uint32_t original_offset, jinst_label *out);
/* The label after the last original instruction. */
jinst_label jinst_edit_end_label(jinst_edit *ed);
/* Places an unplaced label relative to a node (at NULL: at the end of the code). */
int jinst_edit_place(jinst_edit *ed, jinst_label label, jinst_node *at, enum jinst_where where);

/* ---- editing ---- */

/* Inserts count instructions (and JINST_OP_LABEL placements) relative to
 * at; at NULL appends at the very end of the code, after the end label.
 * *last (may be NULL) gets the node of the last one inserted. */
int jinst_edit_insert(jinst_edit *ed, jinst_node *at, enum jinst_where where, const jinst_insn *insns,
                      uint32_t count, jinst_node **last);
/* Removes an instruction node; the labels before it then name what follows. */
int jinst_edit_remove(jinst_edit *ed, jinst_node *n);
/* Replaces an instruction node by insns, inside its labels. */
int jinst_edit_replace(jinst_edit *ed, jinst_node *n, const jinst_insn *insns, uint32_t count);

/* Appends an exception table entry [start, end) -> handler, after all the
 * original ones (inner handlers, listed first, keep precedence).
 * catch_type: a Class constant index, 0 for any. */
int jinst_edit_add_handler(jinst_edit *ed, jinst_label start, jinst_label end, jinst_label handler,
                           uint16_t catch_type);

/* ---- locals and frames ---- */

/* Allocates a new local at the current max_locals: two slots for
 * JINST_VT_LONG and JINST_VT_DOUBLE, one otherwise. */
int jinst_edit_new_local(jinst_edit *ed, uint8_t vtype_tag, uint16_t *index);
/* Declares local `index` with type t in every original frame (for a local
 * stored by entry code before any of them is reached). t->name is copied. */
int jinst_edit_declare_local(jinst_edit *ed, uint16_t index, const jinst_ftype *t);
/* Gives the frame at a label (types by name: Object with value 0 and a
 * name, or value a Class index). frame->offset is ignored; the arrays are
 * copied. Replaces any frame the label had. */
int jinst_edit_set_frame(jinst_edit *ed, jinst_label label, const jinst_full_frame *frame);

/* The frame just before node n in the list as it stands: from the nearest
 * frame before it (original, given, or the method's initial one) through
 * the straight-line code in between, as the commit derives frames. For a
 * pass that needs a frame at a label it creates (a trampoline on a branch
 * edge: the frame at the branch, minus what the branch pops), to give to
 * jinst_edit_set_frame. Uninitialized types name the original offset of
 * their `new`. Meant for class files that have frames (50 and later) and
 * the KEEP mode: otherwise no original frame is at hand, and the walk
 * starts at the method's entry and crosses jumps.
 * Arena-allocated; the caller may change the copy it gets. */
int jinst_edit_frame_before(jinst_edit *ed, jinst_node *n, jinst_full_frame *out, jinst_diag *diag);

/* Current max_locals (original plus allocated). */
uint16_t jinst_edit_max_locals(const jinst_edit *ed);

#ifdef __cplusplus
}
#endif
#endif
