# Task modules as files, included by tests/extra.cmake once levpp exists:
# tm_tasks.c built by leverage_add_tasks into the module that the runner
# test_taskmod carries, once embedded and once by path (see
# test_taskmod.c), plus a shared object without a Leverage module for the
# loader to refuse.
#
#   taskmod_embed          EMBED: carried bytes, bad input, load, reuse, run
#   taskmod_embed_torture  the same under LEV_TORTURE=1
#   taskmod_path           PATH: carried path, bad input, load, reuse, run
if(NOT TARGET levpp OR NOT COMMAND leverage_add_tasks)
  return()
endif()

set(TASKMOD_DIR ${CMAKE_CURRENT_LIST_DIR})
add_library(taskmod_plain SHARED ${TASKMOD_DIR}/tm_plain.c)

foreach(mode EMBED PATH)
  string(TOLOWER ${mode} name)
  set(runner test_taskmod_${name})
  add_executable(${runner} ${TASKMOD_DIR}/test_taskmod.c)
  target_link_libraries(${runner} PRIVATE lev_runtime PkgConfig::CMOCKA)
  # The module binds to the runtime linked into the runner, not to the
  # libleverage.so it was linked against.
  set_target_properties(${runner} PROPERTIES ENABLE_EXPORTS ON)
  target_compile_definitions(${runner} PRIVATE
    TM_MODE_${mode} "TM_PLAIN_PATH=\"$<TARGET_FILE:taskmod_plain>\"")
  add_dependencies(${runner} taskmod_plain)
  leverage_add_tasks(${runner} SOURCES ${TASKMOD_DIR}/tm_tasks.c ${mode})
  add_test(NAME taskmod_${name} COMMAND ${runner})
  set_tests_properties(taskmod_${name} PROPERTIES TIMEOUT 120)
endforeach()

add_test(NAME taskmod_embed_torture COMMAND test_taskmod_embed)
set_tests_properties(taskmod_embed_torture PROPERTIES TIMEOUT 120 ENVIRONMENT LEV_TORTURE=1)
