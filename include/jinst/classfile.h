/*
 * jinst class-file library: parse, inspect, edit and write JVM class files
 * (JVMS chapter 4, class-file versions 45.0 to 69.0).
 *
 * Ownership: a jinst_class borrows the input bytes (they must outlive it) and
 * allocates everything else from an arena. Pointers returned by accessors are
 * borrowed and live as long as the class. What a `**out` parameter returns the
 * caller owns, unless said otherwise.
 *
 * Laziness: jinst_class_parse() reads the constant pool, the class header, the
 * field and method headers and checks the attribute headers (a member's list
 * of them is built on the first jinst_member_attrs()). An attribute's contents
 * (a method's Code, its StackMapTable, annotations...) are decoded only when
 * jinst_attr_decode() is called, and anything never decoded is written back
 * by copying its original bytes.
 *
 * Errors: functions return 0 or a negative JINST_E* code; details go into the
 * caller's jinst_diag when one is passed.
 */
#ifndef JINST_CLASSFILE_H
#define JINST_CLASSFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JINST_VERSION_MAJOR 0
#define JINST_VERSION_MINOR 1
#define JINST_VERSION_PATCH 0
#define JINST_VERSION_STRING "0.1.0"

/* Highest class-file major version whose structure this library knows (Java 25). */
#define JINST_MAX_SUPPORTED_MAJOR 69

/* ---- errors ------------------------------------------------------------ */

enum {
	JINST_OK = 0,
	JINST_EMALFORMED = -1,   /* input violates the class-file format */
	JINST_EUNSUPPORTED = -2, /* valid but not handled (e.g. unknown version layout) */
	JINST_ETOOLARGE = -3,    /* a JVMS limit would be exceeded */
	JINST_ENOMEM = -4,
	JINST_EHIERARCHY = -5,   /* class hierarchy could not be resolved */
	JINST_EIO = -6,
	JINST_ERULES = -7,       /* retransformation rules violated */
	JINST_EINVAL = -8,       /* API misuse: bad argument */
	JINST_ENOTFOUND = -9     /* no such class or resource (a class source, a class path) */
};

/* Static name of an error code, e.g. "EMALFORMED". */
const char *jinst_strerror(int code);

#define JINST_NO_OFFSET UINT32_MAX

/* What went wrong and where. Filled by the function that failed. */
typedef struct jinst_diag {
	int code;            /* the JINST_E* code returned */
	uint32_t offset;     /* byte offset in the class file, or JINST_NO_OFFSET */
	char where[160];     /* element: "constant pool #12", "method run()V", ... */
	char message[256];   /* what is wrong */
} jinst_diag;

/* "EMALFORMED at offset 123 (constant pool #4): bad tag 2" into buf. */
void jinst_diag_format(const jinst_diag *diag, char *buf, size_t size);

/* ---- memory ------------------------------------------------------------ */

/* A bump allocator. One per transformation, reset and reused per thread.
 * Built with JINST_DEBUG_ARENA it hands out plain malloc blocks. */
typedef struct jinst_arena jinst_arena;

int jinst_arena_new(jinst_arena **out);
void *jinst_arena_alloc(jinst_arena *arena, size_t size); /* 8-aligned, NULL on ENOMEM */
void *jinst_arena_zalloc(jinst_arena *arena, size_t size);
void jinst_arena_reset(jinst_arena *arena); /* frees all blocks but the first */
void jinst_arena_free(jinst_arena *arena);  /* NULL is fine */

/* Where output bytes come from (JVMTI Allocate in the agent). NULL: malloc. */
typedef struct jinst_allocator {
	void *(*alloc)(void *ctx, size_t size);
	void *ctx;
} jinst_allocator;

/* ---- modified UTF-8 (JVMS 4.4.7) --------------------------------------- */

/* True when bytes are well-formed modified UTF-8 (no NUL byte, no 4-byte
 * forms, every continuation byte in place). */
bool jinst_mutf8_valid(const uint8_t *bytes, size_t len);
/* Modified UTF-8 to standard UTF-8 (surrogate pairs joined, C0 80 -> NUL).
 * Writes at most size bytes plus a terminating NUL; returns the length the
 * full conversion needs (like snprintf), or JINST_EMALFORMED. */
