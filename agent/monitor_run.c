/*
 * The monitor module's life in the VM: the pass, the JVMTI monitor events,
 * and the tables the outputs are made of.
 *
 * Two sources, each exact in its own way. The pass (include/jinst/monitor.h)
 * has every lock site call the runtime before it takes its monitor, so
 * jinst.rt.Monitors counts every enter, per site and lock class, on each
 * thread's own path (Hooks.BY_TID). Contention the bytecode cannot see: a
 * monitorenter that finds its monitor taken blocks inside the VM. So this
 * module enables JVMTI's MonitorContendedEnter and MonitorContendedEntered,
 * which HotSpot posts only from the slow path of a monitor enter (an
 * uncontended enter, a compare-and-swap, posts nothing and costs nothing
 * more), and MonitorWait/MonitorWaited around Object.wait. The time
 * between the two events of a pair, on the thread itself, is the time it
 * waited, kept in the module's JVMTI thread-local storage of the thread
 * the events name (start_mark).
 *
 * Where it waited. At Entered, the thread's top frame (GetStackTrace) is
 * the method and bytecode index of the monitorenter it blocked at, or,
 * for a synchronized method, that method at index 0 (HotSpot locks a
 * synchronized method's monitor once its frame exists, before the first
 * instruction; no monitorenter can be at index 0, which needs an object
 * pushed first). The index gives the line (GetLineNumberTable), and (class,
 * method, descriptor, line or "method") names the pass's site. The lock's
 * class is the event object's. A frame of the runtime's own (jinst/rt/:
 * its registry lock; the bridge java.lang.$JinstHooks: the VM's lock of a
 * class being initialized, when a hook's first call initializes the
 * runtime on several threads at once) is left out. Contention in code the pass did not
 * instrument (the JDK's, outside include=) is reported at its place all
 * the same, its enters unknown. For wait(), the frames of
 * java.lang.Object (wait, wait0) are skipped to the caller's.
 *
 * The module has a JVMTI environment of its own: its event callbacks are
 * its own, and the core's (class loads, VM death, threads' ends) are
 * untouched. Each resolved location is cached by (method, index), so an
 * event costs a stack read, a class signature and a lookup under the
 * module's mutex; that is paid only by a thread that is about to block,
 * or has just blocked.
 *
 * A session after `stop` (the core's restart) starts from nothing: the
 * pass's sites are the new instrumenter's (the old table goes with the
 * old instrumenter, so stop forgets it), the places, lock classes, stats
 * and cached locations are freed at start (the last session's rows were
 * written at its stop), and the runtime's engage drops every thread's
 * enters and the sites' first classes. The JVMTI environment, its
 * capabilities and callbacks, and the global reference to the runtime
 * are made once and kept for the VM's life: a session only turns the
 * events on, and its stop off: a session adds no environment (one more
 * for the VM to post every event to) and no reference.
 * A start mark older than the session's start (a thread blocked when the
 * last session stopped) is a start of that session, not of this one: it
 * is ignored (start_take).
 *
 * What has no start is left out, for its time cannot be given: an enter
 * or a wait() that was blocked when the module started, and the VM's own
 * waits. A thread waiting for another's class initialization waits on
 * the class's init lock (an int[], InstanceKlass::initialize_impl), and
 * HotSpot (JDK 17 and 25) posts MonitorWaited at its end but no
 * MonitorWait at its start (JVM_MonitorWait, Object.wait's, alone posts
 * that); its top frame is the program's, at the instruction that needed
 * the class. So a MonitorWaited counts only with its start and with
 * java.lang.Object's wait at the top of the stack, and a contended enter
 * only with its start and at a monitorenter (or a synchronized method's
 * entry): the same init lock, contended, is at none.
 *
 * Limit: a frame entered before `stop`
 * runs its old code to its end (JVMTI RetransformClasses), calling the
 * hook with the last session's site ids: such a frame still looping after
 * a restart counts its enters at whatever site has that id now.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jinst/monitor.h"
#include "monitor.h"

/* ---- the tables (under lock) ------------------------------------------- */

enum { KIND_BLOCK, KIND_METHOD, KIND_WAIT };
static const char *const kind_names[] = {"block", "method", "wait"};

/* A place: a site of the pass (site >= 0) or one only the events saw;
 * instrumented: a site of the pass, or a wait() in a method that holds
 * sites of the pass (its enters are counted). */
