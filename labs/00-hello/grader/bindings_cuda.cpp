// Calls the student's CUDA function (labs/00-hello/hello.cu) with host memory.
#include "hello_lab.hpp"
#include "lab_contract.hpp"  // the functions lab.toml's [signatures] and tasks declare
#include "lab_driver.hpp"

namespace gpulab::labs {

HelloLaunch bind_hello(Device&, const std::string& function) {
  return find_function(contract::hello_functions(), function);
}

}  // namespace gpulab::labs
