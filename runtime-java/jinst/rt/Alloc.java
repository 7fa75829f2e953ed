package jinst.rt;

import java.lang.reflect.Array;

/**
 * Allocation sites: per thread, the objects and bytes allocated at each
 * site (the allocation pass's ids, include/jinst/alloc.h), for the agent's
 * {@code alloc}. The hooks ({@link Hooks#allocObject},
 * {@link Hooks#allocArray}, {@link Hooks#allocArrays}, {@link Hooks#allocAny},
 * {@link Hooks#allocClone}) run right after the object is constructed, the
 * array made or the call that made it returned, with the new reference.
 *
 * <h2>Per thread, through the trace's path</h2>
 *
 * A thread's counts are two per site (objects, bytes) in its context's
 * {@code allocCounts} ({@link Counts}: a table, then an array by id, which
 * is {@code Ctx.allocs}, the one the fast paths write), found as the trace's hooks
 * find it: every thread through {@code Hooks.BY_TID} (docs/tracing-threads.md), the
 * rest on the slow path (the ThreadLocal, a new context). Only its thread
 * writes an array, so counts are exact; the snapshot adds up the live
 * contexts and what ended threads left ({@link #retire}).
 *
 * <h2>Bytes as GetObjectSize says</h2>
 *
 * An instance's size depends on its class alone: the site's first object
 * is measured by the agent's native {@link #sizeOf0} (JVMTI GetObjectSize)
 * and the figure kept by site. An array's size is a function of its length,
 * {@code align(base + length * scale)}: the constants of an array class are
 * found once, from GetObjectSize of arrays of that class at lengths 0 to
 * 127, 1024 and 4096 (the smallest alignment and a header that give every
 * one of those sizes; past 2 * alignment lengths the pattern repeats), and
 * kept by class and by site. Under {@code alloc=check} every object also
 * goes to GetObjectSize and the two are compared ({@link #checked},
 * {@link #differed}); the agent reports the figures, the tests assert them.
 *
 * <h2>Live objects</h2>
 *
 * Under {@code alloc=live} every object is tagged with its site + 1
 * ({@link #tag0}, JVMTI SetTag); at each write the agent collects the heap
 * and counts the tagged objects that remain, by their tags.
 *
 * <h2>Multi-dimensional arrays</h2>
 *
 * multianewarray makes the arrays of every dimension it was given. The hook
 * runs before anything else can store into them, so every non-null element
 * of every level is one of them: {@link #arrays} walks them all, each level
 * counted under its own class (new int[4][5]: one int[][], four int[]).
 *
 * <h2>A site's classes</h2>
 *
 * A site's type is the pass's: the class a {@code new} names, but for a
 * native's object (clone, reflection) only what the call declares, and
 * for multianewarray the outermost array's. The slow paths of those count
 * each object under the site of its own class ({@link #siteOf}: the same
 * site with that type, an id the agent's table hands out, {@link #site0}),
 * so that a site that makes objects of several classes has a row per
 * class, as HPROF's SITES had. The fast paths' {@code new} and
 * {@code newarray}, whose class is the site's, never ask.
 *
 * Nothing here is instrumented (the agent never instruments this package);
 * the slow path allocates arrays only, and sets its context's busy flag
 * while it asks the VM for sizes.
 */
final class Alloc {
	private Alloc() {
	}

	/* Per site, for the fast paths: an instance's bytes (0: not yet known),
	 * and an array's (base, scale, alignment - 1) (scale 0: not yet
	 * known). Replaced by a copy at each change, never written in place
	 * (volatile: a thread that sees the copy sees its elements); empty under
	 * alloc=check and alloc=live, so that every object takes the slow path. */
	static volatile long[] objectBytes = new long[0];
	static volatile long[] arrayShape = new long[0];

	/* The same, for the slow path, always filled. */
	private static long[] slowObjectBytes = new long[0];
	private static long[] slowArrayShape = new long[0];
	/* Array shapes by class: an open table keyed by identity hash. */
	private static Class<?>[] shapeClass = new Class<?>[64];
	private static long[][] shapeOf = new long[64][];

	/* The site of (site, class) for the slow paths' objects of another
	 * class than the site's type: an open table keyed by the class's
	 * identity hash and the site (under Registry.LOCK). */
	private static Class<?>[] siteClass = new Class<?>[64];
	private static int[] siteFrom = new int[64], siteTo = new int[64];
	private static int siteCount;

