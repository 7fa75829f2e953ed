package jinsttest;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/* Runtime-visible, usable on declarations and types (so it appears both as a
 * declaration annotation and as a type annotation). */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER,
		ElementType.RECORD_COMPONENT, ElementType.TYPE_USE, ElementType.LOCAL_VARIABLE})
public @interface Marker {
}
