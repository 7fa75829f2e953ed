package jinstnat;

/* Natives bound both ways JNI binds them: twice and mix by automatic lookup
 * (Java_jinstnat_Natives_twice, _mix), registered by RegisterNatives in the
 * library's JNI_OnLoad (libjinstnat.c). */
public class Natives {
	static {
		System.load(System.getProperty("jinstnat.lib"));
	}

	public static native int twice(int x);

	public static native int registered(int x);

	private native long mix(long a, int b);

	public long mixed(long a, int b) {
		return mix(a, b);
	}
}
