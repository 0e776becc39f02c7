# Lab mandelbrot's build settings, read by grader/CMakeLists.txt. The CPU reference must compute
# every count with separately rounded float operations, whatever the host's FMA: no contraction.
set_source_files_properties("${CMAKE_CURRENT_LIST_DIR}/mandelbrot_reference.cpp" PROPERTIES COMPILE_OPTIONS
                                                                                           "-ffp-contract=off")
