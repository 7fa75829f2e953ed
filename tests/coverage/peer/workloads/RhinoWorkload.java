/*
 * Rhino (Debian's librhino-java) running script.js: run(SCALE) returns a
 * line per round, each line goes into the checksum.
 *
 *   RhinoWorkload SCALE SCRIPT
 *
 * Rhino runs interpreted (optimization level -1), so the code that runs is
 * Rhino's own, its interpreter included, and not classes Rhino would
 * generate from the script at run time, which no report over its jar shows.
 */
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

import org.mozilla.javascript.Context;
import org.mozilla.javascript.Function;
import org.mozilla.javascript.Scriptable;

public final class RhinoWorkload {
    public static void main(String[] args) throws IOException {
        int scale = Checksum.scale(args);
        Checksum sum = new Checksum();
        Context cx = Context.enter();
        try {
            cx.setOptimizationLevel(-1);
            cx.setLanguageVersion(Context.VERSION_ES6);
            Scriptable scope = cx.initStandardObjects();
            try (Reader in = Files.newBufferedReader(Paths.get(args[1]), StandardCharsets.UTF_8)) {
                cx.evaluateReader(scope, in, "script.js", 1, null);
            }
            Function run = (Function) scope.get("run", scope);
            Object result = run.call(cx, scope, scope, new Object[] {scale});
            for (String line : Context.toString(result).split("\n")) {
                sum.add(line);
            }
        } finally {
            Context.exit();
        }
        sum.print("rhino");
    }
}
