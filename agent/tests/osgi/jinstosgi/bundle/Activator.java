package jinstosgi.bundle;

import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;

/**
 * The test bundle's activator: deterministic work whose calls the agent's
 * counts must show exactly (agent/tests/jvm.sh, case osgi): start, stop and
 * the constructor once each, Work's methods as Work says.
 */
public final class Activator implements BundleActivator {
	@Override
	public void start(BundleContext context) {
		Work w = new Work(3);
		System.out.println("fib(20) = " + Work.fib(20));
		System.out.println("steps = " + w.steps(1000));
		System.out.println("caught = " + w.caught(10));
	}

	@Override
	public void stop(BundleContext context) {
		System.out.println("bundle stopping");
	}
}
