package jinst.rt;

/** The per-thread context, created on a thread's first hook call. */
final class Local extends ThreadLocal<Ctx> {
	@Override
	protected Ctx initialValue() {
		Ctx c = new Ctx(Thread.currentThread());
		Hooks.register(c);
		return c;
	}
}
