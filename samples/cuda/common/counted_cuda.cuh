// Every CUDA call of the samples that a trace shows as an activity (kernel, copy, memset, synchronization, graph
// launch, event record, host function) goes through CountedCuda, which makes the call, checks it and counts it.
// The printed ground truth is therefore what the program executed, not what it meant to execute.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "clock.hpp"
#include "cuda_check.cuh"
#include "json_line.hpp"

namespace fp8scope::samples {

// The NVTX range around each step. "train_step" is one of the names the analyzer's step detection matches
// (SPEC.md, "Step").
inline constexpr const char* kStepRangeName = "train_step";

// Counts by kernel name. The transparent comparator finds a name without building a std::string, which keeps the
// bookkeeping of a launch well below the cost of the launch itself.
using NameCounts = std::map<std::string, std::uint64_t, std::less<>>;

inline void add_count(NameCounts& counts, std::string_view name, std::uint64_t n)
{
    auto found = counts.find(name);
    if (found == counts.end()) {
        found = counts.emplace(std::string(name), 0).first;
    }
    found->second += n;
}

struct CapturedGraph {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    std::uint64_t kernel_nodes = 0; // read from the graph itself
    NameCounts kernels_by_name; // launches recorded during capture
};

class CountedCuda {
public:
    explicit CountedCuda(const char* sample)
        : sample_(sample)
    {
    }

    // Kernels: call right after a <<<>>> launch (FP8SCOPE_LAUNCH does). A launch made while a stream is being
    // captured records a graph node and executes nothing, so it counts as a launch call but not as a kernel.
    void after_launch(const char* kernel_name, cudaStream_t stream, const char* file, int line)
    {
        const cudaError_t error = cudaGetLastError();
        if (error != cudaSuccess) {
            fail_cuda(error, kernel_name, file, line);
        }
        ++kernel_launch_calls_;
        if (capturing_) {
            add_count(capture_tally_, kernel_name, 1);
            return;
        }
        ++kernels_;
        add_count(kernels_by_name_, kernel_name, 1);
        ++kernels_by_stream_[stream];
    }

    void stream_synchronize(cudaStream_t stream)
    {
        FP8SCOPE_CUDA_CHECK(cudaStreamSynchronize(stream));
        ++sync_stream_;
    }
    void device_synchronize()
    {
        FP8SCOPE_CUDA_CHECK(cudaDeviceSynchronize());
        ++sync_device_;
    }
    void event_synchronize(cudaEvent_t event)
    {
        FP8SCOPE_CUDA_CHECK(cudaEventSynchronize(event));
        ++sync_event_;
    }
    // Not host-blocking, but CUPTI reports it in the SYNCHRONIZATION activity kind (STREAM_WAIT_EVENT).
    void stream_wait_event(cudaStream_t stream, cudaEvent_t event)
    {
        FP8SCOPE_CUDA_CHECK(cudaStreamWaitEvent(stream, event, 0));
        ++sync_stream_wait_event_;
    }
    void event_record(cudaEvent_t event, cudaStream_t stream)
    {
        FP8SCOPE_CUDA_CHECK(cudaEventRecord(event, stream));
        ++event_records_;
    }
    void launch_host_func(cudaStream_t stream, cudaHostFn_t function, void* user_data)
    {
        FP8SCOPE_CUDA_CHECK(cudaLaunchHostFunc(stream, function, user_data));
        ++host_funcs_;
    }

