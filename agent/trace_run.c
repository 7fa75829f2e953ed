/*
 * The trace module's life in the VM: the clock of trace=times, and start,
 * stop and the ends of threads. Its options, pass and hooks' mode are
 * trace.c's, its outputs trace_output.c's.
 */
#define _POSIX_C_SOURCE 200809L /* clock_nanosleep */
#include "trace.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

/* ---- the clock (trace=times) ------------------------------------------- *
 *
 * The hooks keep each thread's stack of method ids and read no clock; this
 * thread calls Hooks.sample every tick= microseconds with the time, which
 * gives the time since the last call to every thread's stack as it stands
 * (runtime-java/jinst/rt/Hooks.java). The time is CLOCK_MONOTONIC in
 * nanoseconds, System.nanoTime's clock on Linux. A wake-up that comes late
 * gives the time it came at, so no time is lost, and the next is scheduled
 * a period after it: a stalled clock does not catch up in a burst. Its
 * cost is its wake-ups, about 20 us of CPU each on this kind of machine
 * (2% of a core at the default period), and the samples, a few
 * microseconds for each thread whose stack changed.
 */

/*
 * A session's clock is its own: each clock thread gets the generation it
 * was started in and runs while that is the current one; stop moves the
 * generation on (so the thread ends after the sample it may be in) and
 * waits for it to end. A clock that has not ended by then (a sample held
 * up, by a long pause say) can never sample again, and the next start
 * waits for it once more and, if it still runs, refuses: two clocks would
 * give every sample twice, and the late one's time would fall into the
 * new session.
 */
static struct {
	jmethodID engage, disengage, thread_start, thread_end, sample;
	atomic_int ready;         /* the methods above are set */
	atomic_uint clock_gen;    /* the current clock's generation (moved on at stop) */
	atomic_int clocks;        /* clock threads that have not ended */
	atomic_llong period_ns;   /* the clock's period, read by a clock thread as it begins */
} rt;

static int64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void JNICALL clock_run(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	(void)jvmti;
	const unsigned gen = (unsigned)(uintptr_t)arg;
	const int64_t period = atomic_load(&rt.period_ns);
	jclass hooks = jinst_agent_hooks_class();
	/* Linux delays a timer by up to 50 us by default: a tenth of a
	 * period is enough leeway. */
	prctl(PR_SET_TIMERSLACK, (unsigned long)(period / 10 > 0 ? period / 10 : 1), 0, 0, 0);
	int64_t next = monotonic_ns();
	bool failed = false;
	while (atomic_load(&rt.clock_gen) == gen) {
		next += period;
		struct timespec at = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
		int64_t now = monotonic_ns();
		if (now - next > period)
			next = now;
		if (atomic_load(&rt.clock_gen) != gen)
			break;
		(*jni)->CallStaticVoidMethod(jni, hooks, rt.sample, (jlong)now);
		if ((*jni)->ExceptionCheck(jni)) {
			/* (once: an exception here would be the same every time) */
			if (!failed)
				jinst_agent_java_failed(jni, "Hooks.sample");
			(*jni)->ExceptionClear(jni);
			failed = true;
		}
	}
	atomic_fetch_sub(&rt.clocks, 1);
}

/* A java.lang.Thread for RunAgentThread, made before the hooks are engaged
 * so that its constructor's calls are not traced. */
static jthread clock_thread(JNIEnv *jni)
{
	jclass k = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID init = k ? (*jni)->GetMethodID(jni, k, "<init>", "(Ljava/lang/String;)V") : NULL;
	jstring name = init ? (*jni)->NewStringUTF(jni, "jinst clock") : NULL;
	jthread t = name ? (*jni)->NewObject(jni, k, init, name) : NULL;
	if (jinst_agent_java_failed(jni, "new Thread(\"jinst clock\")"))
		t = NULL;
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	if (name)
		(*jni)->DeleteLocalRef(jni, name);
	return t;
}

static void clock_start(const jinst_trace_config *t, JNIEnv *jni, jthread clock)
{
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	atomic_store(&rt.period_ns, (long long)t->tick_us * 1000);
	unsigned gen = atomic_fetch_add(&rt.clock_gen, 1) + 1;
	atomic_fetch_add(&rt.clocks, 1);
	/* arg: the generation, by value (the settings are parsed anew by the
	 * next session's start) */
	if (jinst_agent_jvmti_failed((*jvmti)->RunAgentThread(jvmti, clock, clock_run, (void *)(uintptr_t)gen,
	                                                      JVMTI_THREAD_MAX_PRIORITY),
	                             "RunAgentThread (the clock; times will be 0)"))
		atomic_fetch_sub(&rt.clocks, 1);
	(*jni)->DeleteLocalRef(jni, clock);
}

/* Waits up to wait_ms for every clock thread to end; whether they did. */
static bool clocks_ended(long wait_ms)
{
	for (long i = 0; i < wait_ms && atomic_load(&rt.clocks) > 0; i++) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	return atomic_load(&rt.clocks) == 0;
}

