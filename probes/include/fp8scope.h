/* fp8scope C API: explicit tensor statistics, step markers and scalars (docs/collector.md "Tensor statistics",
 * the C API).
 *
 * These functions are exported by libfp8scope.so, the collector. A program that does not want a link-time
 * dependency looks them up at run time (dlsym, or ctypes in the Python package); when the collector is not
 * loaded they simply are not there, and the caller does nothing.
 *
 * None of them blocks on the GPU. A probe enqueues a statistics kernel on `stream` behind the work already
 * there; the result travels back through pinned memory and the collector's writer thread stores it. Device
 * pointers must stay valid until the stream reaches the probe, exactly as for any other kernel argument.
 *
 * Every call returns FP8SCOPE_OK or a negative FP8SCOPE_E_* code; none of them aborts the caller. */
#ifndef FP8SCOPE_H
#define FP8SCOPE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FP8SCOPE_C_API_VERSION 1

/* Element types; the values are those of ENUM_FP8SCOPE_DTYPE in the trace. */
enum fp8scope_dtype {
    FP8SCOPE_DTYPE_F32 = 0,
    FP8SCOPE_DTYPE_BF16 = 1,
    FP8SCOPE_DTYPE_F16 = 2,
    FP8SCOPE_DTYPE_E4M3 = 3,
    FP8SCOPE_DTYPE_E5M2 = 4
};

/* The FP8 format a high-precision tensor is measured against (ENUM_FP8SCOPE_FP8_FORMAT). */
enum fp8scope_fp8_format { FP8SCOPE_FP8_NONE = 0, FP8SCOPE_FP8_E4M3 = 1, FP8SCOPE_FP8_E5M2 = 2 };

enum fp8scope_status {
    FP8SCOPE_OK = 0,
    FP8SCOPE_E_NOT_RECORDING = -1, /* the collector is loaded but this process is not being traced */
    FP8SCOPE_E_INVALID_ARGUMENT = -2,
    FP8SCOPE_E_SAMPLED_OUT = -3, /* skipped by sampling or the per-step cap (counted in FP8SCOPE_DROPPED) */
    FP8SCOPE_E_CUDA = -4, /* a CUDA call failed; the collector warned once */
    FP8SCOPE_LIBRARY_GEMM = 1 /* fp8scope_scaled_gemm: the GEMM ran through cuBLAS(Lt), whose interception has it */
};

/* How the probe's scale is given. The scale multiplies a high-precision value into FP8 range (x · scale is
 * what gets cast); scale_inv = 1 / scale dequantizes FP8 codes. Exactly one of the four fields is used:
 * FP8SCOPE_SCALE_NONE means 1. A device pointer is read by the statistics kernel, never by the host. */
enum fp8scope_scale_kind {
    FP8SCOPE_SCALE_NONE = 0,
    FP8SCOPE_SCALE_VALUE = 1, /* `scale` */
    FP8SCOPE_SCALE_INV_VALUE = 2, /* `scale` holds scale_inv */
    FP8SCOPE_SCALE_DEVICE = 3, /* `scale_device` points at a float32 scale */
    FP8SCOPE_SCALE_INV_DEVICE = 4 /* `scale_device` points at a float32 scale_inv */
};

struct fp8scope_probe_args {
    uint32_t struct_size; /* sizeof(struct fp8scope_probe_args), for later extension */
    const char* name; /* the tensor's name, e.g. "layers.3.mlp.fc2.input"; copied */
    const void* data; /* device pointer to numel contiguous elements */
    uint64_t numel;
    int32_t dtype; /* enum fp8scope_dtype */
    int32_t target_format; /* enum fp8scope_fp8_format; FP8 inputs use their own format */
    int32_t role; /* ENUM_FP8SCOPE_TENSOR_ROLE: 3 input, 4 weight, 5 output, 6 gradient, 7 other */
    int32_t scale_kind; /* enum fp8scope_scale_kind */
    float scale;
    const float* scale_device;
    void* stream; /* cudaStream_t / CUstream; NULL is the legacy default stream */
};

/* Statistics of one tensor, enqueued on args->stream. */
int fp8scope_probe(const struct fp8scope_probe_args* args);

/* How an operand of a scaled GEMM is scaled; the values are those of ENUM_FP8SCOPE_SCALE_RECIPE in the trace. */
enum fp8scope_scale_recipe {
    FP8SCOPE_RECIPE_NONE = -1, /* not scaled (a high-precision operand), or not known */
    FP8SCOPE_RECIPE_TENSORWISE = 0,
    FP8SCOPE_RECIPE_ROWWISE = 1,
    FP8SCOPE_RECIPE_BLOCKWISE_1X128 = 2,
    FP8SCOPE_RECIPE_BLOCKWISE_128X128 = 3,
    FP8SCOPE_RECIPE_MX_32 = 4,
    FP8SCOPE_RECIPE_NVFP4_16 = 5
};

/* One operand of a framework's scaled GEMM: a rows x cols matrix whose element (i, j) is at
 * data + (i * row_stride + j * col_stride) elements, and its scales. */
struct fp8scope_gemm_operand {
    const void* data;
    int32_t dtype; /* enum fp8scope_dtype; -1 for a type the statistics do not read (the operand is not measured) */
    int32_t recipe; /* enum fp8scope_scale_recipe */
    int64_t rows, cols, row_stride, col_stride;
    /* TENSORWISE: a device pointer to the one float32 that dequantizes the codes (scale_inv), or NULL. Other recipes:
     * their scale array, rows x cols with the strides below (elements), kept for per-block statistics. */
    const void* scale;
    int64_t scale_rows, scale_cols, scale_row_stride, scale_col_stride;
};

