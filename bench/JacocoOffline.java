import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

import org.jacoco.core.instr.Instrumenter;
import org.jacoco.core.runtime.OfflineInstrumentationAccessGenerator;

/**
 * JaCoCo's offline instrumentation of jars, the peer of `jinst instrument
 * --coverage` in bench/offline: what `jacococli instrument` does with each
 * file it is given (JaCoCo 0.8.6, org.jacoco.cli.internal.commands.Instrument):
 * one Instrumenter with an OfflineInstrumentationAccessGenerator, and
 * instrumentAll over each input file, written to OUT_DIR under its own name.
 * instrumentAll reads a zip entry by entry, instruments its classes (nested
 * archives too), copies the rest and removes signatures, as jacococli's
 * default. A file JaCoCo cannot instrument is reported and left out, where
 * jacococli would stop: the bench then says how many.
 *
 *   java -cp org.jacoco.core.jar:asm.jar:asm-commons.jar:asm-tree.jar:. JacocoOffline OUT_DIR FILE...
 *
 * Prints "jacoco: N files, N failed, N classes" (the classes instrumented).
 */
public final class JacocoOffline {
	public static void main(String[] args) throws IOException {
		if (args.length < 2) {
			System.err.println("usage: JacocoOffline OUT_DIR FILE...");
			System.exit(2);
		}
		File outDir = new File(args[0]);
		if (!outDir.isDirectory() && !outDir.mkdirs()) {
			throw new IOException("cannot make " + outDir);
		}
		Instrumenter instrumenter = new Instrumenter(new OfflineInstrumentationAccessGenerator());
		int failed = 0, classes = 0;
		for (int i = 1; i < args.length; i++) {
			File in = new File(args[i]);
			File out = new File(outDir, in.getName());
			try (InputStream is = new BufferedInputStream(new FileInputStream(in));
			     OutputStream os = new BufferedOutputStream(new FileOutputStream(out))) {
				classes += instrumenter.instrumentAll(is, os, in.getPath());
			} catch (IOException e) {
				failed++;
				System.err.println("jacoco: " + in + ": " + e.getMessage());
				out.delete();
			}
		}
		System.out.println("jacoco: " + (args.length - 1) + " files, " + failed + " failed, " + classes + " classes");
	}
}
