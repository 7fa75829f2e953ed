package jinstcheck;

import java.lang.instrument.Instrumentation;
import java.util.Map;
import java.util.TreeMap;

/**
 * What AllocSites allocates, measured as it goes: a java.lang.instrument
 * agent (Premain-Class of the jar the test builds) whose Instrumentation
 * gives each object's size (JVMTI GetObjectSize underneath). Not
 * instrumented (the test includes AllocSites* only), so its own
 * allocations are nobody's site.
 */
public final class AllocExpect {
	private static Instrumentation inst;
	private static final Map<String, long[]> SITES = new TreeMap<>();
	/* Each tag's type: its first object's class (a multianewarray's outermost). */
	private static final Map<String, String> TYPES = new TreeMap<>();
	/* Objects that stay reachable to the end, and their bytes, by tag. */
	private static final Map<String, long[]> LIVE = new TreeMap<>();

	private AllocExpect() {
	}

	public static void premain(String args, Instrumentation i) {
		inst = i;
	}

	/** One object or array allocated at the site tagged tag. */
	public static void obj(String tag, Object o) {
		long size = inst.getObjectSize(o);
		synchronized (SITES) {
			long[] v = SITES.computeIfAbsent(tag, k -> new long[2]);
			TYPES.putIfAbsent(tag, o.getClass().getName());
			v[0]++;
			v[1] += size;
		}
	}

	/** The type a site declares (the pass's), when its objects' classes
	 * differ from it: set before its first object. */
	public static void type(String tag, String name) {
		synchronized (SITES) {
			TYPES.put(tag, name);
		}
	}

	/** An object of tag's site that the program keeps reachable to the end. */
	public static void live(String tag, Object o) {
		long size = inst.getObjectSize(o);
		synchronized (SITES) {
			long[] v = LIVE.computeIfAbsent(tag, k -> new long[2]);
			v[0]++;
			v[1] += size;
		}
	}

	/** The arrays a multianewarray made: o and every non-null array in it. */
	public static void multi(String tag, Object o) {
		obj(tag, o);
		if (o instanceof Object[] && o.getClass().getComponentType().isArray())
			for (Object e : (Object[]) o)
				if (e != null)
					multi(tag, e);
	}

	/** A site that must record nothing (its constructor never returned). */
	public static void none(String tag) {
		synchronized (SITES) {
			SITES.computeIfAbsent(tag, k -> new long[2]);
		}
	}

	/** Prints "EXPECT tag type objects bytes", one line per tag, in tag order
	 * (type "-" for a tag that never got an object), then "LIVE tag type
	 * objects bytes" for what is kept. */
	public static void print() {
		synchronized (SITES) {
			for (Map.Entry<String, long[]> e : SITES.entrySet())
				System.out.println("EXPECT " + e.getKey() + " " + TYPES.getOrDefault(e.getKey(), "-") + " "
						+ e.getValue()[0] + " " + e.getValue()[1]);
			for (Map.Entry<String, long[]> e : LIVE.entrySet())
				System.out.println("LIVE " + e.getKey() + " " + TYPES.get(e.getKey()) + " " + e.getValue()[0] + " "
						+ e.getValue()[1]);
		}
	}
}
