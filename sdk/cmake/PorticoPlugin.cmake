# PorticoPlugin.cmake: portico_add_plugin(), shared by the in-tree build and the installed SDK.
#
#   portico_add_plugin(<name>
#     SOURCES <files...>
#     [MANIFEST <manifest.json>]      # default: manifest.json beside the calling CMakeLists
#     [LIBS <libraries...>]           # private libraries of the plugin
#     [OUTPUT_DIRECTORY <dir>]        # where libportico-<name>.so is written
#     [INSTALL_DESTINATION <dir>]     # default: lib/portico/plugins
#     [NO_INSTALL])
#
# The target is named portico-<name> (use it with target_* commands and $<TARGET_FILE:...>).
# Builds libportico-<name>.so (a MODULE library) with hidden visibility, and embeds the manifest
# (plus ABI major/minor and SDK version) in the ELF section .portico_manifest, readable without
# running plugin code, and each kind's JSON Schema (the manifest's kinds[].schema file) for the
# SDK's registration builder. At configure time it first checks manifest.json with the hosts' own
# parser (portico_manifest_check.cc) and stops with the file, the field and the fix when the
# hosts would refuse it.
include_guard(GLOBAL)

# _portico_read_define(<header> <macro> <out>): the value of a #define in a header.
function(_portico_read_define header macro out)
  file(STRINGS "${header}" line REGEX "^#define ${macro} ")
  string(REGEX REPLACE "^#define ${macro} +\"?([^\"]*)\"?.*$" "\\1" value "${line}")
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# _portico_manifest_checker(<out>): the path of portico_manifest_check (portico_manifest_check.cc
# beside this file), compiled once per build tree by try_compile against PORTICO_SDK_INCLUDE_DIR:
# the same manifest.h the hosts were built with, in the Portico tree and from an installed prefix.
# Rebuilt when the compiler, the checker or an SDK header changes (the name carries their hash).
function(_portico_manifest_checker out)
  get_property(exe GLOBAL PROPERTY _PORTICO_MANIFEST_CHECKER)
  if(exe)
    set(${out} "${exe}" PARENT_SCOPE)
    return()
  endif()
  set(src "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/portico_manifest_check.cc")
  file(GLOB headers "${PORTICO_SDK_INCLUDE_DIR}/portico/sdk/*.h")
  list(SORT headers)
  set(hash_input "${CMAKE_CXX_COMPILER} ${CMAKE_CXX_FLAGS}")
  foreach(f IN LISTS src headers)
    file(MD5 "${f}" h)
    string(APPEND hash_input " ${h}")
  endforeach()
  string(MD5 key "${hash_input}")
  string(SUBSTRING "${key}" 0 12 key)
  set(dir "${CMAKE_BINARY_DIR}/portico-manifest-check")
  set(exe "${dir}/portico_manifest_check-${key}")
  if(NOT EXISTS "${exe}")
    file(GLOB stale "${dir}/portico_manifest_check-*")  # built from older headers
    if(stale)
      file(REMOVE ${stale})
    endif()
    find_path(_PORTICO_RAPIDJSON_INCLUDE rapidjson/document.h HINTS ${RAPIDJSON_INCLUDE_DIRS})
    # A build tool, not part of the plugin: plain flags (a sanitizing preset's CMAKE_CXX_FLAGS,
    # say -fsanitize=undefined -fno-sanitize-recover, would stop it inside RapidJSON 1.1).
    # try_compile reads these variables from this function's scope.
    set(CMAKE_CXX_FLAGS "")
    set(CMAKE_EXE_LINKER_FLAGS "")
    try_compile(built "${dir}/build" SOURCES "${src}"
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${PORTICO_SDK_INCLUDE_DIR};${_PORTICO_RAPIDJSON_INCLUDE}"
      CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
      OUTPUT_VARIABLE log
      COPY_FILE "${exe}")
    if(NOT built)
      message(FATAL_ERROR "portico_add_plugin: cannot build the manifest checker from ${src} "
        "against ${PORTICO_SDK_INCLUDE_DIR} (is RapidJSON installed? Debian: rapidjson-dev):\n${log}")
    endif()
  endif()
  set_property(GLOBAL PROPERTY _PORTICO_MANIFEST_CHECKER "${exe}")
  set(${out} "${exe}" PARENT_SCOPE)
endfunction()

