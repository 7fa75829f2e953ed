# Installation: the libraries, their public headers, the jinst tool, a
# pkg-config file each and a CMake package (find_package(jinst) -> jinst::classfile,
# jinst::classpath, jinst::instrument; jinst::archive and jinst::util, which
# the class-path library links and include/jinst/archive.h and util.h
# declare; jinst::report for include/jinst/report.h; jinst::coverage for
# include/jinst/coverage.h).
include(CMakePackageConfigHelpers)

install(TARGETS jinst_classfile jinst_util jinst_archive jinst_classpath jinst_instrument jinst_report jinst_coverage EXPORT jinstTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/jinst DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET jinst)
  install(TARGETS jinst RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT jinstTargets NAMESPACE jinst:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/jinst)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/jinstConfig.cmake.in
  ${PROJECT_BINARY_DIR}/jinstConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/jinst)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/jinstConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/jinstConfig.cmake ${PROJECT_BINARY_DIR}/jinstConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/jinst)

# xxhash is compiled in (header-only), so the class-file library needs only pthreads
# at link time; the class-path library adds the archive layer (libzip) and
# the util library.
# From lib/pkgconfig (or lib/x86_64-linux-gnu/pkgconfig) back up to the prefix.
file(RELATIVE_PATH PC_UP /x/${CMAKE_INSTALL_LIBDIR}/pkgconfig /x)
configure_file(${CMAKE_CURRENT_LIST_DIR}/jinst.pc.in ${PROJECT_BINARY_DIR}/jinst.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/jinst.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_file(${CMAKE_CURRENT_LIST_DIR}/jinst-archive.pc.in ${PROJECT_BINARY_DIR}/jinst-archive.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/jinst-archive.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_file(${CMAKE_CURRENT_LIST_DIR}/jinst-classpath.pc.in ${PROJECT_BINARY_DIR}/jinst-classpath.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/jinst-classpath.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_file(${CMAKE_CURRENT_LIST_DIR}/jinst-instrument.pc.in ${PROJECT_BINARY_DIR}/jinst-instrument.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/jinst-instrument.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