long jinst_mutf8_to_utf8(const uint8_t *in, size_t len, char *out, size_t size);
/* Standard UTF-8 to modified UTF-8; same conventions. */
long jinst_utf8_to_mutf8(const char *in, size_t len, uint8_t *out, size_t size);

/* ---- the class ------------------------------------------------------------ */

typedef struct jinst_class jinst_class;
typedef struct jinst_member jinst_member;

enum {
	JINST_ACC_PUBLIC = 0x0001, JINST_ACC_PRIVATE = 0x0002, JINST_ACC_PROTECTED = 0x0004,
	JINST_ACC_STATIC = 0x0008, JINST_ACC_FINAL = 0x0010, JINST_ACC_SUPER = 0x0020,
	JINST_ACC_SYNCHRONIZED = 0x0020, JINST_ACC_VOLATILE = 0x0040, JINST_ACC_BRIDGE = 0x0040,
	JINST_ACC_TRANSIENT = 0x0080, JINST_ACC_VARARGS = 0x0080, JINST_ACC_NATIVE = 0x0100,
	JINST_ACC_INTERFACE = 0x0200, JINST_ACC_ABSTRACT = 0x0400, JINST_ACC_STRICT = 0x0800,
	JINST_ACC_SYNTHETIC = 0x1000, JINST_ACC_ANNOTATION = 0x2000, JINST_ACC_ENUM = 0x4000,
	JINST_ACC_MODULE = 0x8000, JINST_ACC_MANDATED = 0x8000
};

typedef struct jinst_parse_options {
	uint32_t version; /* JINST_PARSE_OPTIONS_VERSION */
	uint32_t flags;   /* JINST_PARSE_* */
} jinst_parse_options;
#define JINST_PARSE_OPTIONS_VERSION 1
#define JINST_PARSE_OPTIONS_INIT {JINST_PARSE_OPTIONS_VERSION, 0}
/* Refuse (JINST_EUNSUPPORTED) versions above JINST_MAX_SUPPORTED_MAJOR
 * instead of reading them when their structure parses. */
#define JINST_PARSE_STRICT_VERSION 0x1

/* Parses bytes[0..len). The bytes are borrowed. arena may be NULL (the class
 * then owns one). opts may be NULL. */
int jinst_class_parse(jinst_class **out, const uint8_t *bytes, size_t len, jinst_arena *arena,
                      const jinst_parse_options *opts, jinst_diag *diag);
void jinst_class_free(jinst_class *cls); /* NULL is fine */

const uint8_t *jinst_class_bytes(const jinst_class *cls, size_t *len);
jinst_arena *jinst_class_arena(jinst_class *cls);
uint16_t jinst_class_minor_version(const jinst_class *cls);
uint16_t jinst_class_major_version(const jinst_class *cls);
/* False for versions above JINST_MAX_SUPPORTED_MAJOR that were read anyway. */
bool jinst_class_version_known(const jinst_class *cls);
uint16_t jinst_class_access_flags(const jinst_class *cls);
uint16_t jinst_class_this_class(const jinst_class *cls);  /* cp index of a Class */
uint16_t jinst_class_super_class(const jinst_class *cls); /* 0 for java/lang/Object */
uint16_t jinst_class_interface_count(const jinst_class *cls);
uint16_t jinst_class_interface(const jinst_class *cls, uint16_t i);
/* The class's internal name (e.g. "java/lang/String") as modified UTF-8. */
const uint8_t *jinst_class_name(const jinst_class *cls, uint16_t *len);

/* ---- constant pool (JVMS 4.4) --------------------------------------------- */

enum jinst_cp_tag {
	JINST_CP_UTF8 = 1, JINST_CP_INTEGER = 3, JINST_CP_FLOAT = 4, JINST_CP_LONG = 5,
	JINST_CP_DOUBLE = 6, JINST_CP_CLASS = 7, JINST_CP_STRING = 8, JINST_CP_FIELDREF = 9,
	JINST_CP_METHODREF = 10, JINST_CP_INTERFACE_METHODREF = 11, JINST_CP_NAME_AND_TYPE = 12,
	JINST_CP_METHOD_HANDLE = 15, JINST_CP_METHOD_TYPE = 16, JINST_CP_DYNAMIC = 17,
	JINST_CP_INVOKE_DYNAMIC = 18, JINST_CP_MODULE = 19, JINST_CP_PACKAGE = 20
};

