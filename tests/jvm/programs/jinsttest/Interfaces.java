package jinsttest;

/* Interface methods: abstract, default, static and private, called through
 * the interface and the classes. */
public class Interfaces {
	interface Shape {
		double area();

		default String describe() {
			return name() + " " + Math.round(area());
		}

		static Shape square(double s) {
			return new Rect(s, s);
		}

		private String name() {
			return getClass().getSimpleName();
		}
	}

	static final class Rect implements Shape {
		final double w, h;

		Rect(double w, double h) {
			this.w = w;
			this.h = h;
		}

		public double area() {
			return w * h;
		}
	}

	static final class Circle implements Shape {
		final double r;

		Circle(double r) {
			this.r = r;
		}

		public double area() {
			return 3 * r * r;
		}

		public String describe() {
			return "circle " + Shape.super.describe();
		}
	}

	public static void main(String[] args) {
		Shape[] shapes = {new Rect(2, 3), Shape.square(4), new Circle(2), new Circle(1)};
		double total = 0;
		for (int i = 0; i < 10; i++)
			for (Shape s : shapes)
				total += s.area();
		for (Shape s : shapes)
			System.out.println(s.describe());
		System.out.println("total " + total);
	}
}