/* ---- clock=cpu: each thread's CPU time --------------------------------- *
 *
 * Under clock=cpu, Hooks.sample asks jinst.rt.CpuClock for the CPU time
 * of every thread of the registry at each tick and gives each thread what
 * it used since the last (runtime-java/jinst/rt/CpuClock.java). The reads
 * are here, one JNI call for all threads, so that no Java code runs while
 * the sample holds the registry's lock. GetThreadCpuTime reads the
 * kernel's CPU clock of the thread (pthread_getcpuclockid's, user and
 * system time): a system call, about 0.4 us of CPU on this kind of
 * machine, 0.7 to 0.9 us per thread with JVMTI's lookup of the thread. A
 * thread that used nothing since its last reading is asked its state
 * first, and left unread while it waits (CpuClock's essay): 200 idle
 * threads for 3.5 s cost 0.54 to 0.67 s of CPU on JDK 17 against 0.77 to
 * 1.1 s read every tick (0.32 to 0.35 s under the wall clock); on JDK 25
 * GetThreadState costs about as much as the reading (both within 0.69 to
 * 1.03 s). A virtual thread has no CPU clock
 * (JVMTI_ERROR_UNSUPPORTED_OPERATION).
 */

enum { CPU_NONE = -1, CPU_RUNNING = -2, CPU_WAITING = -3 }; /* CpuClock.NONE, RUNNING, WAITING */

/* What a thread waits in: it runs nothing (JVMTI_THREAD_STATE_*). */
#define WAITS (JVMTI_THREAD_STATE_SLEEPING | JVMTI_THREAD_STATE_PARKED | JVMTI_THREAD_STATE_IN_OBJECT_WAIT | \
               JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER)

static jlong cpu_time(JNIEnv *jni, jvmtiEnv *jvmti, jthread t, jboolean may_wait)
{
	jlong ns = CPU_NONE;
	jint state = 0;
	if (!t)
		return CPU_NONE;
	/* CpuClock's essay: a thread that used nothing and still waits is
	 * left unread (no system call) */
	if (may_wait && (*jvmti)->GetThreadState(jvmti, t, &state) == JVMTI_ERROR_NONE && (state & WAITS) &&
	    (state & JVMTI_THREAD_STATE_ALIVE))
		ns = CPU_WAITING;
	else if ((*jvmti)->GetThreadCpuTime(jvmti, t, &ns) != JVMTI_ERROR_NONE || ns < 0)
		ns = (*jvmti)->GetThreadState(jvmti, t, &state) == JVMTI_ERROR_NONE && (state & JVMTI_THREAD_STATE_ALIVE) &&
		             (state & JVMTI_THREAD_STATE_RUNNABLE) ? CPU_RUNNING : CPU_NONE;
	(*jni)->DeleteLocalRef(jni, t);
	return ns;
}

/* jinst.rt.CpuClock.read0(threads, n, ns, may), on the clock thread. */
static void JNICALL native_cpu_read(JNIEnv *jni, jclass cls, jobjectArray threads, jint n, jlongArray ns,
                                    jbooleanArray may)
{
	(void)cls;
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	if (n < 0 || !threads || !ns || !may || n > (*jni)->GetArrayLength(jni, threads) ||
	    n > (*jni)->GetArrayLength(jni, ns) || n > (*jni)->GetArrayLength(jni, may))
		return;
	jlong buf[64];
	jboolean maybe[64];
	for (jint i = 0; i < n; i += 64) {
		jint k = n - i < 64 ? n - i : 64;
		(*jni)->GetBooleanArrayRegion(jni, may, i, k, maybe);
		for (jint j = 0; j < k; j++)
			buf[j] = cpu_time(jni, jvmti, (*jni)->GetObjectArrayElement(jni, threads, i + j), maybe[j]);
		(*jni)->SetLongArrayRegion(jni, ns, i, k, buf);
	}
}

/* The capability (HotSpot has it at any time) and CpuClock's native,
 * before the hooks are engaged. */
static bool cpu_clock_init(JNIEnv *jni)
{
	jvmtiEnv *jvmti = jinst_agent_jvmti();
	jvmtiCapabilities caps = {0};
	caps.can_get_thread_cpu_time = 1;
	if (jinst_agent_jvmti_failed((*jvmti)->AddCapabilities(jvmti, &caps),
	                             "AddCapabilities(can_get_thread_cpu_time): no clock=cpu"))
		return false;
	jclass k = (*jni)->FindClass(jni, "jinst/rt/CpuClock");
	if (jinst_agent_java_failed(jni, "FindClass(jinst/rt/CpuClock)") || !k)
		return false;
	JNINativeMethod natives[] = {{(char *)"read0", (char *)"([Ljava/lang/Thread;I[J[Z)V", (void *)native_cpu_read}};
	jint r = (*jni)->RegisterNatives(jni, k, natives, 1);
	(*jni)->DeleteLocalRef(jni, k);
	return !jinst_agent_java_failed(jni, "RegisterNatives(CpuClock)") && r == 0;
}