typedef struct place {
	char *class_name, *method, *descriptor, *source; /* one block; source "" when none */
	uint32_t line;
	int kind;
	int64_t site;
	bool instrumented;
} place;

/* What the events measured at (place, lock class). */
typedef struct stats {
	uint32_t place, lock_class;
	uint64_t enters; /* the runtime's, set at each dump */
	uint64_t contended, wait_ns, max_wait_ns, waits, waited_ns;
} stats;

/* A cached location: (method, bci, whether a wait) -> place, or IGNORED;
 * sites: the pass's site count when it was resolved. */
typedef struct loc {
	jmethodID method;
	jlocation bci;
	int wait;
	uint32_t place, sites;
} loc;
#define IGNORED UINT32_MAX

static const char *const outputs[] = {".monitors.txt", ".monitors.tsv"};

static struct {
	pthread_mutex_t lock;
	jvmtiEnv *jvmti;                 /* the module's own environment */
	jinst_monitor_sites *sites;      /* the pass's (the instrumenter's life) */
	place *places;
	uint32_t nplaces, capplaces;
	char **classes;                  /* lock classes, internal names */
	uint32_t nclasses, capclasses;
	stats *stats;
	uint32_t nstats, capstats;
	uint32_t *slots, nslots;         /* stats by (place, lock class) */
	uint32_t *site_place, nsite_place; /* the place of pass site i, or IGNORED */
	loc *locs;
	uint32_t nlocs, caplocs;
	atomic_int on;
	_Atomic int64_t since;           /* the session's start (now_ns) */
	jclass monitors;                 /* jinst.rt.Monitors, a global reference */
	jmethodID engage, disengage, snapshot, reset;
} mon = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Makes room for one more element of size sz in *a (count n, capacity *cap). */
static bool room(void **a, uint32_t n, uint32_t *cap, size_t sz)
{
	if (n < *cap)
		return true;
	uint32_t c = *cap ? *cap * 2 : 64;
	void *p = realloc(*a, (size_t)c * sz);
	if (!p)
		return false;
	*a = p;
	*cap = c;
	return true;
}

static uint32_t class_id(const char *name)
{
	for (uint32_t i = 0; i < mon.nclasses; i++)
		if (!strcmp(mon.classes[i], name))
			return i;
	char *s = strdup(name);
	if (!s || !room((void **)&mon.classes, mon.nclasses, &mon.capclasses, sizeof(char *))) {
		free(s);
		return IGNORED;
	}
	mon.classes[mon.nclasses] = s;
	return mon.nclasses++;
}

/* The stats of (place p, lock class k), made on first use: an
 * open-addressing hash over the array (index + 1, 0 free). */
static uint32_t stat_hash(uint32_t p, uint32_t k)
{
	return (p * 0x9e3779b1u) ^ (k * 0x85ebca6bu);
}

static bool stats_rehash(void)
{
	uint32_t n = mon.nslots ? mon.nslots * 2 : 256, *s = calloc(n, sizeof(*s));
	if (!s)
		return false;
	for (uint32_t i = 0; i < mon.nstats; i++) {
		uint32_t j = stat_hash(mon.stats[i].place, mon.stats[i].lock_class) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = i + 1;
	}
	free(mon.slots);
	mon.slots = s;
	mon.nslots = n;
	return true;
}

static stats *stats_of(uint32_t p, uint32_t k)
{
	if ((uint64_t)(mon.nstats + 1) * 2 > mon.nslots && !stats_rehash())
		return NULL;
	uint32_t mask = mon.nslots - 1, j = stat_hash(p, k) & mask;
	for (; mon.slots[j]; j = (j + 1) & mask) {
		stats *s = &mon.stats[mon.slots[j] - 1];
		if (s->place == p && s->lock_class == k)
			return s;
	}
	if (!room((void **)&mon.stats, mon.nstats, &mon.capstats, sizeof(stats)))
		return NULL;
	stats *s = &mon.stats[mon.nstats];
	memset(s, 0, sizeof(*s));
	s->place = p;
	s->lock_class = k;
	mon.slots[j] = ++mon.nstats;
	return s;
}

/* The place of these names, made on first use. One the events saw
 * before the pass instrumented it (attach: the events are on before the
 * loaded classes are retransformed) becomes the pass's site when the
 * site is found: its row then says it is instrumented, as it counts the
 * site's enters. */
