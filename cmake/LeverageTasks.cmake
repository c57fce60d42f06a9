# LeverageTasks.cmake - leverage_add_tasks(): turns the task sources of a
# target into a task module that the target carries. Included by the
# Leverage tree itself and by the installed package (find_package).
#
#   leverage_add_tasks(<target> SOURCES src.c...)
#
# runs levpp once over all the listed sources (the call graph spans them
# all) with the target's include directories and compile definitions,
# builds the generated code into a shared library <target>_tasks linked
# against libleverage (a shared object: glibc cannot dlopen an executable),
# and gives <target> the compile definition LEV_TASK_MODULE_PATH="<path of
# the module>" and a build dependency on it. The module target's name is
# also kept in the target property LEVERAGE_TASK_MODULE.
#
# In the Leverage tree it uses the targets levpp and leverage; elsewhere
# those of the installed package, Leverage::levpp and Leverage::leverage.
include_guard(GLOBAL)

# leverage_add_tasks(<target> SOURCES src.c...): see above. Stops the
# configuration with an error if the target, the sources or levpp are
# missing.
function(leverage_add_tasks target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "leverage_add_tasks: unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "leverage_add_tasks: no target named ${target}")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "leverage_add_tasks(${target}): no SOURCES")
  endif()

  # The Leverage tree, or the installed package.
  if(TARGET levpp AND TARGET leverage)
    set(levpp levpp)
    set(lib leverage)
  elseif(TARGET Leverage::levpp AND TARGET Leverage::leverage)
    set(levpp Leverage::levpp)
    set(lib Leverage::leverage)
  else()
    message(FATAL_ERROR "leverage_add_tasks(${target}): levpp is not available "
      "(neither the target levpp of the Leverage tree nor Leverage::levpp of its package)")
  endif()

  # Inputs and outputs: one input gives one file, several a directory with
  # NAME.lev.c per input, so their names must differ.
  set(module ${target}_tasks)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${module})
  set(inputs "")
  set(outputs "")
  set(names "")
  set(source_dirs "")
  foreach(src IN LISTS arg_SOURCES)
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE)
    cmake_path(GET src STEM name)
    cmake_path(GET src PARENT_PATH dir)
    if(name IN_LIST names)
      message(FATAL_ERROR "leverage_add_tasks(${target}): two sources are named ${name}.c; "
        "levpp writes one ${name}.lev.c per source")
    endif()
    list(APPEND names ${name})
    list(APPEND inputs ${src})
    list(APPEND outputs ${out_dir}/${name}.lev.c)
    list(APPEND source_dirs ${dir})
  endforeach()
  list(REMOVE_DUPLICATES source_dirs)
  list(LENGTH inputs ninputs)
  if(ninputs EQUAL 1)
    set(out_arg ${outputs})
  else()
    set(out_arg ${out_dir})
  endif()

  # The target's include directories and definitions, as levpp passes them
  # to clang; the module path is the one definition that is not the
  # sources'. Empty list elements are dropped so that no bare -I is left.
  set(incs "$<FILTER:$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>,EXCLUDE,^$>")
  set(lev_incs "$<FILTER:$<TARGET_PROPERTY:${lib},INTERFACE_INCLUDE_DIRECTORIES>,EXCLUDE,^$>")
  set(defs "$<FILTER:$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>,EXCLUDE,^(LEV_TASK_MODULE_PATH=|$)>")
  set(clang_flags
    "$<$<BOOL:${incs}>:-I$<JOIN:${incs},$<SEMICOLON>-I>>"
    "$<$<BOOL:${lev_incs}>:-I$<JOIN:${lev_incs},$<SEMICOLON>-I>>"
    "$<$<BOOL:${defs}>:-D$<JOIN:${defs},$<SEMICOLON>-D>>")

  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${levpp} ${inputs} -o ${out_arg} -- ${clang_flags}
    DEPENDS ${inputs} ${levpp}
    COMMENT "levpp: task sources of ${target}"
    COMMAND_EXPAND_LISTS
    VERBATIM)

  # The module: the generated code, with the sources' own directories and
  # flags so that their headers are found from where the output lives.
  add_library(${module} SHARED ${outputs})
  target_include_directories(${module} PRIVATE ${source_dirs} ${incs})
  target_compile_definitions(${module} PRIVATE ${defs})
  target_link_libraries(${module} PRIVATE ${lib})

  add_dependencies(${target} ${module})
  target_compile_definitions(${target} PRIVATE
    "LEV_TASK_MODULE_PATH=\"$<TARGET_FILE:${module}>\"")
  set_property(TARGET ${target} PROPERTY LEVERAGE_TASK_MODULE ${module})
endfunction()
