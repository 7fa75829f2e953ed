/** A module of its own, instrumented and run on the module path. */
module modapp {
}
