package jinstcheck;

/** What Rows' threads call, traced: step() CALLS times each. */
public class RowsWork {
	static int sum;

	static void step(int i) {
		sum += i;
	}

	static void run(int calls) {
		for (int i = 0; i < calls; i++)
			step(i);
	}
}