	/* What ended threads recorded (under Registry.LOCK). */
	private static long[] retired = new long[0];

	static boolean check, live;
	/* depth=N: frames kept per allocation (0: none). */
	static int depth;
	/* Whether the fast paths may count: not when every object must be
	 * checked, tagged or traced. */
	private static boolean fast;
	/* What ended threads recorded by stack (depth=N; under Registry.LOCK). */
	private static AllocTraces retiredTraces;
	/* alloc=check: objects compared with GetObjectSize, and those whose
	 * size differed. */
	static long checked, differed;

	/* ---- the hooks' bodies ------------------------------------------- */

	static void object(Object o, int site) {
		Thread t = Thread.currentThread();
		Ctx c = Hooks.BY_TID[(int) t.getId() & Hooks.TID_MASK];
		long[] a, z = objectBytes;
		int i = 2 * site;
		if (c != null && c.owner == t && site < z.length && z[site] != 0 && i + 1 < (a = c.allocs).length) {
			a[i]++;
			a[i + 1] += z[site];
		} else {
			slow(o, site, ONE);
		}
	}

	static void array(Object o, int site) {
		Thread t = Thread.currentThread();
		Ctx c = Hooks.BY_TID[(int) t.getId() & Hooks.TID_MASK];
		long[] a, f = arrayShape;
		int i = 2 * site, j = 3 * site;
		if (c != null && c.owner == t && j + 2 < f.length && f[j + 1] != 0 && i + 1 < (a = c.allocs).length) {
			long m = f[j + 2];
			a[i]++;
			a[i + 1] += (f[j] + Array.getLength(o) * f[j + 1] + m) & ~m;
		} else {
			slow(o, site, ONE);
		}
	}

	static void arrays(Object o, int site) {
		slow(o, site, WALK);
	}

	/* A native's new object (clone, reflection): any class, so measured by
	 * its class, never by the site. */
	static void any(Object o, int site) {
		slow(o, site, ANY);
	}

	/*
	 * A clone() call's result, counted only when the call reached
	 * Object.clone itself: the VM's lookup of clone() starts at the
	 * receiver's class (invokevirtual, invokeinterface) or at the class
	 * the pass names (invokespecial: start, a superclass of the
	 * receiver's), and when a class on the way down to Object declares
	 * clone(), the call ran that override, whose own calls count what it
	 * makes (its super.clone() reaches Object.clone in the end). So an
	 * object is counted once, at the call that made it.
	 */
	static void cloned(Object receiver, Object o, String start, int site) {
		Class<?> k = receiver.getClass();
		if (start != null)
			while (k != null && !start.equals(k.getName()))
				k = k.getSuperclass();
		if (k != null && !OVERRIDES_CLONE.get(k))
			slow(o, site, ANY);
	}

	private static final Overrides OVERRIDES_CLONE = new Overrides();

	/* Whether a class or a superclass below Object declares clone(),
	 * asked of the VM (declaresClone0), so that no reflection resolves the
	 * types of the class's other methods; kept by class. */
	static final class Overrides extends ClassValue<Boolean> {
		@Override
		protected Boolean computeValue(Class<?> k) {
			for (Class<?> c = k; c != null && c != Object.class; c = c.getSuperclass())
				if (declaresClone0(c))
					return Boolean.TRUE;
			return Boolean.FALSE;
		}
	}

	/* ---- the slow path ----------------------------------------------- */

	private static final int ONE = 0, WALK = 1, ANY = 2;

	private static void slow(Object o, int site, int how) {
		Thread t = Thread.currentThread();
		Ctx c = Hooks.context(t);
		if (c == null || c.busy || o == null || site < 0)
			return;
		c.busy = true;
		try {
			if (how == WALK) {
				/* per level: objects, bytes, then the site of its class */
				int dims = 0;
				for (Class<?> k = o.getClass(); k.isArray(); k = k.getComponentType())
					dims++;
				long[] ob = new long[3 * dims];
				int levels = walk(ob, o, site, 0);
				for (int l = 0; l < levels; l++)
					count(t, c, (int) ob[3 * l + 2], ob[3 * l], ob[3 * l + 1]);
			} else {
				if (how == ANY)
					site = siteOf(site, o.getClass());
				long bytes = how == ANY ? ofClass(o) : bytes(o, site);
				if (live)
					tag0(o, site + 1L);
				count(t, c, site, 1, bytes);
			}
		} finally {
			c.busy = false;
		}
	}