typedef struct jinst_cp_entry {
	uint8_t tag; /* enum jinst_cp_tag; 0 for index 0 and the slot after a long/double */
	union {
		struct { const uint8_t *bytes; uint16_t length; } utf8; /* modified UTF-8, validated */
		uint32_t u4;   /* Integer and Float: the raw bits */
		uint64_t u8;   /* Long and Double: the raw bits */
		uint16_t index; /* Class, String, MethodType, Module, Package: their Utf8 index */
		struct { uint16_t class_index, name_and_type_index; } ref; /* Field/Method/InterfaceMethodref */
		struct { uint16_t name_index, descriptor_index; } nat;
		struct { uint8_t kind; uint16_t reference_index; } handle;
		struct { uint16_t bootstrap_method_attr_index, name_and_type_index; } dyn; /* Dynamic, InvokeDynamic */
	} u;
} jinst_cp_entry;

/* "Methodref", "Utf8", ...; "invalid" for other values. */
const char *jinst_cp_tag_name(uint8_t tag);

/* constant_pool_count: valid indices are 1 .. count-1 (appended entries included). */
uint16_t jinst_cp_count(const jinst_class *cls);
/* Number of entries that came from the parsed class (its constant_pool_count). */
uint16_t jinst_cp_original_count(const jinst_class *cls);
uint8_t jinst_cp_tag(const jinst_class *cls, uint16_t index); /* 0 when out of range or unusable */
/* JINST_EMALFORMED when index is out of range or unusable. */
int jinst_cp_get(const jinst_class *cls, uint16_t index, jinst_cp_entry *out);
/* Whether two entries have the same tag and contents (strings by their bytes). */
bool jinst_cp_entry_equal(const jinst_cp_entry *a, const jinst_cp_entry *b);
/* The Utf8 at index, or NULL when index is not a Utf8. */
const uint8_t *jinst_cp_utf8(const jinst_class *cls, uint16_t index, uint16_t *len);
/* The name of the Class (or Module/Package/String/MethodType's Utf8) at index. */
const uint8_t *jinst_cp_name(const jinst_class *cls, uint16_t index, uint16_t *len);
/* Offset of the entry's tag byte in the original bytes (0 for appended entries). */
uint32_t jinst_cp_offset(const jinst_class *cls, uint16_t index);

/* The pool builder. Existing indices never move: new entries are appended and
 * deduplicated against every entry (original or appended) through a hash
 * table. Refuses with JINST_ETOOLARGE to pass 65,535 entries. Utf8 input is
 * modified UTF-8 and is copied. */
int jinst_cp_add(jinst_class *cls, const jinst_cp_entry *entry, uint16_t *index);
int jinst_cp_add_utf8(jinst_class *cls, const char *mutf8, size_t len, uint16_t *index);
int jinst_cp_add_class(jinst_class *cls, const char *internal_name, uint16_t *index);
int jinst_cp_add_string(jinst_class *cls, const char *mutf8, uint16_t *index);
int jinst_cp_add_integer(jinst_class *cls, int32_t value, uint16_t *index);
int jinst_cp_add_long(jinst_class *cls, int64_t value, uint16_t *index);
int jinst_cp_add_name_and_type(jinst_class *cls, const char *name, const char *descriptor,
                               uint16_t *index);
int jinst_cp_add_fieldref(jinst_class *cls, const char *owner, const char *name,
                          const char *descriptor, uint16_t *index);
int jinst_cp_add_methodref(jinst_class *cls, const char *owner, const char *name,
                           const char *descriptor, uint16_t *index);
int jinst_cp_add_interface_methodref(jinst_class *cls, const char *owner, const char *name,
                                     const char *descriptor, uint16_t *index);

/* ---- attributes (JVMS 4.7) --------------------------------------------------- */

/* Known attribute kinds. The kind comes from the name and from where the
 * attribute stands (a "Code" on a field is JINST_ATTR_UNKNOWN). */
