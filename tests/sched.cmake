# The scheduler's extra tests, included by extra.cmake: a whole program run
# as one virtual thread (prog_count, in the shape `levpp --main-task` gives
# it; prog_count_other is the same code under another module identity) and
# the driver that checkpoints it to a file, kills it, resumes it in a new
# process and feeds it missing, damaged and foreign images.
foreach(prog prog_count prog_count_other)
  add_executable(${prog} ${CMAKE_CURRENT_LIST_DIR}/prog_count.c)
  target_link_libraries(${prog} PRIVATE lev_runtime)
endforeach()
target_compile_definitions(prog_count_other PRIVATE PROG_COUNT_OTHER)

add_test(NAME resume
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/resume_test.sh
    $<TARGET_FILE:prog_count>
    $<TARGET_FILE:prog_count_other>
    ${CMAKE_CURRENT_BINARY_DIR}/resume_work)
set_tests_properties(resume PROPERTIES TIMEOUT 300)
