package jinsttest;

import java.util.function.IntBinaryOperator;
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;

/* Lambdas (their bodies are private methods of this class), capturing
 * lambdas, method references and a lambda that throws. */
public class Lambdas {
	static int twice(int x) {
		return 2 * x;
	}

	static int apply(IntUnaryOperator f, int x) {
		return f.applyAsInt(x);
	}

	public static void main(String[] args) {
		int base = args.length + 3;
		IntUnaryOperator inc = x -> x + 1;
		IntUnaryOperator addBase = x -> x + base;
		IntUnaryOperator ref = Lambdas::twice;
		IntBinaryOperator mul = (a, b) -> a * b;
		Supplier<String> boom = () -> {
			throw new UnsupportedOperationException("boom");
		};
		int acc = 0;
		for (int i = 0; i < 100; i++)
			acc += apply(inc, i) + apply(addBase, i) + apply(ref, i) + mul.applyAsInt(i, 2);
		int failures = 0;
		for (int i = 0; i < 3; i++) {
			try {
				boom.get();
			} catch (UnsupportedOperationException e) {
				failures++;
			}
		}
		System.out.println("acc " + acc + ", failures " + failures);
	}
}
