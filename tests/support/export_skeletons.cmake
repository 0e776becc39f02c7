# The skeletons the tests read (GPULAB_SKELETONS): never the working tree's labs/, which a student
# (or an instructor trying a lab) edits, but
#   - in a student repository, tests/skeletons.tar: labs/ as `gpulab release` made it;
#   - in the instructor repository, labs/ as committed (git archive HEAD);
#   - without git (a source tarball), labs/ as it is.
# cmake -DREPO=<repository> -DOUT=<folder> -P export_skeletons.cmake: OUT/labs holds them afterwards.
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")

if(EXISTS "${REPO}/tests/skeletons.tar")
  file(ARCHIVE_EXTRACT INPUT "${REPO}/tests/skeletons.tar" DESTINATION "${OUT}")
  return()
endif()

find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${REPO}" ls-tree -d --name-only HEAD labs
                  OUTPUT_VARIABLE tracked OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE not_a_repository
                  ERROR_QUIET)
endif()
if(GIT_FOUND AND NOT not_a_repository AND tracked STREQUAL "labs")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${REPO}" archive --format=tar -o "${OUT}/labs.tar" HEAD labs
                  RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "gpulab tests: git archive HEAD labs failed in ${REPO}")
  endif()
  file(ARCHIVE_EXTRACT INPUT "${OUT}/labs.tar" DESTINATION "${OUT}")
  file(REMOVE "${OUT}/labs.tar")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${REPO}" status --porcelain -- labs OUTPUT_VARIABLE changed)
  if(changed)
    message(NOTICE "gpulab tests: they read labs/ as committed (HEAD); the uncommitted changes in labs/ are not "
                   "tested until they are committed")
  endif()
else()
  file(COPY "${REPO}/labs" DESTINATION "${OUT}")
endif()
