package jinst.rt;

/** The per-thread context: made on a thread's first hook call, found again
 * when the thread's ThreadLocals were erased (Hooks.contextOf). */
final class Local extends ThreadLocal<Ctx> {
	@Override
	protected Ctx initialValue() {
		return Hooks.contextOf(Thread.currentThread());
	}
}
