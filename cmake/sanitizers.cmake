# KNEE_SANITIZE=address,undefined for unit tests, thread for the engine's threading tests.
if(KNEE_SANITIZE)
  add_compile_options(-fsanitize=${KNEE_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${KNEE_SANITIZE})
endif()
