# Writes OUT: the bytes of IN as one C++ raw string literal, so the binary
# carries the file it was built from (data/hardware.yaml: HardwareProfile.cpp).
file(READ "${IN}" text)
string(FIND "${text}" ")graphlint_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )graphlint_embed\"")
endif()
file(WRITE "${OUT}.tmp" "R\"graphlint_embed(${text})graphlint_embed\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
