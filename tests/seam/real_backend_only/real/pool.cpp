#include <thread>
#include <cuda_runtime.h>
thread_local int n = 0;