static uint32_t place_add(const char *cls, const char *method, const char *desc, const char *source, uint32_t line,
                          int kind, int64_t site, bool instrumented)
{
	for (uint32_t i = 0; i < mon.nplaces; i++) {
		place *q = &mon.places[i];
		if (q->kind == kind && q->line == line && !strcmp(q->class_name, cls) && !strcmp(q->method, method) &&
		    !strcmp(q->descriptor, desc)) {
			if (q->site < 0 && site >= 0)
				q->site = site;
			q->instrumented |= instrumented || site >= 0;
			return i;
		}
	}
	if (!source)
		source = "";
	size_t a = strlen(cls) + 1, b = strlen(method) + 1, c = strlen(desc) + 1, d = strlen(source) + 1;
	char *s = malloc(a + b + c + d);
	if (!s || !room((void **)&mon.places, mon.nplaces, &mon.capplaces, sizeof(place))) {
		free(s);
		return IGNORED;
	}
	memcpy(s, cls, a);
	memcpy(s + a, method, b);
	memcpy(s + a + b, desc, c);
	memcpy(s + a + b + c, source, d);
	mon.places[mon.nplaces] = (place){s, s + a, s + a + b, s + a + b + c, line, kind, site, instrumented || site >= 0};
	return mon.nplaces++;
}

/* The place of the pass's site id (its names from the pass's table). */
static uint32_t place_for_site(uint32_t site)
{
	if (site < mon.nsite_place && mon.site_place[site] != IGNORED)
		return mon.site_place[site];
	jinst_monitor_site_info info;
	if (!mon.sites || jinst_monitor_sites_info(mon.sites, site, &info))
		return IGNORED;
	if (site >= mon.nsite_place) {
		uint32_t n = mon.nsite_place ? mon.nsite_place : 256;
		while (n <= site)
			n *= 2;
		uint32_t *a = realloc(mon.site_place, (size_t)n * sizeof(*a));
		if (!a)
			return IGNORED;
		for (uint32_t j = mon.nsite_place; j < n; j++)
			a[j] = IGNORED;
		mon.site_place = a;
		mon.nsite_place = n;
	}
	int kind = info.kind == JINST_MONITOR_SITE_METHOD ? KIND_METHOD : KIND_BLOCK;
	return mon.site_place[site] = place_add(info.class_name, info.method, info.descriptor, info.source_file,
	                                        info.line, kind, site, true);
}

/* Every table emptied and freed: a new session's start (under lock). */
static void tables_clear(void)
{
	for (uint32_t i = 0; i < mon.nplaces; i++)
		free(mon.places[i].class_name); /* the place's one block */
	for (uint32_t i = 0; i < mon.nclasses; i++)
		free(mon.classes[i]);
	free(mon.places);
	free(mon.classes);
	free(mon.stats);
	free(mon.slots);
	free(mon.site_place);
	free(mon.locs);
	mon.places = NULL;
	mon.classes = NULL;
	mon.stats = NULL;
	mon.slots = mon.site_place = NULL;
	mon.locs = NULL;
	mon.nplaces = mon.capplaces = mon.nclasses = mon.capclasses = mon.nstats = mon.capstats = 0;
	mon.nslots = mon.nsite_place = mon.nlocs = mon.caplocs = 0;
}

/* ---- names from JVMTI --------------------------------------------------- */

/* "Lpkg/C;" to "pkg/C" in place; arrays ("[I") stay as they are. */
static char *internal_name(char *sig)
{
	size_t n = strlen(sig);
	if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
		sig[n - 1] = 0;
		return sig + 1;
	}
	return sig;
}

/* The internal name of k into buf ("" when it cannot be read). */
static void class_name(jclass k, char *buf, size_t size)
{
	char *sig = NULL;
	buf[0] = 0;
	if (k && (*mon.jvmti)->GetClassSignature(mon.jvmti, k, &sig, NULL) == JVMTI_ERROR_NONE && sig) {
		snprintf(buf, size, "%s", internal_name(sig));
		(*mon.jvmti)->Deallocate(mon.jvmti, (unsigned char *)sig);
	}
}

