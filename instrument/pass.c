/*
 * What a pass sees of the class and the method it instruments
 * (include/jinst/pass.h).
 */
#include <string.h>

#include "internal.h"

jinst_class *jinst_pass_class_model(jinst_pass_class *cls) { return cls->c; }
const char *jinst_pass_class_name(const jinst_pass_class *cls) { return cls->name; }
const char *jinst_pass_class_source(const jinst_pass_class *cls) { return cls->source; }
uint64_t jinst_pass_class_identity(const jinst_pass_class *cls) { return cls->identity; }
uint32_t jinst_pass_class_flags(const jinst_pass_class *cls) { return cls->flags; }
uint32_t jinst_pass_class_method_count(const jinst_pass_class *cls) { return cls->method_count; }

jinst_pass_method *jinst_pass_class_method(jinst_pass_class *cls, uint32_t i)
{
	return i < cls->method_count ? &cls->methods[i] : NULL;
}

int jinst_pass_methodref(jinst_pass_class *cls, const char *owner, const char *name, const char *descriptor,
                         uint16_t *index)
{
	return jinst_cp_add_methodref(cls->c, owner, name, descriptor, index);
}

int jinst_pass_hook_ref(jinst_pass_class *cls, int hook, uint16_t *index)
{
	if (hook < 0 || hook >= JINST_HOOK_COUNT)
		return JINST_EINVAL;
	if (!cls->hook_refs[hook]) {
		const jinst_hook *h = &jinst_hooks()[hook];
		const char *owner = cls->ins->hooks_class ? cls->ins->hooks_class : h->owner;
		int rc = jinst_cp_add_methodref(cls->c, owner, h->name, h->descriptor, &cls->hook_refs[hook]);
		if (rc)
			return rc;
	}
	*index = cls->hook_refs[hook];
	return 0;
}

jinst_member *jinst_pass_method_member(jinst_pass_method *m) { return m->m; }
const char *jinst_pass_method_name(const jinst_pass_method *m) { return m->name; }
const char *jinst_pass_method_descriptor(const jinst_pass_method *m) { return m->descriptor; }
uint32_t jinst_pass_method_first_line(const jinst_pass_method *m) { return m->first_line; }

bool jinst_pass_method_is_native_wrapper(const jinst_pass_method *m) { return m->native_wrapper; }

bool jinst_pass_method_is_init(const jinst_pass_method *m)
{
	return m->name_len == 6 && !memcmp(m->name, "<init>", 6);
}

const jinst_code *jinst_pass_method_code(jinst_pass_method *m)
{
	jinst_attr *a = jinst_attr_find(jinst_member_attrs(m->m), JINST_ATTR_CODE);
	jinst_code *code;
	if (!a || jinst_attr_decode(m->cls->c, a, (void **)&code, NULL))
		return NULL;
	return code;
}

int jinst_pass_method_id(jinst_pass_method *m, uint32_t flags, uint32_t *id)
{
	return jinst_methods_assign(&m->cls->ins->methods, m->cls, m, flags, id, NULL);
}
