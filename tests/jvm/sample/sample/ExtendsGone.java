package sample;

/* Its superclass is absent: it cannot even be loaded. */
public class ExtendsGone extends Gone {
}
