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
	/* By tag and class ("tag p.K"): each site's objects are counted under
	 * their own class, as HPROF's SITES were (a clone, a reflective call,
	 * the inner arrays of a multianewarray); "tag -" for a tag that must
	 * get none. */
	private static final Map<String, long[]> SITES = new TreeMap<>();
	/* Objects that stay reachable to the end, and their bytes, the same way. */
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
			long[] v = SITES.computeIfAbsent(tag + " " + o.getClass().getName(), k -> new long[2]);
			v[0]++;
			v[1] += size;
		}
	}

	/** An object of tag's site that the program keeps reachable to the end. */
	public static void live(String tag, Object o) {
		long size = inst.getObjectSize(o);
		synchronized (SITES) {
			long[] v = LIVE.computeIfAbsent(tag + " " + o.getClass().getName(), k -> new long[2]);
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
			SITES.computeIfAbsent(tag + " -", k -> new long[2]);
		}
	}

	/** Prints "EXPECT tag type objects bytes", one line per tag and class,
	 * in tag order (type "-" for a tag that must get no object), then "LIVE
	 * tag type objects bytes" for what is kept. */
	public static void print() {
		synchronized (SITES) {
			for (Map.Entry<String, long[]> e : SITES.entrySet())
				System.out.println("EXPECT " + e.getKey() + " " + e.getValue()[0] + " " + e.getValue()[1]);
			for (Map.Entry<String, long[]> e : LIVE.entrySet())
				System.out.println("LIVE " + e.getKey() + " " + e.getValue()[0] + " " + e.getValue()[1]);
		}
	}
}