# _portico_check_manifest(<manifest.json>): fails configuration, naming the file, the field and
# the fix, when the hosts would refuse the manifest (portico_manifest_check.cc).
function(_portico_check_manifest manifest_path)
  _portico_manifest_checker(checker)
  execute_process(COMMAND "${checker}" "${manifest_path}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(STRIP "${out}" out)
    message(FATAL_ERROR "portico_add_plugin: ${out}")
  endif()
endfunction()

function(portico_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "MANIFEST;OUTPUT_DIRECTORY;INSTALL_DESTINATION"
                        "SOURCES;LIBS" ${ARGN})
  if(NOT PORTICO_SDK_INCLUDE_DIR)
    message(FATAL_ERROR "portico_add_plugin: PORTICO_SDK_INCLUDE_DIR is not set (find_package(PorticoSDK))")
  endif()
  if(NOT ARG_MANIFEST)
    set(ARG_MANIFEST "${CMAKE_CURRENT_SOURCE_DIR}/manifest.json")
  endif()
  get_filename_component(manifest_path "${ARG_MANIFEST}" ABSOLUTE)
  get_filename_component(manifest_dir "${manifest_path}" DIRECTORY)
  _portico_check_manifest("${manifest_path}")
  file(READ "${manifest_path}" manifest)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${manifest_path}")

  _portico_read_define("${PORTICO_SDK_INCLUDE_DIR}/portico/sdk/abi.h" PORTICO_ABI_MAJOR abi_major)
  _portico_read_define("${PORTICO_SDK_INCLUDE_DIR}/portico/sdk/abi.h" PORTICO_ABI_MINOR abi_minor)
  _portico_read_define("${PORTICO_SDK_INCLUDE_DIR}/portico/sdk/version.h" PORTICO_SDK_VERSION sdk_version)

  string(JSON kind_count ERROR_VARIABLE err LENGTH "${manifest}" kinds)
  if(err)
    message(FATAL_ERROR "${manifest_path}: no \"kinds\" array: ${err}")
  endif()
  set(schema_cases "")
  if(kind_count GREATER 0)
    math(EXPR last "${kind_count} - 1")
    foreach(i RANGE ${last})
      string(JSON kind GET "${manifest}" kinds ${i} kind)
      string(JSON schema_file ERROR_VARIABLE no_schema GET "${manifest}" kinds ${i} schema)
      if(NOT no_schema)
        set(schema_path "${manifest_dir}/${schema_file}")
        if(NOT EXISTS "${schema_path}")
          message(FATAL_ERROR "${manifest_path}: kinds[${i}].schema: ${schema_path} does not exist")
        endif()
        file(READ "${schema_path}" schema)
        string(JSON ignored ERROR_VARIABLE schema_err TYPE "${schema}")
        if(schema_err)
          message(FATAL_ERROR "${schema_path}: not valid JSON: ${schema_err}")
        endif()
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${schema_path}")
        string(APPEND schema_cases
               "  if (std::strcmp(kind, \"${kind}\") == 0) return R\"PORTICO_JSON(${schema})PORTICO_JSON\";\n")
      endif()
    endforeach()
  endif()
  string(JSON manifest SET "${manifest}" manifestVersion 1)
  string(JSON manifest SET "${manifest}" abi "{\"major\": ${abi_major}, \"minor\": ${abi_minor}}")
  string(JSON manifest SET "${manifest}" sdkVersion "\"${sdk_version}\"")

  set(embed "// Generated by portico_add_plugin() from ${manifest_path}; do not edit.\n")
  string(APPEND embed "#include <cstring>\n\nextern \"C\" {\n")
  string(APPEND embed "__attribute__((section(\".portico_manifest\"), used, visibility(\"hidden\")))\n")
  string(APPEND embed "extern const char portico_embedded_manifest[] = R\"PORTICO_JSON(${manifest})PORTICO_JSON\";\n\n")
  string(APPEND embed "__attribute__((visibility(\"hidden\"))) const char* portico_embedded_schema(const char* kind) {\n")
  string(APPEND embed "${schema_cases}  return nullptr;\n}\n}\n")
  set(embed_file "${CMAKE_CURRENT_BINARY_DIR}/portico_embed_${name}.cc")
  file(WRITE "${embed_file}.tmp" "${embed}")
  configure_file("${embed_file}.tmp" "${embed_file}" COPYONLY)

  set(target portico-${name})
  add_library(${target} MODULE ${ARG_SOURCES} "${embed_file}")
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME portico-${name}
    PREFIX lib
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_compile_features(${target} PRIVATE cxx_std_20)
  target_link_libraries(${target} PRIVATE ${PORTICO_SDK_TARGET} ${ARG_LIBS})
  # Export only the ABI entry (no std:: instantiations leak into the dynamic symbol table).
  target_link_options(${target} PRIVATE -Wl,--no-undefined
    "-Wl,--version-script=${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin_exports.map")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS
    "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin_exports.map")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()
  if(NOT ARG_NO_INSTALL)
    if(NOT ARG_INSTALL_DESTINATION)
      set(ARG_INSTALL_DESTINATION lib/portico/plugins)
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION "${ARG_INSTALL_DESTINATION}")
  endif()
endfunction()

# portico_add_plugin_verify_test(<target> [NAME <test>] [ARGS <args...>] [LABELS <labels...>])
#
# Adds the CTest test <test> (default plugin_verify_<target>) that runs
#   portico-ctl plugin verify $<TARGET_FILE:<target>> <args...>
# on the built plugin: the hosts' manifest and ABI checks, exports, libraries, schemas and random
# input through its processors (see `portico-ctl plugin verify --help`). portico-ctl is
# PORTICO_CTL_EXECUTABLE (set by the Portico tree itself; otherwise found on PATH). Without it
# the test is still added and reports itself skipped (exit 77), never passed. It is labelled
# plugin_verify plus LABELS.
function(portico_add_plugin_verify_test target)
  cmake_parse_arguments(ARG "" "NAME" "ARGS;LABELS" ${ARGN})
  if(NOT ARG_NAME)
    set(ARG_NAME plugin_verify_${target})
  endif()
  if(NOT PORTICO_CTL_EXECUTABLE)
    find_program(PORTICO_CTL_EXECUTABLE portico-ctl)
  endif()
  if(PORTICO_CTL_EXECUTABLE)
    add_test(NAME ${ARG_NAME}
      COMMAND ${PORTICO_CTL_EXECUTABLE} plugin verify $<TARGET_FILE:${target}> ${ARG_ARGS})
  else()
    add_test(NAME ${ARG_NAME}
      COMMAND sh -c "echo 'portico-ctl not found (set PORTICO_CTL_EXECUTABLE): skipped'; exit 77")
    set_tests_properties(${ARG_NAME} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS "plugin_verify;${ARG_LABELS}" TIMEOUT 300)
endfunction()