static uint32_t line_of(jmethodID m, jlocation bci)
{
	jint n = 0;
	jvmtiLineNumberEntry *t = NULL;
	uint32_t line = 0;
	jlocation best = -1;
	if ((*mon.jvmti)->GetLineNumberTable(mon.jvmti, m, &n, &t) != JVMTI_ERROR_NONE)
		return 0;
	for (jint i = 0; i < n; i++)
		if (t[i].start_location <= bci && t[i].start_location >= best) {
			best = t[i].start_location;
			line = (uint32_t)t[i].line_number;
		}
	(*mon.jvmti)->Deallocate(mon.jvmti, (unsigned char *)t);
	return line;
}

/* The index of the monitorenter a thread blocked at whose frame is at bci:
 * HotSpot's interpreter moves a frame's index past the monitorenter
 * before it locks (templateTable_x86.cpp, monitorenter: so that an
 * asynchronous exception sees the object popped), compiled code reports
 * the monitorenter's own. The line is the monitorenter's either way.
 * false when the frame is at no monitorenter: the lock is the VM's own,
 * taken on the frame's behalf (the lock of a class another thread is
 * initializing, an int[]: InstanceKlass::initialize_impl); a frame
 * without bytecodes (a native method's JNI MonitorEnter) is at bci. */
static bool monitorenter_at(jmethodID m, jlocation bci, jlocation *at)
{
	jint n = 0;
	unsigned char *code = NULL;
	*at = bci;
	if ((*mon.jvmti)->GetBytecodes(mon.jvmti, m, &n, &code) != JVMTI_ERROR_NONE)
		return true;
	bool found = bci >= 0 && bci < n && code[bci] == 0xc2; /* monitorenter */
	if (!found && bci > 0 && bci <= n && code[bci - 1] == 0xc2) {
		*at = bci - 1;
		found = true;
	}
	(*mon.jvmti)->Deallocate(mon.jvmti, code);
	return found;
}

/* Whether the pass has a site in (cls, method, desc): a wait() there is in
 * code it instrumented. Under lock. */
static bool method_has_sites(const char *cls, const char *method, const char *desc)
{
	uint32_t n = mon.sites ? jinst_monitor_sites_count(mon.sites) : 0;
	jinst_monitor_site_info info;
	for (uint32_t i = 0; i < n; i++)
		if (!jinst_monitor_sites_info(mon.sites, i, &info) && !strcmp(info.method, method) &&
		    !strcmp(info.descriptor, desc) && !strcmp(info.class_name, cls))
			return true;
	return false;
}

/* The place of a frame (not cached yet), IGNORED for the runtime's own. */
static uint32_t resolve(JNIEnv *jni, jmethodID m, jlocation bci, bool wait)
{
	jclass k = NULL;
	char cls[1024], *name = NULL, *sig = NULL, *source = NULL;
	jint mods = 0;
	uint32_t p = IGNORED;
	if ((*mon.jvmti)->GetMethodDeclaringClass(mon.jvmti, m, &k) != JVMTI_ERROR_NONE)
		return IGNORED;
	class_name(k, cls, sizeof cls);
	if ((*mon.jvmti)->GetSourceFileName(mon.jvmti, k, &source) != JVMTI_ERROR_NONE)
		source = NULL;
	(*jni)->DeleteLocalRef(jni, k);
	if (!cls[0] || !strncmp(cls, JINST_RUNTIME_PACKAGE, strlen(JINST_RUNTIME_PACKAGE)) ||
	    !strncmp(cls, "java/lang/$Jinst", 16) ||
	    (*mon.jvmti)->GetMethodName(mon.jvmti, m, &name, &sig, NULL) != JVMTI_ERROR_NONE) {
		(*mon.jvmti)->Deallocate(mon.jvmti, (unsigned char *)source);
		return IGNORED;
	}
	(*mon.jvmti)->GetMethodModifiers(mon.jvmti, m, &mods);
	int kind = wait ? KIND_WAIT : (mods & 0x20) && bci <= 0 ? KIND_METHOD : KIND_BLOCK; /* ACC_SYNCHRONIZED */
	jlocation at = bci;
	uint32_t line = 0, site;
	if (kind == KIND_BLOCK && !monitorenter_at(m, bci, &at))
		p = IGNORED;
	else if (line = kind == KIND_METHOD ? 0 : line_of(m, at), kind != KIND_WAIT && mon.sites &&
	         jinst_monitor_sites_find(mon.sites, &site, cls, name, sig, line,
	                                  kind == KIND_METHOD ? JINST_MONITOR_SITE_METHOD : JINST_MONITOR_SITE_BLOCK) == 0)
		p = place_for_site(site);
	else
		p = place_add(cls, name, sig, source, line, kind, -1, kind == KIND_WAIT && method_has_sites(cls, name, sig));
	(*mon.jvmti)->Deallocate(mon.jvmti, (unsigned char *)name);
	(*mon.jvmti)->Deallocate(mon.jvmti, (unsigned char *)sig);
	(*mon.jvmti)->Deallocate(mon.jvmti, (unsigned char *)source);
	return p;
}

