package jinstosgi;

import java.io.File;
import java.util.HashMap;
import java.util.Map;

import org.osgi.framework.Bundle;
import org.osgi.framework.Constants;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;

/**
 * Starts an OSGi framework (the FrameworkFactory on the class path: Apache
 * Felix), installs and starts the bundle jar ARGV[1], stops it all. No boot
 * delegation is configured: the bundle's loader hands only java.* to its
 * parent, as OSGi says.
 *
 *   java -cp felix.jar:launcher jinstosgi.Launcher CACHE_DIR BUNDLE_JAR
 */
public final class Launcher {
	private Launcher() {
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> config = new HashMap<String, String>();
		config.put(Constants.FRAMEWORK_STORAGE, new File(args[0]).getAbsolutePath());
		config.put(Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT);
		// Felix 4's URL handlers reach into java.net by reflection, which
		// JDK 17 refuses (a stack trace at stop): not what is tested here.
		config.put("felix.service.urlhandlers", "false");
		FrameworkFactory factory = java.util.ServiceLoader.load(FrameworkFactory.class).iterator().next();
		Framework framework = factory.newFramework(config);
		framework.start();
		Bundle bundle = framework.getBundleContext().installBundle(new File(args[1]).toURI().toString());
		bundle.start();
		System.out.println("bundle " + bundle.getSymbolicName() + " active: " + (bundle.getState() == Bundle.ACTIVE));
		bundle.stop();
		framework.stop();
		framework.waitForStop(30000);
		System.out.println("framework stopped");
	}
}
