// What the writer does when the disk fills (docs/reliability.md "The collector under faults"): a little space held in
// reserve for the closing transaction, and the limit RLIMIT_FSIZE puts on the trace's files. Used by trace_db*.cpp
// only.
#pragma once

#include <cstdint>
#include <string>

namespace fp8scope::writer_detail {

// Bytes kept back for the transaction that finishes a trace after a storage error: the FP8SCOPE_DROPPED row that
// records the loss, and the closing meta (finished, row counts). That transaction is a handful of 4 KiB pages
// (about 6 WAL frames of 4,120 bytes); 256 KiB leaves room for ten times that.
constexpr int64_t kReserveBytes = 256 << 10;

// Disk space held, on the trace's file system, by a file with no name: it is never left behind, not even by a
// process that is killed. release() gives the space back to the file system, for the closing transaction. A child
// made by fork() closes its copy of the descriptor at once (a pthread_atfork handler): DataLoader workers that live
// as long as the job would otherwise keep the space from being given back.
class SpaceReserve {
public:
    SpaceReserve() = default;
    // Holds `bytes` in the directory of `trace_path`. Holds nothing (held() false) where the space cannot be had:
    // a disk already full, a file system without unnamed files or fallocate, a file size limit below `bytes`.
    static SpaceReserve hold(const std::string& trace_path, int64_t bytes);
    SpaceReserve(SpaceReserve&& other) noexcept;
    SpaceReserve& operator=(SpaceReserve&& other) noexcept;
    SpaceReserve(const SpaceReserve&) = delete;
    SpaceReserve& operator=(const SpaceReserve&) = delete;
    ~SpaceReserve() { release(); }

    bool held() const { return fd_ >= 0; }
    int descriptor() const { return fd_; } // -1 when none is held
    // The bytes the file system gave the reserve (st_blocks), 0 when none is held.
    int64_t allocated_bytes() const;
    void release();

private:
    int fd_ = -1;
    int owner_pid_ = 0; // the process that holds it: a forked child's copy closed with the fork, not again
};

// RLIMIT_FSIZE's soft limit in bytes, or INT64_MAX when there is none.
int64_t file_size_limit();

} // namespace fp8scope::writer_detail
