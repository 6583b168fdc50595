# Build policy in one place: warnings for every knee target.
add_library(knee_warnings INTERFACE)
target_compile_options(knee_warnings INTERFACE -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion
                                               -Wnon-virtual-dtor -Wold-style-cast)
if(KNEE_WERROR)
  target_compile_options(knee_warnings INTERFACE -Werror)
endif()
# GCC 12 reports false -Wrestrict errors inside std::string at -O2 (GCC bug 105329), which
# -Werror would turn into build failures of correct code; fixed in GCC 13.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(knee_warnings INTERFACE -Wno-restrict)
endif()