	private static void count(Thread t, Ctx c, int site, long objects, long bytes) {
		add(t, c, 2 * site, objects);
		add(t, c, 2 * site + 1, bytes);
		if (depth > 0)
			traced(c, site, objects, bytes);
	}

	/* The site of site's objects of class k: site itself when k is its
	 * type (the agent's table gives the same id), or when the agent
	 * cannot tell (site0 returns it). Asked once per (site, class). */
	private static int siteOf(int site, Class<?> k) {
		synchronized (Registry.LOCK) {
			int mask = siteClass.length - 1, i = (System.identityHashCode(k) * 31 + site) & mask;
			for (; siteClass[i] != null; i = (i + 1) & mask)
				if (siteClass[i] == k && siteFrom[i] == site)
					return siteTo[i];
		}
		int to = site0(site, k);
		synchronized (Registry.LOCK) {
			if (2 * (siteCount + 1) > siteClass.length)
				sitesRehash();
			int mask = siteClass.length - 1, i = (System.identityHashCode(k) * 31 + site) & mask;
			while (siteClass[i] != null && !(siteClass[i] == k && siteFrom[i] == site))
				i = (i + 1) & mask;
			if (siteClass[i] == null)
				siteCount++;
			siteClass[i] = k;
			siteFrom[i] = site;
			siteTo[i] = to;
		}
		return to;
	}

	private static void sitesRehash() {
		Class<?>[] oc = siteClass;
		int[] of = siteFrom, ot = siteTo;
		siteClass = new Class<?>[oc.length * 2];
		siteFrom = new int[oc.length * 2];
		siteTo = new int[oc.length * 2];
		int mask = siteClass.length - 1;
		for (int j = 0; j < oc.length; j++)
			if (oc[j] != null) {
				int i = (System.identityHashCode(oc[j]) * 31 + of[j]) & mask;
				while (siteClass[i] != null)
					i = (i + 1) & mask;
				siteClass[i] = oc[j];
				siteFrom[i] = of[j];
				siteTo[i] = ot[j];
			}
	}

	/*
	 * Adds to a thread's count id (2 * site: objects, + 1: bytes). As the
	 * trace's call counts (Counts): a small table at first, an array by id
	 * (Ctx.allocs, which the fast paths write) once the thread is busy, or
	 * at once for a platform thread while few contexts live. A virtual
	 * thread that allocates at a few sites thus keeps a few slots, not an
	 * array as long as the sites (javac: 5,000 sites, 80 KB).
	 */
	private static void add(Thread t, Ctx c, int id, long n) {
		Counts k = c.allocCounts;
		if (k == null) {
			k = new Counts(16);
			if (Registry.count <= Hooks.SMALL_POOL && t.getClass() != Hooks.VIRTUAL)
				k = new Counts(k, id, true);
		}
		if (!k.add(id, n)) {
			k = new Counts(k, id, false);
			k.add(id, n);
		}
		if (k != c.allocCounts) {
			c.allocCounts = k;
			if (k.keys == null)
				c.allocs = k.values;
		}
	}

	/* depth=N: the allocation under its site and the top of the thread's
	 * shadow stack (trace=times; a row's owner's depth is Stacks' while
	 * its frames fit the row, which its context's sId then is). */
	private static void traced(Ctx c, int site, long objects, long bytes) {
		AllocTraces tr = c.allocTraces;
		if (tr == null || tr.depth != depth)
			tr = c.allocTraces = new AllocTraces(depth);
		tr.add(site, c.sId, c.base, c.row >= 0 ? Stacks.depthOf(c) : c.depth, objects, bytes);
	}

	/* Every array multianewarray (or Array.newInstance(Class, int[])) made,
	 * from its outermost one, at level: objects and bytes into ob by level
	 * (every array of a level is of one class), each level's site after
	 * them; the levels seen. */
	private static int walk(long[] ob, Object o, int site, int level) {
		int l = 3 * level;
		if (ob[l] == 0)
			ob[l + 2] = siteOf(site, o.getClass());
		ob[l]++;
		ob[l + 1] += measured(o, shape(o.getClass(), o));
		if (live)
			tag0(o, ob[l + 2] + 1L);
		int levels = level + 1;
		if (o instanceof Object[] && o.getClass().getComponentType().isArray())
			for (Object e : (Object[]) o)
				if (e != null)
					levels = Math.max(levels, walk(ob, e, site, level + 1));
		return levels;
	}

