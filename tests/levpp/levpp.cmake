# levpp's tests, included by tests/extra.cmake; registered only once the
# levpp target exists, so the suite stays green without it.
#
#   levpp_corpus_NAME   a corpus program built natively and through levpp
#                       --main-task, compared plainly, under LEV_TORTURE=1
#                       and 7, and (where the program asks) across a
#                       SIGKILL and a resume from its checkpoint file
#   levpp_pending_NAME  a program with calls levpp may still refuse: a
#                       clean refusal, or else the same checks
#   levpp_diag_NAME     the golden diagnostic diag/NAME.expected
#   levpp_diag_pending  those of diag/pending/, reported, never failed
#   levpp_compdb        -p BUILD_DIR with a compile_commands.json
#   levpp_line          compiler errors in levpp's output point at the
#                       user's file and lines (#line)
#   levpp_add_tasks     leverage_add_tasks() builds a task module that the
#                       application finds through LEV_TASK_MODULE_PATH
#                       (built by the test levpp_add_tasks_build)
#   levpp_gen_NAME      a program written at build time by gen_unbraced
#                       (statements standing unbraced, each with every form
#                       of expression holding a checkpointable call), the
#                       same checks
if(NOT TARGET levpp)
  return()
endif()

set(LEVPP_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})
set(LEVPP_TEST_WORK ${CMAKE_CURRENT_BINARY_DIR}/levpp_work)

# The driver's options: levpp, the compiler, libleverage and the directory
# of its installed headers, and the flags every program needs (sanitizers).
list(JOIN LEV_SANITIZE_FLAGS " " LEVPP_TEST_FLAGS)
set(LEVPP_TEST_OPTIONS
  --levpp $<TARGET_FILE:levpp>
  --cc ${CMAKE_C_COMPILER}
  --lib $<TARGET_FILE:leverage>
  --include "$<JOIN:$<TARGET_PROPERTY:leverage,INTERFACE_INCLUDE_DIRECTORIES>,:>"
  "--flags=${LEVPP_TEST_FLAGS}")

# levpp_corpus_test(TEST ITEM...): one ctest running the driver on ITEMs.
function(levpp_corpus_test name)
  add_test(NAME ${name}
    COMMAND bash ${LEVPP_TEST_DIR}/run_corpus.sh ${LEVPP_TEST_OPTIONS}
      --work ${LEVPP_TEST_WORK}/${name} ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300)
endfunction()

# Programs: corpus/NAME.c, or a directory corpus/NAME/ of several files.
file(GLOB entries RELATIVE ${LEVPP_TEST_DIR}/corpus CONFIGURE_DEPENDS
  ${LEVPP_TEST_DIR}/corpus/*)
foreach(entry IN LISTS entries)
  if(entry STREQUAL "pending")
    continue()
  elseif(IS_DIRECTORY ${LEVPP_TEST_DIR}/corpus/${entry})
    levpp_corpus_test(levpp_corpus_${entry} corpus/${entry})
  elseif(entry MATCHES "^(.*)\\.c$")
    levpp_corpus_test(levpp_corpus_${CMAKE_MATCH_1} corpus/${entry})
  endif()
endforeach()

file(GLOB pending RELATIVE ${LEVPP_TEST_DIR}/corpus/pending CONFIGURE_DEPENDS
  ${LEVPP_TEST_DIR}/corpus/pending/*.c)
foreach(entry IN LISTS pending)
  string(REGEX REPLACE "\\.c$" "" name ${entry})
  levpp_corpus_test(levpp_pending_${name} corpus/pending/${entry})
endforeach()

# One test per golden diagnostic: each is a levpp run of its own, so no
# time limit covers more than one.
file(GLOB diags RELATIVE ${LEVPP_TEST_DIR}/diag CONFIGURE_DEPENDS ${LEVPP_TEST_DIR}/diag/*.expected)
foreach(entry IN LISTS diags)
  string(REGEX REPLACE "\\.expected$" "" name ${entry})
  levpp_corpus_test(levpp_diag_${name} diag/${entry})
endforeach()

file(GLOB diags RELATIVE ${LEVPP_TEST_DIR} CONFIGURE_DEPENDS
  ${LEVPP_TEST_DIR}/diag/pending/*.expected)
if(diags)
  list(SORT diags)
  levpp_corpus_test(levpp_diag_pending ${diags})
endif()

foreach(check compdb line)
  add_test(NAME levpp_${check}
    COMMAND bash ${LEVPP_TEST_DIR}/run_checks.sh ${LEVPP_TEST_OPTIONS}
      --work ${LEVPP_TEST_WORK}/levpp_${check} ${check})
  set_tests_properties(levpp_${check} PROPERTIES TIMEOUT 300)
endforeach()

# Generated programs, written into the build tree by gen_unbraced (one per
# group of positions: the names it writes). Under the sanitizers, a third
# of the combinations (every position and every form still appear), since
# compiling them all there takes minutes.
add_executable(levpp_gen_unbraced ${LEVPP_TEST_DIR}/gen_unbraced.c)
set(gen_sample)
if(LEV_SANITIZE)
  set(gen_sample --sample 3)
endif()
set(gen_dir ${CMAKE_CURRENT_BINARY_DIR}/levpp_gen)
set(gen_programs)
foreach(group simple loops nested)
  list(APPEND gen_programs ${gen_dir}/unbraced_${group}.c)
endforeach()
add_custom_command(OUTPUT ${gen_programs}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${gen_dir}
  COMMAND levpp_gen_unbraced ${gen_sample} ${gen_dir}
  DEPENDS levpp_gen_unbraced
  COMMENT "Writing the generated levpp test programs")
add_custom_target(levpp_gen_programs ALL DEPENDS ${gen_programs})
foreach(program IN LISTS gen_programs)
  get_filename_component(name ${program} NAME_WE)
  levpp_corpus_test(levpp_gen_${name} ${program})
endforeach()

# leverage_add_tasks: two task sources whose header is found only through
# the application's include directories, a definition they need from the
# application, and an application that loads the module it is given. Not
# part of `all`: building it is the first test, so that a levpp that
# cannot handle these sources fails a test, not the build.
if(COMMAND leverage_add_tasks)
  add_executable(levpp_tasks_app EXCLUDE_FROM_ALL ${LEVPP_TEST_DIR}/tasks/app.c)
  target_include_directories(levpp_tasks_app PRIVATE ${LEVPP_TEST_DIR}/tasks/include)
  target_compile_definitions(levpp_tasks_app PRIVATE TASKS_PROBE_BASE=1000)
  target_link_libraries(levpp_tasks_app PRIVATE leverage ${CMAKE_DL_LIBS})
  leverage_add_tasks(levpp_tasks_app SOURCES
    ${LEVPP_TEST_DIR}/tasks/tasks_sum.c
    ${LEVPP_TEST_DIR}/tasks/tasks_probe.c)
  get_target_property(module levpp_tasks_app LEVERAGE_TASK_MODULE)
  set_target_properties(${module} PROPERTIES EXCLUDE_FROM_ALL ON)

  add_test(NAME levpp_add_tasks_build
    COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --config $<CONFIG>
      --target levpp_tasks_app)
  add_test(NAME levpp_add_tasks COMMAND levpp_tasks_app)
  set_tests_properties(levpp_add_tasks_build PROPERTIES
    TIMEOUT 300 FIXTURES_SETUP levpp_tasks)
  set_tests_properties(levpp_add_tasks PROPERTIES
    TIMEOUT 60 FIXTURES_REQUIRED levpp_tasks)
endif()
