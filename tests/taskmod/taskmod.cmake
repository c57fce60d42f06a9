# Task modules as files, included by tests/extra.cmake once levpp exists:
# tm_tasks.c built by leverage_add_tasks into the module that the runner
# test_taskmod carries, once embedded and once by path (see
# test_taskmod.c), plus shared objects for the loader to refuse: one
# without a Leverage module, one whose module the runtime refuses, one with
# two modules.
#
#   taskmod_embed          EMBED: carried bytes, bad input, load, reuse, run
#   taskmod_embed_torture  the same under LEV_TORTURE=1
#   taskmod_path           PATH: carried path, bad input, load, reuse, run
if(NOT TARGET levpp OR NOT COMMAND leverage_add_tasks)
  return()
endif()

set(TASKMOD_DIR ${CMAKE_CURRENT_LIST_DIR})
add_library(taskmod_plain SHARED ${TASKMOD_DIR}/tm_plain.c)
foreach(kind BAD_ABI TWO_MODULES)
  string(TOLOWER ${kind} name)
  add_library(taskmod_${name} SHARED ${TASKMOD_DIR}/tm_desc.c)
  target_compile_definitions(taskmod_${name} PRIVATE TM_${kind})
  target_link_libraries(taskmod_${name} PRIVATE leverage)
endforeach()

foreach(mode EMBED PATH)
  string(TOLOWER ${mode} name)
  set(runner test_taskmod_${name})
  add_executable(${runner} ${TASKMOD_DIR}/test_taskmod.c)
  target_link_libraries(${runner} PRIVATE lev_runtime PkgConfig::CMOCKA)
  # The module binds to the runtime linked into the runner, not to the
  # libleverage.so it was linked against.
  set_target_properties(${runner} PROPERTIES ENABLE_EXPORTS ON)
  target_compile_definitions(${runner} PRIVATE TM_MODE_${mode}
    "TM_PLAIN_PATH=\"$<TARGET_FILE:taskmod_plain>\""
    "TM_BAD_ABI_PATH=\"$<TARGET_FILE:taskmod_bad_abi>\""
    "TM_TWO_MODULES_PATH=\"$<TARGET_FILE:taskmod_two_modules>\"")
  add_dependencies(${runner} taskmod_plain taskmod_bad_abi taskmod_two_modules)
  leverage_add_tasks(${runner} SOURCES ${TASKMOD_DIR}/tm_tasks.c ${mode})
  add_test(NAME taskmod_${name} COMMAND ${runner})
  set_tests_properties(taskmod_${name} PROPERTIES TIMEOUT 120)
endforeach()

add_test(NAME taskmod_embed_torture COMMAND test_taskmod_embed)
set_tests_properties(taskmod_embed_torture PROPERTIES TIMEOUT 120 ENVIRONMENT LEV_TORTURE=1)
