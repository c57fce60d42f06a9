# LeverageInstall.cmake - installs what the rest of the tree does not:
# the programs that exist, leverage.pc for pkg-config, and the CMake
# package Leverage (config, version file, exported library targets).
# Included at the end of the top-level CMakeLists.txt, once every target
# is defined. libleverage and the headers are installed by leverage/.

include(CMakePackageConfigHelpers)

set(LEV_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Leverage)
set(LEV_PKGCONFIG_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ===================================================================
# Programs
# ===================================================================

# An installed program finds libleverage beside it, wherever the prefix is.
file(RELATIVE_PATH LEV_BIN_TO_LIB
  /prefix/${CMAKE_INSTALL_BINDIR} /prefix/${CMAKE_INSTALL_LIBDIR})
foreach(prog levpp levpeer levctl)
  if(TARGET ${prog})
    get_target_property(rpath ${prog} INSTALL_RPATH)
    if(NOT rpath)
      set_target_properties(${prog} PROPERTIES INSTALL_RPATH "$ORIGIN/${LEV_BIN_TO_LIB}")
    endif()
    install(TARGETS ${prog} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

# ===================================================================
# pkg-config: leverage.pc
# ===================================================================

# Libs carries every library libleverage needs, so that generated task code
# and static links work with `pkg-config --libs leverage` alone.
set(LEV_PC_LIBS -lleverage)
set(LEV_PC_REQUIRES_PRIVATE "")
foreach(entry IN LISTS LEV_LIB_PC_MODULES)
  string(REPLACE "=" ";" entry "${entry}")
  list(GET entry 0 name)
  list(GET entry 1 module)
  list(APPEND LEV_PC_REQUIRES_PRIVATE ${module})
  foreach(lib IN LISTS ${name}_LIBRARIES)
    list(APPEND LEV_PC_LIBS -l${lib})
  endforeach()
endforeach()
list(APPEND LEV_PC_LIBS -lpthread -lm -ldl)
list(REMOVE_DUPLICATES LEV_PC_LIBS)
list(JOIN LEV_PC_LIBS " " LEV_PC_LIBS)
list(JOIN LEV_PC_REQUIRES_PRIVATE " " LEV_PC_REQUIRES_PRIVATE)

# The file names its prefix, which is only known when installing
# (cmake --install --prefix may change it): it is written then.
string(CONFIGURE [[
set(LEV_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(LEV_PC_LIBDIR "@CMAKE_INSTALL_LIBDIR@")
set(LEV_PC_INCLUDEDIR "@CMAKE_INSTALL_INCLUDEDIR@")
foreach(var LEV_PC_LIBDIR LEV_PC_INCLUDEDIR)
  if(NOT IS_ABSOLUTE "${${var}}")
    string(PREPEND ${var} "\${prefix}/")
  endif()
endforeach()
set(PROJECT_VERSION "@PROJECT_VERSION@")
set(PROJECT_DESCRIPTION "@PROJECT_DESCRIPTION@")
set(LEV_PC_LIBS "@LEV_PC_LIBS@")
set(LEV_PC_REQUIRES_PRIVATE "@LEV_PC_REQUIRES_PRIVATE@")
configure_file("@PROJECT_SOURCE_DIR@/cmake/leverage.pc.in"
  "@PROJECT_BINARY_DIR@/leverage.pc" @ONLY)
set(pc_dir "@LEV_PKGCONFIG_INSTALL_DIR@")
if(NOT IS_ABSOLUTE "${pc_dir}")
  set(pc_dir "${CMAKE_INSTALL_PREFIX}/${pc_dir}")
endif()
file(INSTALL "@PROJECT_BINARY_DIR@/leverage.pc" DESTINATION "${pc_dir}")
]] LEV_PC_INSTALL_CODE @ONLY)
install(CODE "${LEV_PC_INSTALL_CODE}")

# ===================================================================
# CMake package: find_package(Leverage)
# ===================================================================

install(EXPORT LeverageTargets
  NAMESPACE Leverage::
  FILE LeverageTargets.cmake
  DESTINATION ${LEV_CMAKE_INSTALL_DIR})

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/LeverageConfig.cmake.in
  ${PROJECT_BINARY_DIR}/LeverageConfig.cmake
  INSTALL_DESTINATION ${LEV_CMAKE_INSTALL_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
# Before 1.0 a minor release may break the interface.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/LeverageConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)

set(LEV_PACKAGE_FILES
  ${PROJECT_BINARY_DIR}/LeverageConfig.cmake
  ${PROJECT_BINARY_DIR}/LeverageConfigVersion.cmake)
if(EXISTS ${PROJECT_SOURCE_DIR}/cmake/LeverageTasks.cmake)
  list(APPEND LEV_PACKAGE_FILES ${PROJECT_SOURCE_DIR}/cmake/LeverageTasks.cmake)
endif()
install(FILES ${LEV_PACKAGE_FILES} DESTINATION ${LEV_CMAKE_INSTALL_DIR})
