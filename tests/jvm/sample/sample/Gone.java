package sample;

/* Compiled, then left out of every jar: a dependency the corpus lacks. */
public class Gone extends Base {
}
