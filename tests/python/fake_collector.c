/* A stand-in for libfp8scope.so's C API (probes/include/fp8scope.h), for testing the Python package without a GPU.
 * Each call appends one line to the file named by FAKE_FP8SCOPE_LOG: the function and its arguments, so a test
 * sees exactly what arrived through ctypes. FAKE_FP8SCOPE_API_VERSION overrides the version it reports and
 * FAKE_FP8SCOPE_STATUS the status every other call returns. It has no constructor: being mapped changes nothing. */
#include "fp8scope.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void log_line(const char* format, ...)
{
    const char* path = getenv("FAKE_FP8SCOPE_LOG");
    if (path == NULL)
        return;
    FILE* file = fopen(path, "a");
    if (file == NULL)
        return;
    va_list args;
    va_start(args, format);
    vfprintf(file, format, args);
    va_end(args);
    fputc('\n', file);
    fclose(file);
}

static int env_int(const char* name, int fallback)
{
    const char* value = getenv(name);
    return value != NULL ? atoi(value) : fallback;
}

/* Pointers as 0x-prefixed hex, NULL as 0x0, whatever printf's %p would do. */
static unsigned long long address(const void* pointer)
{
    return (unsigned long long)(uintptr_t)pointer;
}

/* Not logged (instrumentation asks it before every probe and module); FAKE_FP8SCOPE_STATS_WANTED=0 answers 0. */
int fp8scope_stats_wanted(void)
{
    return env_int("FAKE_FP8SCOPE_STATS_WANTED", 1);
}

/* Not logged either; FAKE_FP8SCOPE_RECORDING=0 answers 0 (read at every call, so a scenario can open and close a
 * "window" by changing it). */
int fp8scope_recording(void)
{
    return env_int("FAKE_FP8SCOPE_RECORDING", 1);
}

/* Not logged either; FAKE_FP8SCOPE_WANTED_IN_STEP=0 answers 0, also read at every call. A bad boundary is refused
 * as the collector refuses it. */
int fp8scope_stats_wanted_in_step(int32_t boundary)
{
    if (boundary != FP8SCOPE_BOUNDARY_MARKER && boundary != FP8SCOPE_BOUNDARY_OPTIMIZER)
        return FP8SCOPE_E_INVALID_ARGUMENT;
    return env_int("FAKE_FP8SCOPE_WANTED_IN_STEP", 1);
}

int fp8scope_api_version(void)
{
    const int version = env_int("FAKE_FP8SCOPE_API_VERSION", FP8SCOPE_C_API_VERSION);
    log_line("api_version %d", version);
    return version;
}

int fp8scope_probe(const struct fp8scope_probe_args* args)
{
    if (args == NULL) {
        log_line("probe NULL");
        return FP8SCOPE_E_INVALID_ARGUMENT;
    }
    log_line("probe name=%s data=0x%llx numel=%llu dtype=%d target=%d role=%d scale_kind=%d scale=%.9g "
             "scale_device=0x%llx stream=0x%llx struct_size=%s",
        args->name != NULL ? args->name : "(null)", address(args->data), (unsigned long long)args->numel,
        (int)args->dtype, (int)args->target_format, (int)args->role, (int)args->scale_kind, (double)args->scale,
        address(args->scale_device), address(args->stream),
        args->struct_size == sizeof(struct fp8scope_probe_args) ? "ok" : "wrong");
    return env_int("FAKE_FP8SCOPE_STATUS", FP8SCOPE_OK);
}

int fp8scope_step(int64_t step)
{
    log_line("step %lld", (long long)step);
    return env_int("FAKE_FP8SCOPE_STATUS", FP8SCOPE_OK);
}

int fp8scope_step_end(int64_t step, int32_t source)
{
    log_line("step_end %lld source=%d", (long long)step, (int)source);
    if (step < 0 || (source != FP8SCOPE_STEP_END_OPTIMIZER && source != FP8SCOPE_STEP_END_OPTIMIZER_SKIPPED))
        return FP8SCOPE_E_INVALID_ARGUMENT;
    return env_int("FAKE_FP8SCOPE_STATUS", FP8SCOPE_OK);
}

int fp8scope_scalar(const char* name, double value)
{
    log_line("scalar name=%s value=%.17g", name != NULL ? name : "(null)", value);
    return env_int("FAKE_FP8SCOPE_STATUS", FP8SCOPE_OK);
}

int fp8scope_scalar_device(const char* name, const void* device_value, int32_t dtype, void* stream)
{
    log_line("scalar_device name=%s value=0x%llx dtype=%d stream=0x%llx", name != NULL ? name : "(null)",
        address(device_value), (int)dtype, address(stream));
    return env_int("FAKE_FP8SCOPE_STATUS", FP8SCOPE_OK);
}

static void log_operand(char* out, size_t size, const char* name, const struct fp8scope_gemm_operand* op)
{
    snprintf(out, size, "%s=%lldx%lld/%lld,%lld dtype=%d recipe=%d scale=0x%llx %lldx%lld/%lld,%lld", name,
        (long long)op->rows, (long long)op->cols, (long long)op->row_stride, (long long)op->col_stride, op->dtype,
        op->recipe, (unsigned long long)(uintptr_t)op->scale, (long long)op->scale_rows, (long long)op->scale_cols,
        (long long)op->scale_row_stride, (long long)op->scale_col_stride);
}

/* FAKE_FP8SCOPE_SCALED_GEMM_RC: what it returns (default FP8SCOPE_OK; 1 is FP8SCOPE_LIBRARY_GEMM). */
int fp8scope_scaled_gemm(const struct fp8scope_scaled_gemm_args* args)
{
    if (args == NULL) {
        log_line("scaled_gemm NULL");
        return FP8SCOPE_E_INVALID_ARGUMENT;
    }
    char a[160], b[160], d[160];
    log_operand(a, sizeof a, "a", &args->a);
    log_operand(b, sizeof b, "b", &args->b);
    log_operand(d, sizeof d, "d", &args->d);
    char groups[32] = "";
    if (args->struct_size == sizeof(struct fp8scope_scaled_gemm_args) && args->groups != 0)
        snprintf(groups, sizeof groups, " groups=%d", args->groups);
    log_line("scaled_gemm %s %s %s stream=0x%llx size=%s%s", a, b, d, (unsigned long long)(uintptr_t)args->stream,
        args->struct_size == sizeof(struct fp8scope_scaled_gemm_args) ? "ok" : "wrong", groups);
    return env_int("FAKE_FP8SCOPE_SCALED_GEMM_RC", FP8SCOPE_OK);
}

/* FAKE_FP8SCOPE_LIBRARY_GEMM=1: every GEMM was cuBLAS(Lt)'s (default 0). */
int fp8scope_library_gemm(const void* d)
{
    log_line("library_gemm 0x%llx", (unsigned long long)(uintptr_t)d);
    return env_int("FAKE_FP8SCOPE_LIBRARY_GEMM", 0);
}
