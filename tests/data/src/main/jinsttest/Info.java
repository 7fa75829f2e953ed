package jinsttest;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;

/* An annotation type whose defaults cover every element_value tag
 * (JVMS 4.7.16.1): B C D F I J S Z s e c @ [. Its methods carry
 * AnnotationDefault. */
@Retention(RetentionPolicy.RUNTIME)
public @interface Info {
	byte b() default 1;
	char c() default 'c';
	double d() default 2.5;
	float f() default 1.5f;
	int i() default 42;
	long j() default 1L << 40;
	short s() default 7;
	boolean z() default true;
	String str() default "text";
	Color color() default Color.GREEN;
	Class<?> type() default String.class;
	Marker nested() default @Marker;
	int[] values() default {1, 2, 3};
}