enum jinst_attr_kind {
	JINST_ATTR_UNKNOWN = 0,
	JINST_ATTR_CONSTANT_VALUE,          /* model: jinst_attr_index */
	JINST_ATTR_CODE,                    /* jinst_code */
	JINST_ATTR_STACK_MAP_TABLE,         /* jinst_stack_map */
	JINST_ATTR_EXCEPTIONS,              /* jinst_index_list */
	JINST_ATTR_INNER_CLASSES,           /* jinst_inner_classes */
	JINST_ATTR_ENCLOSING_METHOD,        /* jinst_enclosing_method */
	JINST_ATTR_SYNTHETIC,               /* no model (length 0) */
	JINST_ATTR_SIGNATURE,               /* jinst_attr_index */
	JINST_ATTR_SOURCE_FILE,             /* jinst_attr_index */
	JINST_ATTR_SOURCE_DEBUG_EXTENSION,  /* jinst_blob */
	JINST_ATTR_LINE_NUMBER_TABLE,       /* jinst_line_numbers */
	JINST_ATTR_LOCAL_VARIABLE_TABLE,    /* jinst_local_variables */
	JINST_ATTR_LOCAL_VARIABLE_TYPE_TABLE, /* jinst_local_variables (descriptor_index is the signature) */
	JINST_ATTR_DEPRECATED,              /* no model (length 0) */
	JINST_ATTR_RUNTIME_VISIBLE_ANNOTATIONS,   /* jinst_annotations */
	JINST_ATTR_RUNTIME_INVISIBLE_ANNOTATIONS, /* jinst_annotations */
	JINST_ATTR_RUNTIME_VISIBLE_PARAMETER_ANNOTATIONS,   /* jinst_parameter_annotations */
	JINST_ATTR_RUNTIME_INVISIBLE_PARAMETER_ANNOTATIONS, /* jinst_parameter_annotations */
	JINST_ATTR_RUNTIME_VISIBLE_TYPE_ANNOTATIONS,   /* jinst_type_annotations */
	JINST_ATTR_RUNTIME_INVISIBLE_TYPE_ANNOTATIONS, /* jinst_type_annotations */
	JINST_ATTR_ANNOTATION_DEFAULT,      /* jinst_element_value */
	JINST_ATTR_BOOTSTRAP_METHODS,       /* jinst_bootstrap_methods */
	JINST_ATTR_METHOD_PARAMETERS,       /* jinst_method_parameters */
	JINST_ATTR_MODULE,                  /* jinst_module */
	JINST_ATTR_MODULE_PACKAGES,         /* jinst_index_list */
	JINST_ATTR_MODULE_MAIN_CLASS,       /* jinst_attr_index */
	JINST_ATTR_NEST_HOST,               /* jinst_attr_index */
	JINST_ATTR_NEST_MEMBERS,            /* jinst_index_list */
	JINST_ATTR_RECORD,                  /* jinst_record */
	JINST_ATTR_PERMITTED_SUBCLASSES,    /* jinst_index_list */
	JINST_ATTR_KIND_COUNT
};

/* Where an attribute list stands; decides which names are known there. */
enum jinst_attr_context {
	JINST_CTX_CLASS, JINST_CTX_FIELD, JINST_CTX_METHOD, JINST_CTX_CODE, JINST_CTX_RECORD_COMPONENT
};

typedef struct jinst_attr {
	uint16_t name_index;
	uint16_t kind;        /* enum jinst_attr_kind */
	uint32_t length;      /* attribute_length of the original */
	const uint8_t *info;  /* the original info bytes; NULL for an attribute built from a model */
	uint32_t offset;      /* offset of attribute_name_index in the class file (0 if new) */
	bool modified;        /* the writer encodes `model` instead of copying `info`. Whoever
	                       * changes a model sets it, on the attribute and on the
	                       * attribute that holds its list (the Code or Record). */
	void *model;          /* decoded model (type given by kind), NULL until decoded */
} jinst_attr;

typedef struct jinst_attr_list {
	uint16_t count;
	jinst_attr *items;
} jinst_attr_list;

