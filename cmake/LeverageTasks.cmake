# LeverageTasks.cmake - leverage_add_tasks(): turns the task sources of a
# target into a task module that the target carries. Included by the
# Leverage tree itself and by the installed package (find_package).
#
#   leverage_add_tasks(<target> SOURCES src.c... [EMBED | PATH])
#
# runs levpp once over all the listed sources (the call graph spans them
# all) with the target's include directories and compile definitions,
# builds the generated code into a shared library <target>_tasks linked
# against libleverage (a shared object: glibc cannot dlopen an executable),
# and makes <target> carry it, in an ELF note of its own image that the
# runtime finds (lev_task_module_load, and the client when it ships the
# module to its peers):
#
#   EMBED  (the default) the module's bytes: the program needs no other
#          file and may be copied or installed anywhere. Its carrying
#          source is rebuilt, and the program relinked, whenever the module
#          changes.
#   PATH   the path of the module file as built: the program reads the
#          module from there when it needs it, so the file must stay.
#
# Either way <target> gets the compile definition
# LEV_TASK_MODULE_PATH="<path of the module>" and a build dependency on
# it, and the module target's name is kept in the target property
# LEVERAGE_TASK_MODULE. A program linked with the static libleverage must
# export its symbols (ENABLE_EXPORTS) for a module it loads to reach its
# runtime.
#
# In the Leverage tree it uses the targets levpp and leverage; elsewhere
# those of the installed package, Leverage::levpp and Leverage::leverage.
include_guard(GLOBAL)

# leverage_add_tasks(<target> SOURCES src.c... [EMBED | PATH]): see above.
# Stops the configuration with an error if the target, the sources or
# levpp are missing, or both EMBED and PATH are given.
function(leverage_add_tasks target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "EMBED;PATH" "" "SOURCES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "leverage_add_tasks: unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(arg_EMBED AND arg_PATH)
    message(FATAL_ERROR "leverage_add_tasks(${target}): EMBED and PATH exclude each other")
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
  # NAME.lev.c per input; an input whose base name another has too is
  # named with as many of its directories as tell them apart
  # (dec/static_init.lev.c and enc/static_init.lev.c), as levpp names them
  # (preproc/levpp.c, pp_name_outputs).
  set(module ${target}_tasks)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${module})
  set(inputs "")
  foreach(src IN LISTS arg_SOURCES)
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE)
    list(APPEND inputs ${src})
  endforeach()
  set(distinct ${inputs})
  list(REMOVE_DUPLICATES distinct)
  if(NOT distinct STREQUAL inputs)
    message(FATAL_ERROR "leverage_add_tasks(${target}): a source is given twice: ${inputs}")
  endif()
  list(LENGTH inputs ninputs)
  math(EXPR last "${ninputs} - 1")
  set(depths "")
  foreach(i RANGE ${last})
    list(APPEND depths 1)
  endforeach()
  set(changed TRUE)
  while(changed)
    set(changed FALSE)
    set(names "")
    foreach(i RANGE ${last})
      list(GET inputs ${i} src)
      list(GET depths ${i} depth)
      cmake_path(GET src STEM LAST_ONLY name)
      cmake_path(GET src PARENT_PATH dir)
      if(depth GREATER 1)
        foreach(d RANGE 2 ${depth})
          cmake_path(GET dir FILENAME part)
          cmake_path(GET dir PARENT_PATH dir)
          set(name "${part}/${name}")
        endforeach()
      endif()
      list(APPEND names ${name})
    endforeach()
    set(new_depths "")
    foreach(i RANGE ${last})
      list(GET names ${i} name)
      list(GET depths ${i} depth)
      set(same 0)
      foreach(name_j IN LISTS names)
        if(name_j STREQUAL name)
          math(EXPR same "${same} + 1")
        endif()
      endforeach()
      if(same GREATER 1)
        math(EXPR depth "${depth} + 1")
        set(changed TRUE)
      endif()
      list(APPEND new_depths ${depth})
    endforeach()
    set(depths ${new_depths})
  endwhile()
  set(outputs "")
  foreach(name IN LISTS names)
    list(APPEND outputs ${out_dir}/${name}.lev.c)
  endforeach()
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
    COMMAND ${levpp} --cc ${CMAKE_C_COMPILER} ${inputs} -o ${out_arg} -- ${clang_flags}
    DEPENDS ${inputs} ${levpp}
    COMMENT "levpp: task sources of ${target}"
    COMMAND_EXPAND_LISTS
    VERBATIM)

  # The module: the generated code, with the target's flags. A header the
  # compiler finds beside a source is named in the output by its full path
  # (levpp), so the output finds it from where it lives.
  add_library(${module} SHARED ${outputs})
  target_include_directories(${module} PRIVATE ${incs})
  target_compile_definitions(${module} PRIVATE ${defs})
  target_link_libraries(${module} PRIVATE ${lib})

  add_dependencies(${target} ${module})
  target_compile_definitions(${target} PRIVATE
    "LEV_TASK_MODULE_PATH=\"$<TARGET_FILE:${module}>\"")
  set_property(TARGET ${target} PROPERTY LEVERAGE_TASK_MODULE ${module})

  # The carrying source: one line of lev_abi.h that puts the module's
  # bytes (or its path) in a note of the target. The assembler reads the
  # module (.incbin) unseen by dependency scanning, so in EMBED mode the
  # source is copied anew whenever the module is relinked, which makes its
  # object rebuild.
  set(carry ${CMAKE_CURRENT_BINARY_DIR}/${module}_carry.c)
  if(arg_PATH)
    set(carry_macro LEV_TASK_MODULE_AT)
  else()
    set(carry_macro LEV_TASK_MODULE_EMBED)
  endif()
  set(carry_text "/* Generated by leverage_add_tasks(${target}): the task module it carries. */
#include <lev_abi.h>
${carry_macro}(LEV_TASK_MODULE_PATH);
")
  if(arg_PATH)
    file(CONFIGURE OUTPUT ${carry} CONTENT "${carry_text}")
  else()
    file(CONFIGURE OUTPUT ${carry}.in CONTENT "${carry_text}")
    add_custom_command(
      OUTPUT ${carry}
      COMMAND ${CMAKE_COMMAND} -E copy ${carry}.in ${carry}
      COMMAND ${CMAKE_COMMAND} -E touch ${carry}
      DEPENDS ${carry}.in ${module}
      COMMENT "Embedding the task module of ${target}"
      VERBATIM)
  endif()
  target_sources(${target} PRIVATE ${carry})
  set_source_files_properties(${carry} PROPERTIES
    INCLUDE_DIRECTORIES "$<TARGET_PROPERTY:${lib},INTERFACE_INCLUDE_DIRECTORIES>")
endfunction()
