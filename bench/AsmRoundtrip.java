import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassWriter;

/**
 * ASM's parse+write throughput over a folder of classes held in memory, the
 * peer of jinst-bench-roundtrip:
 *
 *   copy: new ClassWriter(reader, 0), ASM's path that copies the constant
 *         pool and untouched methods;
 *   full: new ClassWriter(0), ASM decoding and encoding everything.
 *
 * Each mode is warmed up (untimed passes, so the JIT has compiled the hot
 * code) before its timed passes; the median is reported in the same line
 * format as jinst-bench-roundtrip.
 *
 *   java -cp asm.jar:. AsmRoundtrip [--iterations N] [--warmup N] DIR
 */
public final class AsmRoundtrip {
	private static long sink;

	public static void main(String[] args) throws IOException {
		int iterations = 7, warmup = 5;
		Path dir = null;
		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("--iterations") && i + 1 < args.length) {
				iterations = Integer.parseInt(args[++i]);
			} else if (args[i].equals("--warmup") && i + 1 < args.length) {
				warmup = Integer.parseInt(args[++i]);
			} else if (dir == null && !args[i].startsWith("-")) {
				dir = Path.of(args[i]);
			} else {
				dir = null;
				break;
			}
		}
		if (dir == null || iterations < 1) {
			System.err.println("usage: AsmRoundtrip [--iterations N] [--warmup N] DIR");
			System.exit(2);
		}
		List<byte[]> classes = new ArrayList<>();
		try (Stream<Path> files = Files.walk(dir)) {
			for (Path p : (Iterable<Path>) files.sorted()::iterator) {
				if (Files.isRegularFile(p) && p.toString().endsWith(".class")) {
					classes.add(Files.readAllBytes(p));
				}
			}
		}
		byte[][] corpus = classes.toArray(new byte[0][]);
		long total = 0;
		for (byte[] b : corpus) {
			total += b.length;
		}
		run("copy", corpus, total, true, warmup, iterations);
		run("full", corpus, total, false, warmup, iterations);
		if (sink == 42) {
			System.out.println();
		}
	}

	private static void run(String name, byte[][] corpus, long total, boolean copy, int warmup,
			int iterations) {
		int failed = 0;
		for (int i = 0; i < warmup; i++) {
			failed = pass(corpus, copy);
		}
		double[] times = new double[iterations];
		for (int i = 0; i < iterations; i++) {
			long t0 = System.nanoTime();
			pass(corpus, copy);
			times[i] = (System.nanoTime() - t0) / 1e9;
		}
		Arrays.sort(times);
		double median = times[iterations / 2];
		System.out.printf("asm %s: %d classes, %d bytes, median %.3f s: %.0f classes/s, %.1f MB/s"
				+ " (%d failed)%n", name, corpus.length, total, median, corpus.length / median,
				total / median / 1e6, failed);
	}

	/** One pass; returns how many classes ASM refused. */
	private static int pass(byte[][] corpus, boolean copy) {
		int failed = 0;
		for (byte[] b : corpus) {
			try {
				ClassReader reader = new ClassReader(b);
				ClassWriter writer = copy ? new ClassWriter(reader, 0) : new ClassWriter(0);
				reader.accept(writer, 0);
				sink += writer.toByteArray().length;
			} catch (RuntimeException e) {
				failed++;
			}
		}
		return failed;
	}
}
