# The skeletons the tests read (GPULAB_SKELETONS): never the working tree's labs/, which a student
# (or an instructor trying a lab) edits, but
#   - in a student repository, tests/skeletons.tar: labs/ as `gpulab release` made it;
#   - in the instructor repository, labs/ as committed (git archive HEAD);
#   - without git (a source tarball), labs/ as it is.
# cmake -DREPO=<repository> -DOUT=<folder> -P export_skeletons.cmake: OUT/labs holds them afterwards.
# Unchanged skeletons are left as they are (OUT/.archive-sha256), so a build while tests run does not
# pull them from under the tests.

# Replaces OUT/labs with the archive's labs/, unless OUT holds that archive already.
function(extract_once archive)
  file(SHA256 "${archive}" digest)
  if(EXISTS "${OUT}/.archive-sha256" AND EXISTS "${OUT}/labs")
    file(READ "${OUT}/.archive-sha256" previous)
    if(previous STREQUAL digest)
      return()
    endif()
  endif()
  file(REMOVE_RECURSE "${OUT}/labs")
  file(ARCHIVE_EXTRACT INPUT "${archive}" DESTINATION "${OUT}")
  file(WRITE "${OUT}/.archive-sha256" "${digest}")
endfunction()

file(MAKE_DIRECTORY "${OUT}")
if(EXISTS "${REPO}/tests/skeletons.tar")
  extract_once("${REPO}/tests/skeletons.tar")
  return()
endif()

find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${REPO}" ls-tree -d --name-only HEAD labs
                  OUTPUT_VARIABLE tracked OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE not_a_repository
                  ERROR_QUIET)
endif()
if(GIT_FOUND AND NOT not_a_repository AND tracked STREQUAL "labs")
  # git archive stamps HEAD's commit time into the tar, so its hash changes with the commit.
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${REPO}" archive --format=tar -o "${OUT}/labs.tar" HEAD labs
                  RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "gpulab tests: git archive HEAD labs failed in ${REPO}")
  endif()
  extract_once("${OUT}/labs.tar")
  file(REMOVE "${OUT}/labs.tar")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${REPO}" status --porcelain -- labs OUTPUT_VARIABLE changed)
  if(changed)
    message(NOTICE "gpulab tests: they read labs/ as committed (HEAD); the uncommitted changes in labs/ are not "
                   "tested until they are committed")
  endif()
else()
  file(REMOVE_RECURSE "${OUT}/labs" "${OUT}/.archive-sha256")
  file(COPY "${REPO}/labs" DESTINATION "${OUT}")
endif()
