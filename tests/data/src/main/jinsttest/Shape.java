package jinsttest;

/* A sealed interface (PermittedSubclasses) with record implementations
 * (Record attribute, ObjectMethods bootstrap via invokedynamic). */
public sealed interface Shape permits Shape.Circle, Shape.Square {
	double area();

	record Circle(double radius) implements Shape {
		public Circle {
			if (radius < 0)
				throw new IllegalArgumentException("radius");
		}

		@Override
		public double area() {
			return Math.PI * radius * radius;
		}
	}

	record Square(@Marker long side, String label) implements Shape {
		@Override
		public double area() {
			return (double) side * side;
		}
	}
}