	private static long bytes(Object o, int site) {
		if (o.getClass().isArray()) {
			long[] s = shape(o.getClass(), o);
			synchronized (Registry.LOCK) {
				slowArrayShape = put3(slowArrayShape, site, s);
				if (fast)
					arrayShape = put3(arrayShape, site, s);
			}
			return measured(o, s);
		}
		long[] z = slowObjectBytes;
		long n = site < z.length ? z[site] : 0;
		if (n == 0) {
			n = sizeOf0(o);
			synchronized (Registry.LOCK) {
				slowObjectBytes = put1(slowObjectBytes, site, n);
				if (fast)
					objectBytes = put1(objectBytes, site, n);
			}
		}
		if (check)
			compare(n, o);
		return n;
	}

	/* Any object's bytes by its class: an array's shape, or an instance's
	 * size kept in the same table (base, scale 0, no alignment). */
	private static long ofClass(Object o) {
		Class<?> k = o.getClass();
		long[] s = shape(k, o);
		if (k.isArray())
			return measured(o, s);
		if (check)
			compare(s[0], o);
		return s[0];
	}

	/* An array's bytes by its shape (compared under alloc=check). */
	private static long measured(Object o, long[] s) {
		long n = (s[0] + Array.getLength(o) * s[1] + s[2]) & ~s[2];
		if (check)
			compare(n, o);
		return n;
	}

	private static void compare(long n, Object o) {
		long real = sizeOf0(o);
		synchronized (Registry.LOCK) {
			checked++;
			if (real != n)
				differed++;
		}
	}

	/* The shape of k, the class of sample: an array class's, or an
	 * instance's size (base, scale 0, no alignment); found once, kept by
	 * class. */
	static long[] shape(Class<?> k, Object sample) {
		synchronized (Registry.LOCK) {
			int mask = shapeClass.length - 1;
			for (int i = System.identityHashCode(k) & mask; shapeClass[i] != null; i = (i + 1) & mask)
				if (shapeClass[i] == k)
					return shapeOf[i];
		}
		long[] s = k.isArray() ? derive(k.getComponentType()) : new long[] {sizeOf0(sample), 0, 0};
		synchronized (Registry.LOCK) {
			int count = 0;
			for (Class<?> x : shapeClass)
				if (x != null)
					count++;
			if (2 * (count + 1) > shapeClass.length)
				rehash();
			int mask = shapeClass.length - 1, i = System.identityHashCode(k) & mask;
			while (shapeClass[i] != null && shapeClass[i] != k)
				i = (i + 1) & mask;
			shapeClass[i] = k;
			shapeOf[i] = s;
		}
		return s;
	}

	private static void rehash() {
		Class<?>[] oc = shapeClass;
		long[][] os = shapeOf;
		shapeClass = new Class<?>[oc.length * 2];
		shapeOf = new long[oc.length * 2][];
		int mask = shapeClass.length - 1;
		for (int j = 0; j < oc.length; j++)
			if (oc[j] != null) {
				int i = System.identityHashCode(oc[j]) & mask;
				while (shapeClass[i] != null)
					i = (i + 1) & mask;
				shapeClass[i] = oc[j];
				shapeOf[i] = os[j];
			}
	}

	/* Sizes at lengths 0..127, 1024 and 4096; the scale from the largest
	 * two (exact for any alignment dividing 3072 * scale), then the least
	 * alignment and the least header that give every size. */
	static long[] derive(Class<?> component) {
		int[] lengths = new int[130];
		long[] size = new long[130];
		for (int i = 0; i < 128; i++)
			lengths[i] = i;
		lengths[128] = 1024;
		lengths[129] = 4096;
		for (int i = 0; i < lengths.length; i++)
			size[i] = sizeOf0(Array.newInstance(component, lengths[i]));
		long scale = (size[129] - size[128]) / 3072;
		for (long align = 1; align <= 4096; align *= 2)
			for (long base = 0; base <= size[0]; base++)
				if (fits(lengths, size, base, scale, align - 1))
					return new long[] {base, scale, align - 1};
		/* No such shape: every array of the class is measured. */
		return new long[] {size[0], scale, 0};
	}

	private static boolean fits(int[] lengths, long[] size, long base, long scale, long m) {
		for (int i = 0; i < lengths.length; i++)
			if (((base + lengths[i] * scale + m) & ~m) != size[i])
				return false;
		return true;
	}

