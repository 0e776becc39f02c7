# The OpenACC hello world that the docs' "Other platforms" chapter lists is real code: it builds with
# GCC's OpenACC support (run on the host without an offload target) and prints "World!".
# Compiled and linked at configure time: a GCC built with offload targets it cannot run (the GPU
# machine's lto-wrapper fails) must skip the test, not break the build.
if(GPULAB_INSTRUCTOR_REPOSITORY)  # the code is in solutions/
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS -fopenacc)
  check_cxx_source_compiles("int main() { int a[4] = {0};
#pragma acc parallel loop copy(a)
for (int i = 0; i < 4; ++i) a[i] = i;
return a[3] == 3 ? 0 : 1; }" GPULAB_HAVE_OPENACC)
  unset(CMAKE_REQUIRED_FLAGS)
endif()
if(GPULAB_HAVE_OPENACC AND GPULAB_INSTRUCTOR_REPOSITORY)
  add_executable(gpulab_hello_openacc "${PROJECT_SOURCE_DIR}/solutions/00-hello/other-platforms/hello_openacc.cpp")
  target_compile_options(gpulab_hello_openacc PRIVATE -fopenacc)
  target_link_options(gpulab_hello_openacc PRIVATE -fopenacc)
  add_test(NAME "the docs' OpenACC hello world builds and prints World!" COMMAND gpulab_hello_openacc)
  set_tests_properties("the docs' OpenACC hello world builds and prints World!" PROPERTIES PASS_REGULAR_EXPRESSION "^World!")
endif()
