# Embeds one file into the binary as a byte array (run with cmake -P at build time):
#   cmake -DIN=<file> -DOUT=<generated .cc> -DFUNCTION=<name> -P embed_file.cmake
# writes OUT defining `std::string_view knee::report::web::FUNCTION()` (declared in
# src/report/web_assets.h) that returns the file's bytes. A byte array, not a string literal: no
# raw-string delimiter can collide with the content and no compiler string-length limit applies.
foreach(var IN ITEMS IN OUT FUNCTION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_file.cmake: -D${var}=... is required")
  endif()
endforeach()
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_length)
if(hex_length EQUAL 0)
  message(FATAL_ERROR "embed_file.cmake: ${IN} is empty")
endif()
# 0x..,  with a line break every 16 bytes.
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
get_filename_component(name "${IN}" NAME)
file(WRITE "${OUT}.tmp"
  "// Generated at build time by cmake/embed_file.cmake from ${name}; do not edit.\n"
  "#include \"report/web_assets.h\"\n\n"
  "namespace knee::report::web {\nnamespace {\nconstexpr unsigned char kData[] = {\n"
  "${bytes}\n};\n}  // namespace\n\n"
  "std::string_view ${FUNCTION}() {\n"
  "  return {reinterpret_cast<const char*>(kData), sizeof(kData)};\n}\n\n"
  "}  // namespace knee::report::web\n")
# Only touch OUT when its content changes, so an unchanged asset does not recompile.
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