/* The place of the frame at (m, bci), through the cache. A place that was
 * no site of the pass is looked up again once the pass has more sites: a
 * class instrumented after its first contention (attach: the events are
 * on before the loaded classes are retransformed). Under lock. */
static uint32_t place_of(JNIEnv *jni, jmethodID m, jlocation bci, bool wait)
{
	uint32_t sites = mon.sites ? jinst_monitor_sites_count(mon.sites) : 0;
	loc *l = NULL;
	for (uint32_t i = 0; i < mon.nlocs && !l; i++)
		if (mon.locs[i].method == m && mon.locs[i].bci == bci && mon.locs[i].wait == wait)
			l = &mon.locs[i];
	if (l && (l->sites == sites || (l->place != IGNORED && mon.places[l->place].instrumented)))
		return l->place;
	uint32_t p = resolve(jni, m, bci, wait);
	if (l)
		*l = (loc){m, bci, wait, p, sites};
	else if (room((void **)&mon.locs, mon.nlocs, &mon.caplocs, sizeof(loc)))
		mon.locs[mon.nlocs++] = (loc){m, bci, wait, p, sites};
	return p;
}

/* Whether m is a method of java.lang.Object (wait's frames). */
static bool object_method(JNIEnv *jni, jmethodID m)
{
	jclass k = NULL;
	char cls[64];
	if ((*mon.jvmti)->GetMethodDeclaringClass(mon.jvmti, m, &k) != JVMTI_ERROR_NONE)
		return false;
	class_name(k, cls, sizeof cls);
	(*jni)->DeleteLocalRef(jni, k);
	return !strcmp(cls, "java/lang/Object");
}

/* Adds what an event measured to (the place of thread's frame, object's
 * class). A wait whose top frame is not java.lang.Object's is the VM's
 * own, not a wait() call: left out (on_waited). */
static void record(JNIEnv *jni, jthread thread, jobject object, bool wait, int64_t dt)
{
	jvmtiFrameInfo frames[6];
	jint n = 0;
	if ((*mon.jvmti)->GetStackTrace(mon.jvmti, thread, 0, 6, frames, &n) != JVMTI_ERROR_NONE || n <= 0)
		return;
	jint d = 0;
	while (wait && d + 1 < n && object_method(jni, frames[d].method))
		d++;
	if (wait && !d)
		return;
	char lock[1024];
	jclass k = (*jni)->GetObjectClass(jni, object);
	class_name(k, lock, sizeof lock);
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	pthread_mutex_lock(&mon.lock);
	if (!atomic_load(&mon.on)) { /* stopped meanwhile: the tables may be the next session's */
		pthread_mutex_unlock(&mon.lock);
		return;
	}
	uint32_t p = place_of(jni, frames[d].method, frames[d].location, wait);
	uint32_t c = p == IGNORED || !lock[0] ? IGNORED : class_id(lock);
	stats *s = c == IGNORED ? NULL : stats_of(p, c);
	if (s && wait) {
		s->waits++;
		s->waited_ns += (uint64_t)dt;
	} else if (s) {
		s->contended++;
		s->wait_ns += (uint64_t)dt;
		if ((uint64_t)dt > s->max_wait_ns)
			s->max_wait_ns = (uint64_t)dt;
	}
	pthread_mutex_unlock(&mon.lock);
}

/* ---- the events --------------------------------------------------------- */

/* The start of the thread's pending blocked enter or wait(), in the
 * module's JVMTI thread-local storage (the value itself, never 0): the
 * storage of the thread the event names, so a virtual thread that
 * unmounts while it blocks (JDK 24 on) finds its own start on whatever
 * carrier it comes back. The pairs never nest: HotSpot posts
 * MonitorWaited before the enter that takes the monitor back. */
static void start_mark(jthread thread)
{
	int64_t t = now_ns();
	(*mon.jvmti)->SetThreadLocalStorage(mon.jvmti, thread, (const void *)(intptr_t)(t ? t : 1));
}