/* A GEMM D = A B (A rows x k, B k x cols, D rows x cols) that a framework has just enqueued on `stream`, reported on
 * the thread that enqueued it: PyTorch's torch._scaled_mm, through the dispatcher interception of the Python package
 * (docs/python.md). When the GEMM ran through cuBLAS or cuBLASLt on this thread, their interception has measured it
 * and this call returns FP8SCOPE_LIBRARY_GEMM; otherwise (a CUTLASS kernel) the collector samples and measures it as
 * it would a cuBLASLt GEMM, named in cuBLAS's terms (A and B swapped, "gemm NxMxK"). */
struct fp8scope_scaled_gemm_args {
    uint32_t struct_size; /* sizeof(struct fp8scope_scaled_gemm_args) */
    struct fp8scope_gemm_operand a, b, d;
    void* stream; /* cudaStream_t */
    /* 0: the GEMM above. G > 0: a grouped GEMM of G groups (PyTorch's torch._scaled_grouped_mm, a mixture of experts'
     * GEMMs), stacked: `a` holds every group's rows (rows x K), `b` every group's operand transposed (G*N rows of K),
     * `d` is rows x N. Which rows of `a` belong to which group is not read (PyTorch's offsets are on the device). A
     * caller built before this field passes a smaller struct_size, which means 0. */
    int32_t groups;
};
int fp8scope_scaled_gemm(const struct fp8scope_scaled_gemm_args* args);

/* 1 when the last GEMM that cuBLAS or cuBLASLt ran on this thread wrote `d`, whose interception therefore has it (the
 * answer is given once: the GEMM is forgotten); 0 otherwise. A framework asks it before describing a GEMM for
 * fp8scope_scaled_gemm, which it then need not build. One thread-local read, no CUDA call. */
int fp8scope_library_gemm(const void* d);

/* Marks the beginning of training step `step` (>= 0) on the calling thread. Steps drive the analyzer's step
 * boundaries and statistics sampling. */
int fp8scope_step(int64_t step);

/* Who saw a step end (FP8SCOPE_STEP_MARKER.source in the trace, ENUM_FP8SCOPE_STEP_MARKER_SOURCE; 0 is the job's own
 * fp8scope_step). */
enum fp8scope_step_end_source {
    FP8SCOPE_STEP_END_OPTIMIZER = 1, /* an optimizer step ended */
    FP8SCOPE_STEP_END_OPTIMIZER_SKIPPED = 2 /* a loss scaler (torch.amp.GradScaler) skipped the optimizer step */
};

/* Marks, on the calling thread, the end of optimizer step `step` (>= 0: the count of optimizer steps before it), as a
 * framework hook sees it in a job that marks no steps itself: the Python package's optimizer hook (docs/python.md,
 * "Steps and loss without code"). `source` is an enum fp8scope_step_end_source; any other value, or a negative step,
 * returns FP8SCOPE_E_INVALID_ARGUMENT. The analyzer takes the job's own markers and NVTX step ranges first. While the
 * job has never called fp8scope_step() in this process and no NVTX step range came first, step `step` + 1 begins here
 * for statistics sampling and capture windows (docs/collector.md). Absent from older collectors; callers look it up
 * and do nothing without it. */
int fp8scope_step_end(int64_t step, int32_t source);

/* A host scalar, e.g. the learning rate. */
int fp8scope_scalar(const char* name, double value);

/* A scalar read from device memory when `stream` reaches this point, with no host-device sync: the loss
 * without `.item()`. `dtype` is FP8SCOPE_DTYPE_F32, _BF16 or _F16. */
int fp8scope_scalar_device(const char* name, const void* device_value, int32_t dtype, void* stream);

/* FP8SCOPE_C_API_VERSION of the loaded collector. */
int fp8scope_api_version(void);

/* 1 when a probe made now on the calling thread would be measured as far as the capture windows
 * (`fp8scope record --capture-*`) and the step sampling (FP8SCOPE_STATS_EVERY) decide; 0 when it would be
 * sampled out, or when nothing records. No CUDA call: instrumentation asks it before preparing probes, so that
 * outside windows and sampled steps it costs nothing. Absent from older collectors; callers look it up and take its
 * absence as 1. */
int fp8scope_stats_wanted(void);

/* The step boundary a caller of fp8scope_stats_wanted_in_step() stands at: just after its fp8scope_step(), or just
 * after its fp8scope_step_end(). */
enum fp8scope_step_boundary { FP8SCOPE_BOUNDARY_MARKER = 0, FP8SCOPE_BOUNDARY_OPTIMIZER = 1 };

/* Asked just after a step began by `boundary`'s call: 0 when tensor statistics surely cannot be wanted before the
 * next such call (that call's kind begins the steps, the capture windows open and close only on steps, and this step
 * is outside them or not sampled); 1 when they may be (or when that cannot be told: NVTX step ranges, time or
 * cudaProfilerApi windows, nothing recording); FP8SCOPE_E_INVALID_ARGUMENT for another `boundary`. No CUDA call. The
 * Python package removes its torch._scaled_mm wrapper while this is 0 (docs/python.md, "Scaled GEMMs"). Absent
 * from older collectors; callers look it up and take its absence as 1. */
int fp8scope_stats_wanted_in_step(int32_t boundary);

/* 1 while the collector records activities (kernels, API calls, NVTX ranges): a session runs and, with
 * `fp8scope record --capture-*`, a capture window is open; 0 otherwise. One atomic load, no CUDA call:
 * instrumentation that only names work for the trace (fp8scope.torch.annotate's module hooks) asks it to stay out
 * of the job between windows. Absent from older collectors; callers look it up and take its absence as 1. */
int fp8scope_recording(void);

#ifdef __cplusplus
}
#endif

#endif /* FP8SCOPE_H */
