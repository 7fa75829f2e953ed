package jinstcov;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A program to attach coverage to: every 2 ms it calls tick() and the
 * method of the phase written in DIR/phase ("early", the default, calls
 * early(); "late" calls late(); anything else neither), printing each new
 * phase as it sees it, until DIR/stop exists (at most two minutes).
 */
public class Attach {
	static long early, late, ticks;

	static void early() {
		early++;
	}

	static void late() {
		late++;
	}

	static void tick() {
		ticks++;
	}

	public static void main(String[] args) throws Exception {
		Path dir = Paths.get(args[0]);
		long end = System.currentTimeMillis() + 120000;
		String last = "";
		System.out.println("attach: running");
		while (!Files.exists(dir.resolve("stop")) && System.currentTimeMillis() < end) {
			Path p = dir.resolve("phase");
			String phase = Files.exists(p) ? new String(Files.readAllBytes(p), "UTF-8").trim() : "early";
			if (phase.equals("early"))
				early();
			else if (phase.equals("late"))
				late();
			tick();
			if (!phase.equals(last)) {
				System.out.println("attach: phase " + phase);
				last = phase;
			}
			Thread.sleep(2);
		}
		System.out.println("attach: " + (ticks > 0 ? "ticked" : "never ticked"));
	}
}
