# Writes OUT: one `{"CODE", R"doc(...)doc"},` entry per docs/rules/CODE-name.md,
# so `graphlint rule CODE` prints the same page the docs publish.
file(GLOB pages "${DOCS_DIR}/GL*.md")
list(SORT pages)
set(content "")
foreach(page ${pages})
  get_filename_component(stem "${page}" NAME_WE)
  string(SUBSTRING "${stem}" 0 5 code)
  file(READ "${page}" text)
  string(APPEND content "{\"${code}\", R\"graphlint_doc(${text})graphlint_doc\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "${content}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