    void memcpy_htod(void* device_dst, const void* host_src, std::size_t bytes)
    {
        FP8SCOPE_CUDA_CHECK(cudaMemcpy(device_dst, host_src, bytes, cudaMemcpyHostToDevice));
        ++memcpy_htod_;
    }
    void memcpy_dtoh_blocking(void* host_dst, const void* device_src, std::size_t bytes)
    {
        FP8SCOPE_CUDA_CHECK(cudaMemcpy(host_dst, device_src, bytes, cudaMemcpyDeviceToHost));
        ++memcpy_dtoh_blocking_;
    }
    // host_dst must be pageable (malloc'd): the CUDA Runtime API documentation ("API synchronization behavior")
    // says such a device-to-host cudaMemcpyAsync returns only once the copy has completed.
    void memcpy_dtoh_async_pageable(void* host_dst, const void* device_src, std::size_t bytes, cudaStream_t stream)
    {
        FP8SCOPE_CUDA_CHECK(cudaMemcpyAsync(host_dst, device_src, bytes, cudaMemcpyDeviceToHost, stream));
        ++memcpy_async_pageable_;
    }
    void memset(void* device_dst, int value, std::size_t bytes)
    {
        FP8SCOPE_CUDA_CHECK(cudaMemset(device_dst, value, bytes));
        ++memsets_;
    }

    void begin_capture(cudaStream_t stream)
    {
        FP8SCOPE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        capturing_ = true;
        capture_tally_.clear();
    }
    // Ends the capture, instantiates the graph and checks that it holds one kernel node per captured launch.
    CapturedGraph end_capture(cudaStream_t stream)
    {
        CapturedGraph captured;
        FP8SCOPE_CUDA_CHECK(cudaStreamEndCapture(stream, &captured.graph));
        capturing_ = false;
        std::size_t node_count = 0;
        FP8SCOPE_CUDA_CHECK(cudaGraphGetNodes(captured.graph, nullptr, &node_count));
        std::vector<cudaGraphNode_t> nodes(node_count);
        FP8SCOPE_CUDA_CHECK(cudaGraphGetNodes(captured.graph, nodes.data(), &node_count));
        for (cudaGraphNode_t node : nodes) {
            cudaGraphNodeType type {};
            FP8SCOPE_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
            if (type == cudaGraphNodeTypeKernel) {
                ++captured.kernel_nodes;
            }
        }
        captured.kernels_by_name = capture_tally_;
        std::uint64_t captured_launches = 0;
        for (const auto& [name, count] : capture_tally_) {
            captured_launches += count;
        }
        if (captured.kernel_nodes != captured_launches) {
            std::fprintf(stderr, "%s: the graph has %" PRIu64 " kernel nodes but %" PRIu64 " launches were captured\n",
                sample_, captured.kernel_nodes, captured_launches);
            std::exit(kExitFailure);
        }
        FP8SCOPE_CUDA_CHECK(cudaGraphInstantiate(&captured.exec, captured.graph, 0));
        return captured;
    }
    // Every kernel node of the graph executes once per launch.
    void graph_launch(const CapturedGraph& captured, cudaStream_t stream)
    {
        FP8SCOPE_CUDA_CHECK(cudaGraphLaunch(captured.exec, stream));
        ++graph_launches_;
        kernels_ += captured.kernel_nodes;
        kernels_by_stream_[stream] += captured.kernel_nodes;
        for (const auto& [name, count] : captured.kernels_by_name) {
            add_count(kernels_by_name_, name, count);
        }
    }

    // Steps: an NVTX range named kStepRangeName, with CLOCK_REALTIME bounds taken just outside it.
    void begin_step()
    {
        step_start_ns_ = realtime_ns();
        nvtxRangePushA(kStepRangeName);
        ++nvtx_ranges_;
    }
    void end_step()
    {
        nvtxRangePop();
        steps_.push_back({ step_start_ns_, realtime_ns() });
    }

    std::uint64_t kernels() const { return kernels_; }
    std::uint64_t kernels_on(cudaStream_t stream) const
    {
        const auto found = kernels_by_stream_.find(stream);
        return found == kernels_by_stream_.end() ? 0 : found->second;
    }
    std::uint64_t host_funcs() const { return host_funcs_; }
    const std::vector<HostInterval>& steps() const { return steps_; }

