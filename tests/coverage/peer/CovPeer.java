/*
 * The JaCoCo side of the coverage comparison: for each class file listed
 * (one path a line), JaCoCo 0.8.6's probe count, then its analysis for probe
 * arrays drawn by the seeded generator that tests/coverage/cov_dump.c
 * reproduces, printed in the form cov_dump prints.
 *
 *   java -cp JACOCO:ASM:. CovPeer [--filters] [--variants N] LIST [OUT [FILTERED_OUT]]
 *
 * Without --filters the analysis runs with JaCoCo's Filters.NONE (set
 * into ClassAnalyzer's filter field), to compare the unfiltered core. With
 * two output files, the first gets the unfiltered run, the second the
 * filtered one (one JVM for both).
 */
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

import org.jacoco.core.analysis.ICounter;
import org.jacoco.core.analysis.ILine;
import org.jacoco.core.analysis.IMethodCoverage;
import org.jacoco.core.analysis.ISourceNode;
import org.jacoco.core.internal.analysis.ClassAnalyzer;
import org.jacoco.core.internal.analysis.ClassCoverageImpl;
import org.jacoco.core.internal.analysis.StringPool;
import org.jacoco.core.internal.analysis.filter.Filters;
import org.jacoco.core.internal.data.CRC64;
import org.jacoco.core.internal.flow.ClassProbesAdapter;
import org.jacoco.core.internal.flow.ClassProbesVisitor;
import org.jacoco.core.internal.flow.MethodProbesVisitor;
import org.jacoco.core.internal.instr.InstrSupport;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;

public final class CovPeer {
	private static boolean filters;
	private static int variants = 5;
	private static PrintStream out = new PrintStream(System.out, false);

	public static void main(String[] args) throws Exception {
		java.util.List<String> files = new java.util.ArrayList<>();
		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("--filters"))
				filters = true;
			else if (args[i].equals("--variants"))
				variants = Integer.parseInt(args[++i]);
			else
				files.add(args[i]);
		}
		if (files.size() == 1) {
			run(files.get(0));
			return;
		}
		for (int k = 1; k < files.size(); k++) {
			filters = k == 2;
			try (PrintStream p = new PrintStream(files.get(k), "UTF-8")) {
				out = p;
				run(files.get(0));
			}
		}
	}

	private static void run(String list) throws IOException {
		try (BufferedReader r = Files.newBufferedReader(Paths.get(list))) {
			String path;
			while ((path = r.readLine()) != null)
				if (!path.isEmpty())
					one(path, Files.readAllBytes(Paths.get(path)));
		}
		out.flush();
	}

	private static void one(String path, byte[] bytes) {
		String name;
		int count;
		try {
			ClassReader reader = InstrSupport.classReaderFor(bytes);
			name = reader.getClassName();
			if ((reader.getAccess() & Opcodes.ACC_MODULE) != 0) {
				out.println("S " + name);
				return;
			}
			count = countProbes(reader);
		} catch (Throwable e) {
			out.println("E " + path);
			return;
		}
		out.println("P " + name + " " + count);
		for (int v = 0; v < variants; v++) {
			boolean[] probes = draw(name, v, count);
			try {
				analyze(bytes, name, v, probes);
			} catch (Throwable e) {
				out.println("E " + name + " " + v + " " + e);
			}
		}
	}

	private static int countProbes(ClassReader reader) {
		final int[] total = {0};
		ClassProbesVisitor counter = new ClassProbesVisitor() {
			@Override
			public MethodProbesVisitor visitMethod(int access, String n, String d, String s, String[] e) {
				return null;
			}

			@Override
			public void visitTotalProbeCount(int c) {
				total[0] = c;
			}
		};
		reader.accept(new ClassProbesAdapter(counter, false), 0);
		return total[0];
	}

	static long fnv(String name) {
		long h = 0xcbf29ce484222325L;
		for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
			h ^= (b & 0xff);
			h *= 0x100000001b3L;
		}
		return h;
	}

	/* v 0: none, 1: all, else each probe set with probability (v % 3 + 1) / 4. */
	static boolean[] draw(String name, int v, int count) {
		boolean[] p = new boolean[count];
		long state = fnv(name) ^ (0x9E3779B97F4A7C15L * (v + 1));
		for (int i = 0; i < count; i++) {
			if (v == 0)
				continue;
			if (v == 1) {
				p[i] = true;
				continue;
			}
			state += 0x9E3779B97F4A7C15L;
			long z = state;
			z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
			z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
			z = z ^ (z >>> 31);
			p[i] = (z >>> 62) < (v % 3 + 1);
		}
		return p;
	}

	private static void analyze(byte[] bytes, String name, int v, boolean[] probes) throws Exception {
		ClassCoverageImpl coverage = new ClassCoverageImpl(name, CRC64.classId(bytes), false);
		ClassAnalyzer analyzer = new ClassAnalyzer(coverage, probes, new StringPool());
		if (!filters) {
			Field f = ClassAnalyzer.class.getDeclaredField("filter");
			f.setAccessible(true);
			f.set(analyzer, Filters.NONE);
		}
		InstrSupport.classReaderFor(bytes).accept(new ClassProbesAdapter(analyzer, false), 0);
		out.println("K " + name + " " + v + " " + counters(coverage) + " C " + c(coverage.getClassCounter()));
		for (IMethodCoverage m : coverage.getMethods())
			out.println("M " + name + " " + v + " " + m.getName() + m.getDesc() + " " + counters(m));
		StringBuilder sb = new StringBuilder();
		if (coverage.getFirstLine() != ISourceNode.UNKNOWN_LINE) {
			for (int l = coverage.getFirstLine(); l <= coverage.getLastLine(); l++) {
				ILine line = coverage.getLine(l);
				if (line.getStatus() == ICounter.EMPTY)
					continue;
				sb.append(' ').append(l).append(':').append(line.getStatus()).append(':')
						.append(c(line.getInstructionCounter())).append(':').append(c(line.getBranchCounter()));
			}
		}
		out.println("L " + name + " " + v + sb);
	}

	private static String counters(ISourceNode n) {
		return "I " + c(n.getInstructionCounter()) + " B " + c(n.getBranchCounter()) + " L "
				+ c(n.getLineCounter()) + " X " + c(n.getComplexityCounter()) + " M " + c(n.getMethodCounter());
	}

	private static String c(ICounter k) {
		return k.getMissedCount() + "/" + k.getCoveredCount();
	}
}
