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

# portico_test(NAME SOURCES ... LIBS ...): a GoogleTest unit test registered with CTest,
# labelled "unit" so the asan preset can run unit tests only.
function(portico_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  portico_target_options(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  set(labels unit ${ARG_LABELS})
  gtest_discover_tests(${name} PROPERTIES LABELS "${labels}" DISCOVERY_TIMEOUT 30)
endfunction()
