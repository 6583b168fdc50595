# Build policy in one place: warnings for every knee target.
add_library(knee_warnings INTERFACE)
target_compile_options(knee_warnings INTERFACE -Wall -Wextra -Wshadow -Wconversion -Wsign-conversion
                                               -Wnon-virtual-dtor -Wold-style-cast)
if(KNEE_WERROR)
  target_compile_options(knee_warnings INTERFACE -Werror)
endif()
