// Writing a Chrome trace (Trace Event Format JSON) as a stream: events are appended to a buffer as they are made and
// the buffer goes to the file in blocks of a megabyte, so that exporting a 10 M-kernel trace never holds the document
// in memory (`fp8scope export`, docs/cli.md). Field names and layout follow what Kineto writes
// (libkineto/src/output_json.cpp): "ts" and "dur" in microseconds with the nanoseconds as three decimals.
#pragma once

#include <fmt/format.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace fp8scope::cli {

// The file an export is written to: a temporary file next to `path`, renamed onto it by commit(), so that a failed or
// interrupted export never leaves a truncated trace under the name asked for. Compressed with zlib's gzip when `path`
// ends in ".gz".
class ChromeTraceFile {
public:
    explicit ChromeTraceFile(std::string path);
    ~ChromeTraceFile(); // removes the temporary file unless commit() succeeded
    ChromeTraceFile(const ChromeTraceFile&) = delete;
    ChromeTraceFile& operator=(const ChromeTraceFile&) = delete;

    // One line saying why the file could not be opened or written ("cannot write 'x.json': No space left on
    // device"); nullopt while all is well.
    const std::optional<std::string>& error() const { return error_; }
    bool gzip() const { return gzip_; }

    fmt::memory_buffer& buffer() { return buffer_; }
    // Writes the buffer out once it holds a megabyte or more.
    void maybe_flush()
    {
        if (buffer_.size() >= kFlushBytes) [[unlikely]]
            flush();
    }
    // Writes what is left, closes the file and renames it onto `path`; false (with error()) when any of it failed.
    bool commit();

private:
    static constexpr size_t kFlushBytes = size_t { 1 } << 20;
    // Hands the buffer to the writer thread, after waiting for it to finish the previous block: formatting and
    // compressing (or the write calls) run on two cores, with two blocks of memory at most.
    void flush();
    void writer_loop();
    void write_block(); // on the writer thread
    void stop_writer();
    void fail(std::string_view what, int error_number);

    std::string path_, temp_path_;
    int fd_ = -1;
    void* gz_ = nullptr; // gzFile
    bool committed_ = false;
    bool gzip_ = false;
    fmt::memory_buffer buffer_; // being filled by the caller
    fmt::memory_buffer block_; // being written by the writer thread while block_ready_
    std::mutex mutex_;
    std::condition_variable block_changed_;
    bool block_ready_ = false, stopping_ = false;
    int write_errno_ = 0; // the writer thread's first failure; read once it has stopped
    std::thread writer_;
    std::optional<std::string> error_;
};

// The events of one trace, written to a ChromeTraceFile. Times are ns since the session start; they are written
// relative to `base_ns` (the header's baseTimeNanoseconds is the UTC time of that instant).
class ChromeTraceEvents {
public:
    ChromeTraceEvents(ChromeTraceFile& file, int64_t base_ns)
        : file_(file)
        , out_(file.buffer())
        , base_ns_(base_ns)
    {
    }

    // {"ph":"X", ...: a complete slice; add args, then end().
    void begin_complete(
        std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns);
    // {"ph":"i", ... "s":"t": an instant on a thread; add args, then end().
    void begin_instant(std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t at_ns);
    // {"ph":"C", ...: one value of the counter track `name` of process `pid`, as its series "value"; a value that is
    // not finite is not written (JSON has no NaN or Inf) and false is returned.
    bool counter(std::string_view name, int64_t pid, int64_t at_ns, double value);
    // A flow event of Kineto's "ac2g" flows (launch to GPU work): ph 's' at the launching call, 'f' with "bp":"e"
    // (binding to the enclosing slice) at the GPU work.
    void flow(char phase, uint64_t id, int64_t pid, int64_t tid, int64_t at_ns);
    // {"ph":"M","name":<kind>, ... "args":{<key>:<value>}}: process_name, thread_name, process_labels, *_sort_index.
    void metadata(std::string_view kind, int64_t pid, int64_t tid, std::string_view key, std::string_view value);
    void metadata(std::string_view kind, int64_t pid, int64_t tid, std::string_view key, int64_t value);

    void arg(std::string_view key, std::string_view value);
    void arg(std::string_view key, int64_t value);
    void arg_number(std::string_view key, double value); // null when not finite
    void end(); // closes the args and the event

    int64_t events() const { return events_; }

private:
    void open_event(std::string_view phase);
    void key(std::string_view name);
    void time(int64_t t_ns);

    ChromeTraceFile& file_;
    fmt::memory_buffer& out_;
    int64_t base_ns_ = 0;
    int64_t events_ = 0;
    bool first_arg_ = true;
};

// Appends `text` as a JSON string, quoted and escaped (the model's strings are valid UTF-8: the loader makes them so).
void append_json_string(fmt::memory_buffer& out, std::string_view text);
// Appends a duration or time in ns as microseconds with three decimals ("1010.500"), Kineto's fmtTs; negative
// values keep their sign ("-0.250").
void append_microseconds(fmt::memory_buffer& out, int64_t ns);

} // namespace fp8scope::cli
