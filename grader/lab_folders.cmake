# The labs of a course: every lab folder labs/NN-<name>/ whose grader/ holds a driver,
# <name>_lab.cpp: the lab's own grader code lives with its skeleton. Sets, in the caller's scope,
# GPULAB_LABS (the names, sorted) and GPULAB_LAB_DIR_<name> (the lab's grader/ folder); stops,
# naming the driver and its folder, when a driver is not named after its lab folder.
# Also run as a script by tests/make/lab_folders_test.sh (cmake -DROOT=... -P lab_folders.cmake).
function(gpulab_find_labs root)
  if(CMAKE_SCRIPT_MODE_FILE)
    file(GLOB drivers "${root}/labs/*/grader/*_lab.cpp")
  else()
    file(GLOB drivers CONFIGURE_DEPENDS "${root}/labs/*/grader/*_lab.cpp")
  endif()
  set(labs "")
  foreach(driver IN LISTS drivers)
    get_filename_component(folder "${driver}" DIRECTORY)
    get_filename_component(lab_folder "${folder}" DIRECTORY)
    get_filename_component(lab_folder "${lab_folder}" NAME)
    get_filename_component(lab "${driver}" NAME)
    string(REGEX REPLACE "_lab\\.cpp$" "" lab "${lab}")
    if(NOT lab_folder MATCHES "^[0-9]+-${lab}$")
      message(FATAL_ERROR "gpulab: ${driver}: a lab's driver is named after its folder (labs/NN-<name>/grader/"
                          "<name>_lab.cpp), and ${lab_folder} is not NN-${lab}: rename the driver or the folder")
    endif()
    list(APPEND labs ${lab})
    set(GPULAB_LAB_DIR_${lab} "${folder}" PARENT_SCOPE)
  endforeach()
  list(SORT labs)
  set(GPULAB_LABS "${labs}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  gpulab_find_labs("${ROOT}")
  message(STATUS "gpulab labs: ${GPULAB_LABS}")
endif()
