package jinsttest;

/* An enum with a constructor, a field, an abstract method and
 * constant-specific bodies (inner classes Color$1...). */
public enum Color {
	RED(0xff0000) {
		@Override
		String describe() {
			return "warm";
		}
	},
	GREEN(0x00ff00) {
		@Override
		String describe() {
			return "natural";
		}
	},
	BLUE(0x0000ff) {
		@Override
		String describe() {
			return "cold";
		}
	};

	private final int rgb;

	Color(int rgb) {
		this.rgb = rgb;
	}

	public int rgb() {
		return rgb;
	}

	abstract String describe();
}
