"""Launches on a GPU, on torch tensors (and through __cuda_array_interface__ and DLPack), compared
with torch. Skipped where torch or a CUDA device is missing."""
import os
import unittest

import tlc
from kernels import EXAMPLES, SCALE

try:
    import torch
    HAVE_GPU = torch.cuda.is_available()
except ImportError:
    HAVE_GPU = False


class CudaArrayInterfaceOnly:
    def __init__(self, t):
        self.__cuda_array_interface__ = t.__cuda_array_interface__


class DlpackOnly:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__()

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


@unittest.skipUnless(HAVE_GPU, "needs torch with a CUDA device")
class GpuTest(unittest.TestCase):
    def test_scale_on_torch_tensors(self):
        k = tlc.compile(SCALE, defines={"N": 256})
        x = torch.randn(256, device="cuda")
        y = torch.zeros_like(x)
        k(x, y, 3.0)
        torch.testing.assert_close(y, x * 3.0)

    def test_scale_through_cuda_array_interface_and_dlpack(self):
        k = tlc.compile(SCALE, defines={"N": 256})
        x = torch.randn(256, device="cuda")
        for wrap in (CudaArrayInterfaceOnly, DlpackOnly):
            y = torch.zeros_like(x)
            k(wrap(x), wrap(y), -0.5)
            torch.cuda.synchronize()
            torch.testing.assert_close(y, x * -0.5, msg=wrap.__name__)

    def test_rmsnorm_on_a_side_stream(self):
        k = tlc.compile(os.path.join(EXAMPLES, "rmsnorm.tl"), kernel="rmsnorm",
                        defines={"C": 4096, "BLOCK_M": 1, "threads": 256})
        x = torch.randn(1000, 4096, dtype=torch.float16, device="cuda")
        w = torch.randn(4096, dtype=torch.float16, device="cuda")
        y = torch.empty_like(x)
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            k(x, w, y)  # on s, torch's current stream here
        s.synchronize()
        ref = torch.nn.functional.rms_norm(x.float(), (4096,), w.float(), eps=1e-5).half()
        torch.testing.assert_close(y, ref, rtol=1e-2, atol=1e-2)

    def test_wrong_arguments_are_launch_errors(self):
        k = tlc.compile(SCALE, defines={"N": 256})
        x = torch.randn(128, device="cuda")
        with self.assertRaisesRegex(tlc.LaunchError, "X"):
            k(x, x, 1.0)
        with self.assertRaisesRegex(tlc.LaunchError, "float16|float32"):
            k(x.half(), x.half(), 1.0)


if __name__ == "__main__":
    unittest.main()
