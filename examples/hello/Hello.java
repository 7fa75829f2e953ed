package hello;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;

/** The bundled example: a little of everything a class file can hold. */
public class Hello {
	interface Shape {
		double area();
	}

	record Circle(double r) implements Shape {
		public double area() {
			return Math.PI * r * r;
		}
	}

	record Square(double side) implements Shape {
		public double area() {
			return side * side;
		}
	}

	static int fib(int n) {
		return n < 2 ? n : fib(n - 1) + fib(n - 2);
	}

	static int parse(String s) {
		try {
			return Integer.parseInt(s);
		} catch (NumberFormatException e) {
			return -1;
		}
	}

	public static void main(String[] args) {
		List<Shape> shapes = new ArrayList<>();
		for (int i = 1; i <= 3; i++) {
			shapes.add(i % 2 == 0 ? new Square(i) : new Circle(i));
		}
		double total = 0;
		for (Shape s : shapes) {
			total += s.area();
		}
		IntUnaryOperator twice = x -> 2 * x;
		System.out.printf("area %.2f, fib(20) %d, twice %d, parse %d%n", total, fib(20), twice.applyAsInt(21),
				parse("x"));
	}
}
