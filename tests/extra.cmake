# Extra test definitions, included by tests/CMakeLists.txt.
#
# The runtime runners are single-source cmocka programs; those that run
# virtual threads also need the hand-written task modules of hw/ (each
# written as levpp output would look) and the drivers that run them.

set(LEV_HW_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/hw/hw_drive.c
  ${CMAKE_CURRENT_LIST_DIR}/hw/hw_fib.c
  ${CMAKE_CURRENT_LIST_DIR}/hw/hw_locals.c
  ${CMAKE_CURRENT_LIST_DIR}/hw/hw_list.c
  ${CMAKE_CURRENT_LIST_DIR}/hw/hw_tree.c
  ${CMAKE_CURRENT_LIST_DIR}/hw/hw_hash.c
  ${CMAKE_CURRENT_LIST_DIR}/hw/hw_fnptr.c
  ${CMAKE_CURRENT_LIST_DIR}/hw/hw_statics.c
  ${CMAKE_CURRENT_LIST_DIR}/hw/hw_layout.c)

# lev_hw_sources(TARGET): adds the hand-written modules to a test runner.
function(lev_hw_sources target)
  if(TARGET ${target})
    target_sources(${target} PRIVATE ${LEV_HW_SOURCES})
    target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  endif()
endfunction()

foreach(runner test_module test_heap test_image test_frames test_memory)
  lev_hw_sources(${runner})
endforeach()

# The scheduler's test definitions, once they exist.
include(${CMAKE_CURRENT_LIST_DIR}/sched.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/levpp/levpp.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/levpp/tasks_run.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/levpp/ttsp.cmake OPTIONAL)
include(${CMAKE_CURRENT_LIST_DIR}/taskmod/taskmod.cmake OPTIONAL)
