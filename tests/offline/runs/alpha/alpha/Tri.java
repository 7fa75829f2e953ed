package alpha;

public class Tri implements Shape {
}