    void print_summary() const
    {
        std::printf("%s: %" PRIu64 " kernels executed (%" PRIu64 " launch calls, %" PRIu64 " graph launches), %zu "
                    "steps\n",
            sample_, kernels_, kernel_launch_calls_, graph_launches_, steps_.size());
        for (const auto& [name, count] : kernels_by_name_) {
            std::printf("  kernel %-16s %" PRIu64 "\n", name.c_str(), count);
        }
        std::printf("  syncs: stream %" PRIu64 ", device %" PRIu64 ", event %" PRIu64 ", stream-wait-event %" PRIu64
                    "\n",
            sync_stream_, sync_device_, sync_event_, sync_stream_wait_event_);
        std::printf("  memcpy: htod %" PRIu64 ", dtoh blocking %" PRIu64 ", async to pageable %" PRIu64
                    "; memset %" PRIu64 "\n",
            memcpy_htod_, memcpy_dtoh_blocking_, memcpy_async_pageable_, memsets_);
        std::printf("  event records %" PRIu64 ", host functions %" PRIu64 "\n", event_records_, host_funcs_);
    }

    // The fields every sample prints; the sample then adds its own and calls print_ground_truth().
    void write_common(JsonLine& json) const
    {
        json.field("sample", sample_);
        json.field("kernels", kernels_);
        json.field("kernel_launch_calls", kernel_launch_calls_);
        json.field("graph_launches", graph_launches_);
        json.key("kernels_by_name").begin_object();
        for (const auto& [name, count] : kernels_by_name_) {
            json.field(name, count);
        }
        json.end_object();
        json.field("steps", static_cast<std::uint64_t>(steps_.size()));
        json.field("nvtx_ranges", nvtx_ranges_);
        json.field("nvtx_step_range", kStepRangeName);
        json.key("step_ns").begin_array();
        for (const HostInterval& step : steps_) {
            json.begin_array().value(step.start_ns).value(step.end_ns).end_array();
        }
        json.end_array();
        json.key("syncs").begin_object();
        json.field("stream", sync_stream_).field("device", sync_device_).field("event", sync_event_);
        json.field("stream_wait_event", sync_stream_wait_event_);
        json.end_object();
        json.key("memcpy").begin_object();
        json.field("htod", memcpy_htod_).field("dtoh_blocking", memcpy_dtoh_blocking_);
        json.field("async_pageable", memcpy_async_pageable_);
        json.end_object();
        json.field("memset", memsets_);
        json.field("event_records", event_records_);
        json.field("host_funcs", host_funcs_);
    }

private:
    const char* sample_;
    bool capturing_ = false;
    NameCounts capture_tally_;
    std::uint64_t kernels_ = 0;
    std::uint64_t kernel_launch_calls_ = 0;
    std::uint64_t graph_launches_ = 0;
    NameCounts kernels_by_name_;
    std::map<cudaStream_t, std::uint64_t> kernels_by_stream_;
    std::uint64_t sync_stream_ = 0;
    std::uint64_t sync_device_ = 0;
    std::uint64_t sync_event_ = 0;
    std::uint64_t sync_stream_wait_event_ = 0;
    std::uint64_t event_records_ = 0;
    std::uint64_t host_funcs_ = 0;
    std::uint64_t memcpy_htod_ = 0;
    std::uint64_t memcpy_dtoh_blocking_ = 0;
    std::uint64_t memcpy_async_pageable_ = 0;
    std::uint64_t memsets_ = 0;
    std::uint64_t nvtx_ranges_ = 0;
    std::int64_t step_start_ns_ = 0;
    std::vector<HostInterval> steps_;
};

} // namespace fp8scope::samples

// Launches kernel<<<1, 1, 0, stream>>>(args...), checks the launch and counts it under the kernel's own name.
#define FP8SCOPE_LAUNCH(cuda, kernel, stream, ...)                                                                     \
    do {                                                                                                               \
        kernel<<<1, 1, 0, (stream)>>>(__VA_ARGS__);                                                                    \
        (cuda).after_launch(#kernel, (stream), __FILE__, __LINE__);                                                    \
    } while (false)