/* The time since start_mark; -1 when there is none (the thread blocked
 * before the module's events were on, or the VM posted the end of a wait
 * whose start it never posted) or when it is from before this session
 * began (the thread blocked under the last one). */
static int64_t start_take(jthread thread)
{
	int64_t t = now_ns();
	void *p = NULL;
	if ((*mon.jvmti)->GetThreadLocalStorage(mon.jvmti, thread, &p) != JVMTI_ERROR_NONE || !p)
		return -1;
	(*mon.jvmti)->SetThreadLocalStorage(mon.jvmti, thread, NULL);
	int64_t start = (int64_t)(intptr_t)p;
	return start < atomic_load(&mon.since) ? -1 : t - start;
}

static void JNICALL on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	(void)jvmti, (void)jni, (void)object;
	start_mark(thread);
}

static void JNICALL on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	(void)jvmti;
	int64_t dt = start_take(thread);
	if (dt >= 0 && atomic_load(&mon.on)) /* no start: its time and its place's enter unknown, left out */
		record(jni, thread, object, false, dt);
}

static void JNICALL on_wait(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jlong timeout)
{
	(void)jvmti, (void)jni, (void)object, (void)timeout;
	start_mark(thread);
}

static void JNICALL on_waited(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jboolean timed_out)
{
	(void)jvmti, (void)timed_out;
	int64_t dt = start_take(thread);
	if (dt >= 0 && atomic_load(&mon.on)) /* no start: see the module's comment, class initialization */
		record(jni, thread, object, true, dt);
}

static const jvmtiEvent events[] = {JVMTI_EVENT_MONITOR_CONTENDED_ENTER, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
                                    JVMTI_EVENT_MONITOR_WAIT, JVMTI_EVENT_MONITOR_WAITED};

/* The module's environment, its capabilities and callbacks: made by the
 * first session, kept by the next ones (a new environment per session
 * would be one more for the VM to post every event to, for its life). */
static bool env_setup(JNIEnv *jni)
{
	JavaVM *vm;
	jvmtiEnv *e = NULL;
	if (mon.jvmti)
		return true;
	if ((*jni)->GetJavaVM(jni, &vm) != 0 || (*vm)->GetEnv(vm, (void **)&e, JVMTI_VERSION_1_2) != JNI_OK || !e) {
		jinst_agent_log("monitor: no JVMTI environment of its own");
		return false;
	}
	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof caps);
	caps.can_generate_monitor_events = 1;
	caps.can_get_line_numbers = 1;
	caps.can_get_bytecodes = 1;
	caps.can_get_source_file_name = 1;
	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof cb);
	cb.MonitorContendedEnter = on_contended_enter;
	cb.MonitorContendedEntered = on_contended_entered;
	cb.MonitorWait = on_wait;
	cb.MonitorWaited = on_waited;
	if (jinst_agent_jvmti_failed((*e)->AddCapabilities(e, &caps),
	                             "AddCapabilities(can_generate_monitor_events, can_get_line_numbers, can_get_bytecodes, "
	                             "can_get_source_file_name)") ||
	    jinst_agent_jvmti_failed((*e)->SetEventCallbacks(e, &cb, (jint)sizeof cb), "SetEventCallbacks (monitor)")) {
		(*e)->DisposeEnvironment(e);
		return false;
	}
	mon.jvmti = e;
	return true;
}

static bool events_on(JNIEnv *jni)
{
	if (!env_setup(jni))
		return false;
	for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
		if (jinst_agent_jvmti_failed((*mon.jvmti)->SetEventNotificationMode(mon.jvmti, JVMTI_ENABLE, events[i], NULL),
		                             "SetEventNotificationMode (monitor)"))
			return false;
	return true;
}

static void events_off(void)
{
	for (size_t i = 0; mon.jvmti && i < sizeof events / sizeof events[0]; i++)
		(*mon.jvmti)->SetEventNotificationMode(mon.jvmti, JVMTI_DISABLE, events[i], NULL);
}

/* ---- the module --------------------------------------------------------- */

/* The pass and its table of sites, which lives as long as the
 * instrumenter (a new one each session). */
