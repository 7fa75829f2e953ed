/** Not instrumented ahead of time: the agent traces it, when it runs. */
public class Helper {
	static int help(int n) {
		return n == 0 ? 0 : 1 + help(n - 1);
	}
}
