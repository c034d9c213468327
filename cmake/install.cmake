# Install rules: bin/tlc, lib/libtlc.so.MAJOR (+ links), include/tlc/*.h, a
# CMake package (find_package(tlc) -> tlc::tlc) and a pkg-config file.
include(CMakePackageConfigHelpers)

set(TLC_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tlc)

install(TARGETS tlc_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tlc_shared EXPORT tlcTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
file(GLOB TLC_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/tlc/*.h)
install(FILES ${TLC_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tlc)

install(EXPORT tlcTargets NAMESPACE tlc:: FILE tlcTargets.cmake DESTINATION ${TLC_CMAKE_PACKAGE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tlcConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tlcConfig.cmake
                              INSTALL_DESTINATION ${TLC_CMAKE_PACKAGE_DIR})
# The soname changes with the major version, so only the same major is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tlcConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tlcConfig.cmake ${PROJECT_BINARY_DIR}/tlcConfigVersion.cmake
        DESTINATION ${TLC_CMAKE_PACKAGE_DIR})

# tlc.pc finds the prefix from its own place (${pcfiledir}), so it stays
# right under `cmake --install --prefix DIR` and when the tree is moved.
set(_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH TLC_PC_PREFIX_FROM_PCDIR /prefix/${_pc_dir} /prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/tlc.pc.in ${PROJECT_BINARY_DIR}/tlc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tlc.pc DESTINATION ${_pc_dir})