static int monitor_add_passes(const void *c, jinst_instrument *ins, jinst_diag *diag)
{
	(void)c;
	jinst_pass p;
	jinst_monitor_sites *sites = NULL;
	int rc = jinst_monitor_pass(&p, &sites);
	if (rc)
		return rc;
	if ((rc = jinst_instrument_add_pass(ins, &p, diag)))
		return rc;
	pthread_mutex_lock(&mon.lock);
	mon.sites = sites;
	pthread_mutex_unlock(&mon.lock);
	return 0;
}

/* jinst.rt.Monitors and its methods, found once: the runtime is defined
 * once for the VM's life. */
static bool find_runtime(JNIEnv *jni)
{
	if (mon.monitors)
		return true;
	jclass k = (*jni)->FindClass(jni, "jinst/rt/Monitors");
	if (jinst_agent_java_failed(jni, "FindClass(jinst/rt/Monitors)") || !k)
		return false;
	struct { jmethodID *id; const char *name, *sig; } ms[] = {
		{&mon.engage, "engage", "()V"}, {&mon.disengage, "disengage", "()V"},
		{&mon.snapshot, "snapshot", "()[Ljava/lang/Object;"}, {&mon.reset, "reset", "()V"}};
	bool ok = true;
	for (size_t i = 0; ok && i < sizeof ms / sizeof ms[0]; i++) {
		*ms[i].id = (*jni)->GetStaticMethodID(jni, k, ms[i].name, ms[i].sig);
		ok = !jinst_agent_java_failed(jni, ms[i].name) && *ms[i].id;
	}
	mon.monitors = ok ? (*jni)->NewGlobalRef(jni, k) : NULL;
	(*jni)->DeleteLocalRef(jni, k);
	return mon.monitors != NULL;
}

/* A session's start: the tables from nothing (an earlier session's rows
 * were written at its stop), then the events, then the runtime's counts
 * from zero. */
static bool monitor_start(const void *c, JNIEnv *jni)
{
	(void)c;
	if (!find_runtime(jni))
		return false;
	pthread_mutex_lock(&mon.lock);
	tables_clear();
	atomic_store(&mon.since, now_ns());
	pthread_mutex_unlock(&mon.lock);
	for (int i = 0; i < 2; i++)
		jinst_agent_output_begin(outputs[i]);
	if (!events_on(jni))
		return false;
	atomic_store(&mon.on, 1);
	(*jni)->CallStaticVoidMethod(jni, mon.monitors, mon.engage);
	return !jinst_agent_java_failed(jni, "Monitors.engage");
}

/* The runtime's enters (Monitors.snapshot: rows of site, class index,
 * enters; the classes) into the stats. Under lock, but for the JNI calls. */
static bool read_enters(JNIEnv *jni)
{
	jobjectArray r = (*jni)->CallStaticObjectMethod(jni, mon.monitors, mon.snapshot);
	if (jinst_agent_java_failed(jni, "Monitors.snapshot") || !r)
		return false;
	jlongArray a = (*jni)->GetObjectArrayElement(jni, r, 0);
	jobjectArray ks = (*jni)->GetObjectArrayElement(jni, r, 1);
	jsize n = a ? (*jni)->GetArrayLength(jni, a) : 0, nk = ks ? (*jni)->GetArrayLength(jni, ks) : 0;
	jlong *v = malloc(((size_t)n + 1) * sizeof(*v));
	char **names = calloc((size_t)nk + 1, sizeof(*names));
	bool ok = v && names;
	if (ok && n)
		(*jni)->GetLongArrayRegion(jni, a, 0, n, v);
	for (jsize i = 0; ok && i < nk; i++) {
		char buf[1024];
		jclass k = (*jni)->GetObjectArrayElement(jni, ks, i);
		class_name(k, buf, sizeof buf);
		(*jni)->DeleteLocalRef(jni, k);
		ok = (names[i] = strdup(buf)) != NULL;
	}
	pthread_mutex_lock(&mon.lock);
	for (uint32_t i = 0; ok && i < mon.nstats; i++)
		mon.stats[i].enters = 0;
	for (jsize i = 0; ok && i + 2 < n; i += 3) {
		if (v[i + 1] < 0 || v[i + 1] >= nk || v[i] < 0 || v[i] > UINT32_MAX)
			continue;
		uint32_t p = place_for_site((uint32_t)v[i]), k = class_id(names[v[i + 1]]);
		stats *s = p == IGNORED || k == IGNORED ? NULL : stats_of(p, k);
		if (s)
			s->enters += (uint64_t)v[i + 2];
	}
	pthread_mutex_unlock(&mon.lock);
	for (jsize i = 0; names && i < nk; i++)
		free(names[i]);
	free(names);
	free(v);
	(*jni)->DeleteLocalRef(jni, a);
	(*jni)->DeleteLocalRef(jni, ks);
	(*jni)->DeleteLocalRef(jni, r);
	return ok;
}