const char *jinst_attr_kind_name(enum jinst_attr_kind kind); /* "Code", ...; NULL for UNKNOWN */
/* Decodes a->info into a->model (once; later calls return the same model).
 * *model may be NULL for kinds without a model (Synthetic, Deprecated, unknown). */
int jinst_attr_decode(jinst_class *cls, jinst_attr *a, void **model, jinst_diag *diag);
/* Finds the first attribute of that kind in a list, or NULL (also for a NULL list). */
jinst_attr *jinst_attr_find(const jinst_attr_list *list, enum jinst_attr_kind kind);

jinst_attr_list *jinst_class_attrs(jinst_class *cls);

/* ---- fields and methods ---------------------------------------------------------- */

uint16_t jinst_class_field_count(const jinst_class *cls);
uint16_t jinst_class_method_count(const jinst_class *cls);
jinst_member *jinst_class_field(jinst_class *cls, uint16_t i);
jinst_member *jinst_class_method(jinst_class *cls, uint16_t i);
uint16_t jinst_member_access_flags(const jinst_member *m);
uint16_t jinst_member_name_index(const jinst_member *m);
uint16_t jinst_member_descriptor_index(const jinst_member *m);
uint32_t jinst_member_offset(const jinst_member *m); /* of access_flags in the class file */
/* The member's attributes. The list is built on the first call (its headers
 * were checked by jinst_class_parse), so that a class that is only copied
 * never builds it; like every use of a class, calls for one class come from
 * one thread at a time. NULL only when out of memory. */
jinst_attr_list *jinst_member_attrs(jinst_member *m);

/* ---- attribute models ------------------------------------------------------------- */

typedef struct jinst_attr_index { uint16_t index; } jinst_attr_index;
typedef struct jinst_index_list { uint16_t count; uint16_t *items; } jinst_index_list;
typedef struct jinst_blob { uint32_t length; const uint8_t *bytes; } jinst_blob;

typedef struct jinst_exception_entry {
	uint16_t start_pc, end_pc, handler_pc, catch_type;
} jinst_exception_entry;

typedef struct jinst_code {
	uint16_t max_stack, max_locals;
	uint32_t code_length;
	const uint8_t *code;                /* borrowed; replaced by an editor */
	uint16_t exception_count;
	jinst_exception_entry *exceptions;
	jinst_attr_list attrs;              /* context JINST_CTX_CODE */
} jinst_code;

/* Verification types (JVMS 4.10.1.2 / 4.7.4). */
enum jinst_vtype_tag {
	JINST_VT_TOP = 0, JINST_VT_INTEGER = 1, JINST_VT_FLOAT = 2, JINST_VT_DOUBLE = 3,
	JINST_VT_LONG = 4, JINST_VT_NULL = 5, JINST_VT_UNINITIALIZED_THIS = 6,
	JINST_VT_OBJECT = 7, JINST_VT_UNINITIALIZED = 8
};
typedef struct jinst_vtype {
	uint8_t tag;    /* enum jinst_vtype_tag */
	uint16_t value; /* Object: cp index of a Class; Uninitialized: offset of the `new` */
} jinst_vtype;

/* One stack_map_frame as encoded. `type` is the frame_type byte:
 * 0-63 same, 64-127 same_locals_1_stack_item, 247 ..._extended,
 * 248-250 chop (251 - type locals removed; nlocals = 0), 251 same_frame_extended,
 * 252-254 append (locals holds the type - 251 new ones), 255 full_frame.
 * Types 128-246 are reserved and rejected. */
typedef struct jinst_frame {
	uint8_t type;
	uint16_t offset_delta;
	uint16_t nlocals, nstack;
	jinst_vtype *locals, *stack;
} jinst_frame;
typedef struct jinst_stack_map { uint16_t count; jinst_frame *frames; } jinst_stack_map;

/* A verification type with its class name resolved. Object types from a
 * descriptor have no constant-pool entry of their own: value is then 0 and
 * name points into the descriptor. Array classes are named by their
 * descriptor ("[I"), as in Class constants. */
