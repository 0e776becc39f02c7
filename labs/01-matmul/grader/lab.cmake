# Lab matmul's build settings, read by grader/CMakeLists.txt. cuBLAS: the vendor SGEMM its speed is
# compared with (baselines_cuda.cu).
if(GPULAB_WITH_CUDA)
  set(lab_extra_cuda CUDA::cublas)
endif()