/* Every stats as a row, strings borrowed (places' and classes' strings
 * live until the next session's start; a dump never runs meanwhile). */
static bool snapshot(JNIEnv *jni, jinst_monitor_row **out, size_t *n)
{
	if (!read_enters(jni))
		return false;
	pthread_mutex_lock(&mon.lock);
	jinst_monitor_row *rows = malloc(((size_t)mon.nstats + 1) * sizeof(*rows));
	for (uint32_t i = 0; rows && i < mon.nstats; i++) {
		const stats *s = &mon.stats[i];
		const place *p = &mon.places[s->place];
		rows[i] = (jinst_monitor_row){p->class_name, p->method, p->descriptor, p->source[0] ? p->source : NULL,
		                              p->line, kind_names[p->kind], p->instrumented, mon.classes[s->lock_class],
		                              s->enters, s->contended, s->wait_ns, s->max_wait_ns, s->waits, s->waited_ns};
	}
	*n = mon.nstats;
	pthread_mutex_unlock(&mon.lock);
	*out = rows;
	return rows != NULL;
}

typedef struct monitor_rows {
	jinst_monitor_row *rows;
	size_t n;
} monitor_rows;

static int write_report(FILE *f, const void *ctx)
{
	const monitor_rows *m = ctx;
	return jinst_monitor_write_report(f, m->rows, m->n);
}

static int write_tsv(FILE *f, const void *ctx)
{
	const monitor_rows *m = ctx;
	return jinst_monitor_write_tsv(f, m->rows, m->n);
}

static void monitor_dump(const void *c, JNIEnv *jni)
{
	(void)c;
	jinst_monitor_row *rows = NULL;
	size_t n = 0;
	if (!snapshot(jni, &rows, &n)) {
		jinst_agent_log("monitor: no snapshot, nothing written");
		return;
	}
	monitor_rows m = {rows, n};
	jinst_agent_output_write(outputs[0], write_report, &m);
	jinst_agent_output_write(outputs[1], write_tsv, &m);
	free(rows);
}

static void monitor_stop(const void *c, JNIEnv *jni)
{
	monitor_dump(c, jni);
	atomic_store(&mon.on, 0);
	events_off();
	if (mon.monitors) {
		(*jni)->CallStaticVoidMethod(jni, mon.monitors, mon.disengage);
		jinst_agent_java_failed(jni, "Monitors.disengage");
	}
	/* The sites go with their instrumenter at the next session's start. */
	pthread_mutex_lock(&mon.lock);
	mon.sites = NULL;
	pthread_mutex_unlock(&mon.lock);
}

/* `reset`: what the events measured and the runtime's enters back to 0;
 * the places and classes stay (their names are the rows' strings). */
static void monitor_reset(const void *c, JNIEnv *jni)
{
	(void)c;
	pthread_mutex_lock(&mon.lock);
	for (uint32_t i = 0; i < mon.nstats; i++) {
		stats *s = &mon.stats[i];
		s->enters = s->contended = s->wait_ns = s->max_wait_ns = s->waits = s->waited_ns = 0;
	}
	pthread_mutex_unlock(&mon.lock);
	(*jni)->CallStaticVoidMethod(jni, mon.monitors, mon.reset);
	jinst_agent_java_failed(jni, "Monitors.reset");
}

/* append=y: both outputs there must take the session's part. */
static int monitor_check_existing(const void *c, const char *prefix, char *err, size_t esize)
{
	(void)c;
	int r = 0;
	for (int i = 0; i < 2 && !r; i++)
		r = jinst_agent_output_check_existing(prefix, outputs[i], err, esize);
	return r;
}

const jinst_agent_module jinst_monitor_module = {
	JINST_MONITOR_MODULE_OPTIONS,
	.check_existing = monitor_check_existing,
	.add_passes = monitor_add_passes,
	.start = monitor_start,
	.dump = monitor_dump,
	.stop = monitor_stop,
	.reset = monitor_reset,
	.restartable = true,
};