/* ---- the module's life ------------------------------------------------- */

static bool find_methods(JNIEnv *jni, jclass hooks)
{
	struct { jmethodID *id; const char *name, *sig; } ms[] = {
		{&rt.engage, "engage", "(IIJ)V"}, {&rt.disengage, "disengage", "()V"},
		{&rt.thread_start, "threadStart", "()V"},     {&rt.thread_end, "threadEnd", "(Ljava/lang/Thread;)V"},
		{&rt.sample, "sample", "(J)V"}};
	for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
		*ms[i].id = (*jni)->GetStaticMethodID(jni, hooks, ms[i].name, ms[i].sig);
		if (jinst_agent_java_failed(jni, ms[i].name) || !*ms[i].id)
			return false;
	}
	return jinst_trace_output_init(jni);
}

static bool trace_start(const void *c, JNIEnv *jni)
{
	const jinst_trace_config *t = c;
	jclass hooks = jinst_agent_hooks_class();
	if (!clocks_ended(2000)) {
		jinst_agent_log("the clock thread of the session before has not ended (a sample held up); "
		                "not starting a second clock: load again in a moment");
		return false;
	}
	if (!find_methods(jni, hooks) || (t->clock == JINST_TRACE_CLOCK_CPU && !cpu_clock_init(jni)))
		return false;
	atomic_store(&rt.ready, 1);
	jinst_trace_output_begin(t);
	jthread clock = NULL;
	if (t->mode == JINST_TRACE_TIMES && t->tick_us > 0 && !(clock = clock_thread(jni)))
		jinst_agent_log("no clock thread: times will be 0");
	/* the clock runs no hook: the runtime gives it no row (Hooks.own) */
	jfieldID own = (*jni)->GetStaticFieldID(jni, hooks, "own", "Ljava/lang/Thread;");
	if (jinst_agent_java_failed(jni, "Hooks.own") || !own) {
		if (clock)
			(*jni)->DeleteLocalRef(jni, clock);
		return false;
	}
	(*jni)->SetStaticObjectField(jni, hooks, own, clock);
	(*jni)->CallStaticVoidMethod(jni, hooks, rt.engage, (jint)jinst_trace_hooks_mode(t), (jint)t->max_events,
	                             (jlong)monotonic_ns());
	if (jinst_agent_java_failed(jni, "Hooks.engage")) {
		if (clock)
			(*jni)->DeleteLocalRef(jni, clock);
		return false;
	}
	if (clock)
		clock_start(t, jni, clock);
	return true;
}

/* The clock thread ends within a period of its generation moved on:
 * waited for, so that a session after stop starts with no clock but its
 * own and thread counts stay bounded. */
static void clock_join(const jinst_trace_config *t)
{
	atomic_fetch_add(&rt.clock_gen, 1);
	if (!clocks_ended(t->tick_us / 1000 + 1000))
		jinst_agent_log("the clock thread has not ended (it samples no more)");
}

static void trace_stop(const void *c, JNIEnv *jni)
{
	clock_join(c);
	jinst_trace_dump(c, jni);
	(*jni)->CallStaticVoidMethod(jni, jinst_agent_hooks_class(), rt.disengage);
	jinst_agent_java_failed(jni, "Hooks.disengage");
}

/* A platform thread starts: the runtime gives it its rows before its first
 * hook (Hooks.threadStart; a hook's slow branch never taken is what keeps
 * the slow call out of the JIT's code). */
static void trace_thread_start(const void *c, JNIEnv *jni, jthread thread)
{
	(void)c;
	(void)thread;
	if (!atomic_load(&rt.ready))
		return;
	(*jni)->CallStaticVoidMethod(jni, jinst_agent_hooks_class(), rt.thread_start);
	jinst_agent_java_failed(jni, "Hooks.threadStart");
}

/* A thread ends: the runtime folds what it recorded into what ended threads
 * left, so its registry stays as small as the set of live threads. */
static void trace_thread_end(const void *c, JNIEnv *jni, jthread thread)
{
	(void)c;
	if (!atomic_load(&rt.ready))
		return;
	(*jni)->CallStaticVoidMethod(jni, jinst_agent_hooks_class(), rt.thread_end, thread);
	jinst_agent_java_failed(jni, "Hooks.threadEnd");
}

const jinst_agent_module jinst_trace_module = {
	JINST_TRACE_MODULE_OPTIONS,
	.builtin_passes = jinst_trace_passes,
	.start = trace_start,
	.dump = jinst_trace_dump,
	.stop = trace_stop,
	.thread_start = trace_thread_start,
	.thread_end = trace_thread_end,
	.check_existing = jinst_trace_check_existing,
	/* A new session: the runtime drops what the one before recorded
	 * (Hooks.engage), the core hands out method ids from 0 again. */
	.restartable = true,
};
