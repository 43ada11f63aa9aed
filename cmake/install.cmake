# `cmake --install build [--prefix DIR]`: what an engine builds against.
#   include/ifa/*.h                          the public headers
#   lib/libifa.so.M.m (+ links)              the shared library (IFA_API names only)
#   lib/cmake/ifa/ifaConfig*.cmake           find_package(ifa 0.1) -> target ifa::ifa
#   lib/pkgconfig/ifa.pc                     pkg-config --cflags --libs ifa
#   bin/ifa-run, ifa-bench, ifa-tiling, ifa-decode   (with IFA_BUILD_TOOLS)
# Every path is relative to the prefix, so an install may be moved or made with --prefix at install time.
include(CMakePackageConfigHelpers)

install(TARGETS ifa EXPORT ifaTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/ifa DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

set(IFA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ifa)
install(EXPORT ifaTargets NAMESPACE ifa:: DESTINATION ${IFA_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/ifaConfig.cmake.in
  ${CMAKE_BINARY_DIR}/generated/ifaConfig.cmake INSTALL_DESTINATION ${IFA_CMAKE_DIR})
# 0.x: only the same major.minor is compatible (the soname's rule)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/generated/ifaConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/generated/ifaConfig.cmake ${CMAKE_BINARY_DIR}/generated/ifaConfigVersion.cmake
  DESTINATION ${IFA_CMAKE_DIR})

# ifa.pc finds the prefix from its own place (${pcfiledir}): one "../" per part of the library directory,
# plus one for pkgconfig/. Directories given as absolute paths stay as given.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(IFA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  string(REGEX REPLACE "[^/]+" ".." IFA_PC_UP "${CMAKE_INSTALL_LIBDIR}")
  set(IFA_PC_PREFIX "\${pcfiledir}/../${IFA_PC_UP}")
endif()
foreach(d LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
    set(IFA_PC_${d} "${CMAKE_INSTALL_${d}}")
  else()
    set(IFA_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
  endif()
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/cmake/ifa.pc.in ${CMAKE_BINARY_DIR}/generated/ifa.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/generated/ifa.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(IFA_BUILD_TOOLS)
  install(TARGETS ifa-run ifa-bench ifa-tiling ifa-decode ifa-soak RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# pip install ./python (IFA_PYTHON_PACKAGE): the shared library inside the package folder, where
# python/ifa/__init__.py looks first; component python, the only one the package installs. One file under the
# soname's name (a wheel holds no links).
if(IFA_PYTHON_PACKAGE)
  install(FILES $<TARGET_FILE:ifa> DESTINATION ifa RENAME $<TARGET_SONAME_FILE_NAME:ifa> COMPONENT python)
endif()
