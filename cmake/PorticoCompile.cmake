# PorticoCompile: warnings and sanitizers for Portico's own targets (portico_target_options).
set(PORTICO_WARNINGS -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
if(PORTICO_WERROR)
  list(APPEND PORTICO_WARNINGS -Werror)
endif()
if(PORTICO_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# portico_target_options(TARGET): applies Portico's warning set to one target.
function(portico_target_options target)
  target_compile_options(${target} PRIVATE ${PORTICO_WARNINGS})
endfunction()

# portico_test(NAME SOURCES ... LIBS ... [LABELS ...]): a GoogleTest unit test registered with
# CTest, labelled "unit" (plus any LABELS) so the asan preset can run unit tests only.
function(portico_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  # PORTICO_SKIP_INCOMPLETE_TESTS (developer option, default OFF): a test whose sources are not
  # all written yet is skipped with a message instead of failing the configure step.
  if(PORTICO_SKIP_INCOMPLETE_TESTS)
    foreach(src IN LISTS ARG_SOURCES)
      if(NOT IS_ABSOLUTE "${src}" AND NOT EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${src}")
        message(WARNING "portico_test(${name}): ${src} does not exist yet; test skipped")
        return()
      endif()
    endforeach()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  portico_target_options(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  set(labels unit ${ARG_LABELS})
  # gtest_discover_tests (CMake 3.25) splits list-valued PROPERTIES ("LABELS unit;x" becomes
  # "LABELS unit" plus a stray "x"), so the labels are set by a ctest include file that runs
  # after the discovered tests are defined, from the TEST_LIST it leaves behind (CMake leaves
  # tests whose names contain "[" or "]" out of that list: keep brackets out of test names and
  # parameter printers).
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 30 TEST_LIST ${name}_TESTS)
  set(labels_script "${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake")
  file(WRITE "${labels_script}"
    "if(NOT \"\${${name}_TESTS}\" STREQUAL \"\")\n"
    "  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${labels}\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_script}")
endfunction()
