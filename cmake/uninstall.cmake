# make uninstall: removes every file the last `make install` listed (the Makefile copies CMake's
# install_manifest.txt to installed_files.txt with DESTDIR prepended, since cpack and other
# installs rewrite the manifest), and says which were already gone.
#   cmake -DMANIFEST=<build>/installed_files.txt -P uninstall.cmake
if(NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "no ${MANIFEST}: nothing was installed with make install from this build")
endif()
file(STRINGS "${MANIFEST}" files)
foreach(f IN LISTS files)
  if(EXISTS "${f}" OR IS_SYMLINK "${f}")
    file(REMOVE "${f}")
    message(STATUS "removed ${f}")
  else()
    message(STATUS "already gone: ${f}")
  endif()
endforeach()
