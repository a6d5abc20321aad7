// Python binding for scale_add_kernel.cu: checks its inputs, then launches the kernel.
#include <torch/extension.h>

torch::Tensor scale_add_cuda(const torch::Tensor& x, const torch::Tensor& y, double alpha);

torch::Tensor scale_add(const torch::Tensor& x, const torch::Tensor& y, double alpha) {
  TORCH_CHECK(x.is_cuda() && y.is_cuda(), "scale_add: expected CUDA tensors");
  TORCH_CHECK(x.scalar_type() == torch::kFloat && y.scalar_type() == torch::kFloat, "scale_add: expected float32");
  TORCH_CHECK(x.sizes() == y.sizes(), "scale_add: x and y differ in shape");
  return scale_add_cuda(x.contiguous(), y.contiguous(), alpha);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("scale_add", &scale_add, "alpha * x + y (CUDA)");
}
