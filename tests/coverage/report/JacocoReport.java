/*
 * JaCoCo 0.8.6's own reports for given probe data: the witness of
 * `jinst report`. Reads the probe arrays that cov_make wrote beside its
 * .cov (one line a class: NAME PROBES as 0/1 digits), puts them into an
 * ExecutionDataStore under JaCoCo's class ids (CRC64 of the class files in
 * CLASSES), analyzes CLASSES as `jacococli report` does and writes XML and
 * CSV with JaCoCo's formatters.
 *
 *   java -cp JACOCO_CORE:JACOCO_REPORT:ASM:. JacocoReport PROBES CLASSES NAME OUT.xml OUT.csv
 */
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.CoverageBuilder;
import org.jacoco.core.analysis.IBundleCoverage;
import org.jacoco.core.data.ExecutionData;
import org.jacoco.core.data.ExecutionDataStore;
import org.jacoco.core.data.SessionInfo;
import org.jacoco.core.data.SessionInfoStore;
import org.jacoco.core.internal.data.CRC64;
import org.jacoco.report.IReportVisitor;
import org.jacoco.report.csv.CSVFormatter;
import org.jacoco.report.xml.XMLFormatter;

public final class JacocoReport {
	public static void main(String[] args) throws Exception {
		Map<String, boolean[]> probes = new HashMap<>();
		for (String line : Files.readAllLines(Paths.get(args[0]))) {
			String[] f = line.split(" ");
			boolean[] p = new boolean[f.length > 1 ? f[1].length() : 0];
			for (int i = 0; i < p.length; i++)
				p[i] = f[1].charAt(i) == '1';
			probes.put(f[0], p);
		}
		ExecutionDataStore store = new ExecutionDataStore();
		List<Path> classes;
		try (Stream<Path> s = Files.walk(Paths.get(args[1]))) {
			classes = s.filter(p -> p.toString().endsWith(".class")).collect(Collectors.toList());
		}
		for (Path p : classes) {
			byte[] bytes = Files.readAllBytes(p);
			String name = new org.objectweb.asm.ClassReader(bytes).getClassName();
			boolean[] data = probes.get(name);
			if (data != null)
				store.put(new ExecutionData(CRC64.classId(bytes), name, data));
		}
		SessionInfoStore sessions = new SessionInfoStore();
		sessions.visitSessionInfo(new SessionInfo("fixture", 0, 0));
		CoverageBuilder builder = new CoverageBuilder();
		new Analyzer(store, builder).analyzeAll(new File(args[1]));
		IBundleCoverage bundle = builder.getBundle(args[2]);
		write(new XMLFormatter().createVisitor(new FileOutputStream(args[3])), bundle, sessions, store);
		write(new CSVFormatter().createVisitor(new FileOutputStream(args[4])), bundle, sessions, store);
	}

	private static void write(IReportVisitor v, IBundleCoverage bundle, SessionInfoStore sessions,
			ExecutionDataStore store) throws IOException {
		v.visitInfo(sessions.getInfos(), store.getContents());
		v.visitBundle(bundle, null);
		v.visitEnd();
	}
}