typedef struct jinst_ftype {
	uint8_t tag;           /* enum jinst_vtype_tag */
	uint16_t value;        /* as in jinst_vtype (0 for Object types taken from a descriptor) */
	uint16_t name_length;  /* Object: the class name, modified UTF-8 */
	const uint8_t *name;
} jinst_ftype;

/* Whether two verification types are the same: same tag, and for Object
 * the same class name, for Uninitialized the same offset. */
bool jinst_ftype_equal(const jinst_ftype *a, const jinst_ftype *b);

/* A frame expanded to its full form at an absolute offset. Locals are listed
 * as in a full_frame (a long or double is one entry). */
typedef struct jinst_full_frame {
	uint32_t offset;
	uint16_t nlocals, nstack;
	jinst_ftype *locals, *stack;
} jinst_full_frame;
/* Expands a method's StackMapTable to full frames (map->count of them),
 * starting from the frame the method descriptor implies (JVMS 4.10.1.6).
 * With map NULL, gives just that initial frame. Arena-allocated. */
int jinst_stack_map_expand(jinst_class *cls, const jinst_member *method, const jinst_stack_map *map,
                           jinst_full_frame **frames, jinst_diag *diag);
/* The reverse: full frames at strictly ascending offsets into the most
 * compact StackMapTable (same, same_locals_1_stack_item, chop, append,
 * full, and their extended forms). Object types with value 0 get a Class
 * constant, found or added through the pool builder. Arena-allocated. */
int jinst_stack_map_compress(jinst_class *cls, const jinst_member *method, const jinst_full_frame *frames,
                             uint32_t count, jinst_stack_map **map, jinst_diag *diag);
/* Makes map the StackMapTable of the method's Code (replacing the one there,
 * adding one, or with map NULL or empty removing it) and marks the Code for
 * the writer to encode. The map is borrowed: it must live as long as cls. */
int jinst_code_set_stack_map(jinst_class *cls, jinst_member *method, jinst_stack_map *map, jinst_diag *diag);

typedef struct jinst_line_number { uint16_t start_pc, line_number; } jinst_line_number;
typedef struct jinst_line_numbers { uint16_t count; jinst_line_number *items; } jinst_line_numbers;

typedef struct jinst_local_variable {
	uint16_t start_pc, length, name_index, descriptor_index, index;
} jinst_local_variable;
typedef struct jinst_local_variables { uint16_t count; jinst_local_variable *items; } jinst_local_variables;

typedef struct jinst_inner_class {
	uint16_t inner_class_info_index, outer_class_info_index, inner_name_index, inner_class_access_flags;
} jinst_inner_class;
typedef struct jinst_inner_classes { uint16_t count; jinst_inner_class *items; } jinst_inner_classes;

typedef struct jinst_enclosing_method { uint16_t class_index, method_index; } jinst_enclosing_method;

typedef struct jinst_element_value jinst_element_value;
typedef struct jinst_element_pair jinst_element_pair;
typedef struct jinst_annotation {
	uint16_t type_index;
	uint16_t count;
	jinst_element_pair *pairs;
} jinst_annotation;
struct jinst_element_value {
	uint8_t tag; /* 'B' 'C' 'D' 'F' 'I' 'J' 'S' 'Z' 's' 'e' 'c' '@' '[' */
	union {
		uint16_t const_value_index;  /* B C D F I J S Z s */
		struct { uint16_t type_name_index, const_name_index; } enum_const; /* e */
		uint16_t class_info_index;   /* c */
		jinst_annotation annotation; /* @ */
		struct { uint16_t count; jinst_element_value *values; } array; /* [ */
	} u;
};
struct jinst_element_pair {
	uint16_t name_index;
	jinst_element_value value;
};
typedef struct jinst_annotations { uint16_t count; jinst_annotation *items; } jinst_annotations;
typedef struct jinst_parameter_annotations {
	uint8_t count;
	jinst_annotations *parameters;
} jinst_parameter_annotations;