	/* A copy of a at least min long. */
	private static long[] grow(long[] a, int min) {
		int n = a.length == 0 ? 64 : a.length;
		while (n < min)
			n *= 2;
		long[] b = new long[n];
		System.arraycopy(a, 0, b, 0, a.length);
		return b;
	}

	/* A copy of a with v at site (copies: see objectBytes). */
	private static long[] put1(long[] a, int site, long v) {
		a = grow(a, site + 1);
		a[site] = v;
		return a;
	}

	private static long[] put3(long[] a, int site, long[] s) {
		a = grow(a, 3 * site + 3);
		System.arraycopy(s, 0, a, 3 * site, 3);
		return a;
	}

	/* ---- threads, sessions, snapshots -------------------------------- */

	/* c's thread ended (Registry.retire, under its lock): its counts stay. */
	static void retire(Ctx c) {
		if (c.allocTraces != null && retiredTraces != null && c.allocTraces.depth == retiredTraces.depth)
			retiredTraces.addAll(c.allocTraces);
		retired = addTo(retired, c.allocCounts);
	}

	/* r with k's counts added (a copy when it must grow). */
	private static long[] addTo(long[] r, Counts k) {
		if (k == null)
			return r;
		if (k.limit() > r.length)
			r = grow(r, k.limit());
		k.addTo(r);
		return r;
	}

	/** The agent's start: a new session's tables; the hooks engaged with
	 * ALLOC beside what the trace engaged, or alone. Whether depth=N has
	 * stacks to read (trace=times engaged first). */
	static boolean engage(boolean checkSizes, boolean tagLive, int frames, long now) {
		synchronized (Registry.LOCK) {
			objectBytes = new long[0];
			arrayShape = new long[0];
			slowObjectBytes = new long[0];
			slowArrayShape = new long[0];
			retired = new long[0];
			check = checkSizes;
			live = tagLive;
			depth = frames;
			fast = !check && !live && depth == 0;
			retiredTraces = new AllocTraces(depth);
			siteClass = new Class<?>[64];
			siteFrom = new int[64];
			siteTo = new int[64];
			siteCount = 0;
			checked = 0;
			differed = 0;
		}
		if (Hooks.mode == 0)
			Hooks.engage(Hooks.ALLOC, 0, now);
		else
			Hooks.mode |= Hooks.ALLOC;
		return (Hooks.mode & Hooks.TIMES) != 0;
	}

	/** The agent's stop, after its last snapshot. */
	static void disengage() {
		if ((Hooks.mode & ~Hooks.ALLOC) == 0)
			Hooks.disengage();
		else
			Hooks.mode &= ~Hooks.ALLOC;
	}

	/**
	 * Objects and bytes per site, every thread's added up: [2 * site]
	 * objects, [2 * site + 1] bytes; then checked and differed
	 * (alloc=check).
	 */
	static long[] snapshot() {
		synchronized (Registry.LOCK) {
			long[] r = new long[retired.length];
			System.arraycopy(retired, 0, r, 0, r.length);
			for (int t = 0; t < Registry.count; t++)
				r = addTo(r, Registry.threads[t].allocCounts);
			long[] out = new long[r.length + 2];
			System.arraycopy(r, 0, out, 0, r.length);
			out[r.length] = checked;
			out[r.length + 1] = differed;
			return out;
		}
	}

	/**
	 * depth=N: every thread's allocations by site and stack, added up:
	 * AllocTraces.toArray's layout.
	 */
	static long[] snapshotTraces() {
		synchronized (Registry.LOCK) {
			AllocTraces all = new AllocTraces(depth);
			if (retiredTraces != null)
				all.addAll(retiredTraces);
			for (int t = 0; t < Registry.count; t++) {
				AllocTraces a = Registry.threads[t].allocTraces;
				if (a != null && a.depth == depth)
					all.addAll(a);
			}
			return all.toArray();
		}
	}

	/** JVMTI GetObjectSize (registered by the agent). */
	static native long sizeOf0(Object o);

	/** JVMTI SetTag (registered by the agent). */
	static native void tag0(Object o, long tag);

	/** The id of site with type k, handed out by the agent's table on
	 * first sight (registered by the agent); site when it cannot tell. */
	static native int site0(int site, Class<?> k);

	/** Whether k declares an instance method clone() of any return type,
	 * from JVMTI GetClassMethods (registered by the agent). */
	static native boolean declaresClone0(Class<?> k);
}
