/*
 * The natives module's start against a VM that refuses the prefix, and one
 * that takes it (a JVMTI environment of the test's own, which HotSpot,
 * where the capability is always there, never plays): refused, the log
 * says so in one line, start still succeeds (the other modules run on)
 * and Natives (tests/data) is left as it was; taken, its five natives are
 * wrapped at the first load.
 *   test_natives_module DATA_CLASSES
 */
#include <string.h>

#include "core.h"
#include "natives.h"

#include "../../tests/testlib.h"

static jvmtiError refused = JVMTI_ERROR_NOT_AVAILABLE;
static char prefix_set[64];

static jvmtiError JNICALL add_capabilities(jvmtiEnv *env, const jvmtiCapabilities *caps)
{
	(void)env;
	return caps->can_set_native_method_prefix ? refused : JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL set_prefix(jvmtiEnv *env, const char *prefix)
{
	(void)env;
	snprintf(prefix_set, sizeof prefix_set, "%s", prefix ? prefix : "(null)");
	return JVMTI_ERROR_NONE;
}

static jvmtiError JNICALL error_name(jvmtiEnv *env, jvmtiError e, char **name)
{
	(void)env, (void)e, (void)name;
	return JVMTI_ERROR_ILLEGAL_ARGUMENT;
}

/* The methods Natives has after an instrumenter with the module's pass. */
static uint16_t methods_after(const uint8_t *bytes, size_t len)
{
	jinst_instrument_options io = JINST_INSTRUMENT_OPTIONS_INIT;
	io.passes = 0;
	jinst_instrument *ins = NULL;
	jinst_diag d;
	jinst_natives_config config = {false};
	CHECK(jinst_instrument_new(&ins, &io, &d) == 0, "new");
	CHECK(jinst_natives_module.add_passes(&config, ins, &d) == 0, "add_passes: %s", d.message);
	jinst_arena *arena;
	jinst_arena_new(&arena);
	uint8_t *out = NULL;
	size_t out_len = 0;
	CHECK(jinst_instrument_class(ins, arena, bytes, len, NULL, 0, NULL, &out, &out_len, &d) == 0, "instrument");
	uint16_t n = 0;
	jinst_class *c = NULL;
	if (out && jinst_class_parse(&c, out, out_len, NULL, NULL, NULL) == 0)
		n = jinst_class_method_count(c);
	jinst_class_free(c);
	free(out);
	jinst_arena_free(arena);
	jinst_instrument_free(ins);
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_natives_module DATA_CLASSES\n");
		return 2;
	}
	size_t len;
	uint8_t *bytes = test_load(argv[1], "natives/natives/Natives.class", &len);
	struct jvmtiInterface_1_ fns;
	memset(&fns, 0, sizeof fns);
	fns.AddCapabilities = add_capabilities;
	fns.SetNativeMethodPrefix = set_prefix;
	fns.GetErrorName = error_name;
	const struct jvmtiInterface_1_ *env = &fns;
	jinst_the_core.jvmti = (jvmtiEnv *)&env;
	jinst_the_core.log = tmpfile();
	jinst_natives_config config = {false};

	CHECK(jinst_natives_module.start(&config, NULL), "start goes on when the VM refuses");
	CHECK(prefix_set[0] == 0, "no prefix set without the capability");
	char log[4096] = "";
	rewind(jinst_the_core.log);
	size_t got = fread(log, 1, sizeof log - 1, jinst_the_core.log);
	log[got] = 0;
	CHECK(strstr(log, "AddCapabilities(can_set_native_method_prefix) failed: JVMTI error 98") &&
	              strstr(log, "natives: the VM refuses the native method prefix: native methods left as they are"),
	      "the log says so: %s", log);
	CHECK(methods_after(bytes, len) == 0, "refused: Natives left as it was");

	refused = JVMTI_ERROR_NONE;
	CHECK(jinst_natives_module.start(&config, NULL), "start");
	CHECK(!strcmp(prefix_set, JINST_NATIVE_PREFIX), "the prefix set: %s", prefix_set);
	CHECK(methods_after(bytes, len) == 12, "taken: Natives's five natives wrapped");
	fclose(jinst_the_core.log);
	jinst_the_core.log = NULL;
	jinst_the_core.jvmti = NULL;
	free(bytes);
	return check_report();
}