typedef struct jinst_localvar_target { uint16_t start_pc, length, index; } jinst_localvar_target;
typedef struct jinst_type_path_entry { uint8_t kind, argument_index; } jinst_type_path_entry;
typedef struct jinst_type_annotation {
	uint8_t target_type;
	/* target_info, by target_type (JVMS 4.7.20.1):
	 *  0x00 0x01 type_parameter:        a = type_parameter_index
	 *  0x10 supertype:                  a = supertype_index
	 *  0x11 0x12 type_parameter_bound:  a = type_parameter_index, b = bound_index
	 *  0x13 0x14 0x15 empty
	 *  0x16 formal_parameter:           a = formal_parameter_index
	 *  0x17 throws:                     a = throws_type_index
	 *  0x40 0x41 localvar:              table/table_length
	 *  0x42 catch:                      a = exception_table_index
	 *  0x43-0x46 offset:                a = offset
	 *  0x47-0x4B type_argument:         a = offset, b = type_argument_index */
	uint16_t a, b;
	uint16_t table_length;
	jinst_localvar_target *table;
	uint8_t path_length;
	jinst_type_path_entry *path;
	jinst_annotation annotation;
} jinst_type_annotation;
typedef struct jinst_type_annotations { uint16_t count; jinst_type_annotation *items; } jinst_type_annotations;

typedef struct jinst_bootstrap_method {
	uint16_t method_ref;
	uint16_t arg_count;
	uint16_t *args;
} jinst_bootstrap_method;
typedef struct jinst_bootstrap_methods { uint16_t count; jinst_bootstrap_method *items; } jinst_bootstrap_methods;

typedef struct jinst_method_parameter { uint16_t name_index, access_flags; } jinst_method_parameter;
typedef struct jinst_method_parameters { uint8_t count; jinst_method_parameter *items; } jinst_method_parameters;

typedef struct jinst_module_requires {
	uint16_t requires_index, requires_flags, requires_version_index;
} jinst_module_requires;
typedef struct jinst_module_export { /* also used for opens */
	uint16_t index, flags;
	uint16_t to_count;
	uint16_t *to;
} jinst_module_export;
typedef struct jinst_module_provides {
	uint16_t provides_index;
	uint16_t with_count;
	uint16_t *with;
} jinst_module_provides;
typedef struct jinst_module {
	uint16_t module_name_index, module_flags, module_version_index;
	uint16_t requires_count; jinst_module_requires *requires;
	uint16_t exports_count;  jinst_module_export *exports;
	uint16_t opens_count;    jinst_module_export *opens;
	uint16_t uses_count;     uint16_t *uses;
	uint16_t provides_count; jinst_module_provides *provides;
} jinst_module;

typedef struct jinst_record_component {
	uint16_t name_index, descriptor_index;
	jinst_attr_list attrs; /* context JINST_CTX_RECORD_COMPONENT */
} jinst_record_component;
typedef struct jinst_record { uint16_t count; jinst_record_component *components; } jinst_record;

/* ---- bytecode (JVMS 6.5) --------------------------------------------------------- */

/* Operand kinds of an opcode, for decoders and printers. */
enum jinst_operand_kind {
	JINST_OPND_NONE,        /* no operand */
	JINST_OPND_LOCAL,       /* u1 local index (u2 under wide) */
	JINST_OPND_BYTE,        /* bipush: s1 */
	JINST_OPND_SHORT,       /* sipush: s2 */
	JINST_OPND_CP1,         /* ldc: u1 cp index */
	JINST_OPND_CP2,         /* u2 cp index */
	JINST_OPND_BRANCH2,     /* s2 branch offset */
	JINST_OPND_BRANCH4,     /* s4 branch offset (goto_w, jsr_w) */
	JINST_OPND_IINC,        /* local + s1 constant (u2 + s2 under wide) */
	JINST_OPND_NEWARRAY,    /* u1 atype */
	JINST_OPND_INVOKEINTERFACE, /* u2 cp index, u1 count, u1 zero */
	JINST_OPND_INVOKEDYNAMIC,   /* u2 cp index, u1 zero, u1 zero */
	JINST_OPND_MULTIANEWARRAY,  /* u2 cp index, u1 dimensions */
	JINST_OPND_TABLESWITCH,
	JINST_OPND_LOOKUPSWITCH,
	JINST_OPND_WIDE,        /* the wide prefix itself (folded into the next instruction) */
	JINST_OPND_INVALID      /* not an opcode */
};

