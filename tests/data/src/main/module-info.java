/* A module descriptor: exercises the Module, ModulePackages and
 * ModuleMainClass attributes (JVMS 4.7.25-4.7.27). */
module jinst.testdata {
	requires java.logging;
	requires transitive java.sql;
	exports jinsttest;
	opens jinsttest to java.logging;
	uses jinsttest.Service;
	provides jinsttest.Service with jinsttest.ServiceImpl;
}
