package jinstcheck;

import java.io.File;

/**
 * Run with the agent: the runtime is defined in the bootstrap loader, and
 * jinst.rt.Control.dump() writes the output files while the program runs
 * (ARGV: the files to expect). Prints FAIL lines and exits 1 on failure.
 */
public class BootCheck {
	public static void main(String[] args) throws Exception {
		int failures = 0;
		Class<?> hooks = Class.forName("jinst.rt.Hooks");
		if (hooks.getClassLoader() != null) {
			System.out.println("FAIL jinst.rt.Hooks loaded by " + hooks.getClassLoader());
			failures++;
		}
		for (String f : args)
			new File(f).delete();
		Class.forName("jinst.rt.Control").getMethod("dump").invoke(null);
		for (String f : args)
			if (!new File(f).isFile()) {
				System.out.println("FAIL Control.dump() did not write " + f);
				failures++;
			}
		System.out.println(failures == 0 ? "boot: all checks passed" : "boot: " + failures + " failed");
		System.exit(failures == 0 ? 0 : 1);
	}
}
