package jinsttest;

/* Service interface for the module's uses/provides. Default and static
 * interface methods give InterfaceMethodref constants. */
public interface Service {
	String name();

	default String greet(String who) {
		return name() + ", " + who;
	}

	static Service of(String n) {
		return () -> n;
	}
}