/* Mnemonic of an opcode ("invokevirtual"), NULL when not an opcode. */
const char *jinst_opcode_name(uint8_t opcode);
enum jinst_operand_kind jinst_opcode_operands(uint8_t opcode);

typedef struct jinst_switch {
	int32_t default_target; /* absolute offsets */
	int32_t low, high;      /* tableswitch */
	uint32_t count;         /* number of targets (and keys for lookupswitch) */
	int32_t *keys;          /* lookupswitch only */
	int32_t *targets;
} jinst_switch;

typedef struct jinst_insn {
	uint32_t offset;
	uint8_t opcode;  /* never `wide`: a wide instruction has opcode of the widened one, wide = 1 */
	uint8_t wide;
	uint8_t length;  /* encoded length in bytes; 0 for switches (see sw) */
	int32_t operand; /* local index, cp index, immediate, atype, or absolute branch target */
	int32_t operand2; /* iinc constant, invokeinterface count, multianewarray dimensions */
	jinst_switch *sw; /* tableswitch / lookupswitch */
} jinst_insn;

/* Decodes code into instructions (arena-allocated). Checks every opcode,
 * operand bounds, branch targets (must start an instruction), and
 * constant-pool indices for range. */
int jinst_code_decode(jinst_class *cls, const jinst_code *code, jinst_insn **insns, uint32_t *count,
                      jinst_diag *diag);

/* ---- building members (classfile/build.c) ------------------------------------------ */

/* Appends a method to the class: access_flags, name and descriptor
 * (modified UTF-8, found or added in the pool), and copies of
 * attrs[0..attr_count), attributes of this class (a member's, say: their
 * info bytes are borrowed and their pool indices kept). The class's array
 * of methods moves: a jinst_member pointer taken before the call reads a
 * stale copy after it (take it again with jinst_class_method; indices do
 * not change, the new method is the last). *out (out may be NULL) is the
 * new method. JINST_ETOOLARGE past 65,535 methods. */
int jinst_class_add_method(jinst_member **out, jinst_class *cls, uint16_t access_flags, const char *name,
                           const char *descriptor, const jinst_attr *attrs, uint16_t attr_count, jinst_diag *diag);
/* Renames a member (the name found or added in the pool). */
int jinst_member_set_name(jinst_class *cls, jinst_member *m, const char *name, jinst_diag *diag);
/* Sets a member's access flags (JINST_ACC_NATIVE cleared, say); no check
 * of the combination. */
int jinst_member_set_access_flags(jinst_class *cls, jinst_member *m, uint16_t access_flags);
/* Gives a method without code (neither native nor abstract, no Code) a
 * Code attribute made from straight-line instructions: insns[0..count)
 * (opcode, operand, operand2; offsets, lengths and wide forms are worked
 * out), ending with a return or athrow and jumping nowhere, so no frame is
 * needed. max_stack comes from the stack effects, max_locals from the
 * descriptor and the locals used. JINST_EUNSUPPORTED for a jump, a switch
 * or jsr/ret (frames: the code editor, include/jinst/edit.h), JINST_EINVAL
 * for code that runs off its end, pops an empty stack or names a local or
 * constant out of reach. */
int jinst_code_build(jinst_class *cls, jinst_member *m, const jinst_insn *insns, uint32_t count, jinst_diag *diag);

/* ---- writing ------------------------------------------------------------------------ */

typedef struct jinst_write_options {
	uint32_t version; /* JINST_WRITE_OPTIONS_VERSION */
	uint32_t flags;   /* JINST_WRITE_* */
	const jinst_allocator *allocator; /* NULL: malloc, free with free() */
} jinst_write_options;
#define JINST_WRITE_OPTIONS_VERSION 1
#define JINST_WRITE_OPTIONS_INIT {JINST_WRITE_OPTIONS_VERSION, 0, NULL}
/* Decode every attribute and every method's code and frames, and encode the
 * whole class from the model: no original bytes are copied. */
#define JINST_WRITE_FROM_MODEL 0x1

/* Writes the class. For an untouched class the output equals the input. */
int jinst_class_write(jinst_class *cls, const jinst_write_options *opts, uint8_t **out, size_t *len,
                      jinst_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
